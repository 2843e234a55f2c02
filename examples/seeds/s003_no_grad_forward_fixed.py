"""Seed 003, Example 3 fixed: the gradient of sum(relu(x)) has the input's shape."""
import arraygrad as torch
import arraygrad.autograd as autograd


class MyComplexFunction(autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        with torch.no_grad():
            z = x.clone()
            z[z < 0] = 0  # Non-differentiable operation
            result = torch.sum(z)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return grad_output.expand_as(x) * (x > 0).to(grad_output.dtype)


x = torch.tensor([-1.0, 2.0, -3.0, 4.0, 0.5], requires_grad=True)
y = MyComplexFunction.apply(x)
y.backward(torch.tensor(1.0))
print(x.grad)    # [0, 1, 0, 1, 1]
