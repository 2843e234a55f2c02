"""Seed 002: PowerFunction, a non-tensor argument kept as a ctx attribute."""
import arraygrad as torch
from arraygrad.autograd import gradcheck


class PowerFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, exponent):
        """Compute x^n where n is a Python int."""
        ctx.save_for_backward(x)
        ctx.exponent = exponent    # Non-tensor: store as attribute
        return x ** exponent

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        n = ctx.exponent
        # d(x^n)/dx = n·x^(n-1)
        grad_x = grad_output * n * x ** (n - 1)
        return grad_x, None   # None for non-differentiable exponent


x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
PowerFunction.apply(x, 3).sum().backward()
print(f"x.grad: {x.grad}")     # 3 x^2 = [3, 12, 27]
ok = gradcheck(lambda t: PowerFunction.apply(t, 3), (torch.randn(4, dtype=torch.double,
                                                                 requires_grad=True),))
print(f"Gradient check passed: {ok}")
