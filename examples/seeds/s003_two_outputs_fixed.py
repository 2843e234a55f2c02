"""Seed 003, Example 2 fixed: keep the graph for the second backward."""
import arraygrad as torch
import arraygrad.autograd as autograd


class MyCustomFunction(autograd.Function):
    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return x * x + y * y, x * y

    @staticmethod
    def backward(ctx, grad_output1, grad_output2):
        x, y = ctx.saved_tensors
        grad_x = 2 * x * grad_output1 + y * grad_output2
        grad_y = 2 * y * grad_output1 + x * grad_output2
        return grad_x, grad_y


x = torch.randn(3, requires_grad=True)
y = torch.randn(3, requires_grad=True)
output1, output2 = MyCustomFunction.apply(x, y)
output1.backward(torch.ones_like(output1), retain_graph=True)
output2.backward(torch.ones_like(output2))
print(x.grad, y.grad)    # 2x + y, 2y + x
