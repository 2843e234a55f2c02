"""Seed 003, Example 1: a custom exponential."""
import arraygrad as torch
import arraygrad.autograd as autograd


class MyExp(autograd.Function):
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return torch.exp(input)

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        return grad_output * torch.exp(input)


x = torch.randn(3, requires_grad=True)
y = MyExp.apply(x)
y.backward(torch.ones_like(y))
print(x.grad)
