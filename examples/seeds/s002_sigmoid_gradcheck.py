"""Seed 002: MySigmoid verified with gradcheck and gradgradcheck."""
import arraygrad as torch
from arraygrad.autograd import gradcheck
from arraygrad.autograd import gradgradcheck


class MySigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        sigmoid = 1 / (1 + torch.exp(-x))
        ctx.save_for_backward(sigmoid)
        return sigmoid

    @staticmethod
    def backward(ctx, grad_output):
        sigmoid, = ctx.saved_tensors
        # σ'(x) = σ(x)(1 - σ(x))
        return grad_output * sigmoid * (1 - sigmoid)


# Test with double precision for numerical accuracy
x = torch.randn(5, dtype=torch.double, requires_grad=True)
result = gradcheck(MySigmoid.apply, (x,), eps=1e-6, atol=1e-4)
print(f"Gradient check passed: {result}")

x = torch.randn(3, dtype=torch.double, requires_grad=True)
result2 = gradgradcheck(MySigmoid.apply, (x,))
print(f"Second-order gradient check passed: {result2}")
