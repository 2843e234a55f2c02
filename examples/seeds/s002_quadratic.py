"""Seed 002: QuadraticFunction, several tensor inputs saved with save_for_backward."""
import arraygrad as torch
from arraygrad.autograd import gradcheck


class QuadraticFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, a, b, c):
        """Compute y = ax² + bx + c"""
        ctx.save_for_backward(x, a, b)
        return a * x ** 2 + b * x + c

    @staticmethod
    def backward(ctx, grad_output):
        """dy/dx = 2ax + b, dy/da = x², dy/db = x, dy/dc = 1"""
        x, a, b = ctx.saved_tensors
        grad_x = grad_output * (2 * a * x + b)
        grad_a = grad_output * x ** 2
        grad_b = grad_output * x
        grad_c = grad_output  # dy/dc = 1
        return grad_x, grad_a, grad_b, grad_c


inputs = tuple(torch.randn(4, dtype=torch.double, requires_grad=True) for _ in range(4))
ok = gradcheck(QuadraticFunction.apply, inputs)
print(f"Gradient check passed: {ok}")
