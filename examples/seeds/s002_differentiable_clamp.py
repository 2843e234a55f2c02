"""Seed 002: DifferentiableClamp, a backward made of differentiable ops (create_graph=True)."""
import arraygrad as torch
from arraygrad.autograd import gradgradcheck


class DifferentiableClamp(torch.autograd.Function):
    """Clamp with straight-through gradient, supporting higher-order derivatives."""
    @staticmethod
    def forward(ctx, x, min_val, max_val):
        ctx.save_for_backward(x)
        ctx.min_val = min_val
        ctx.max_val = max_val
        return x.clamp(min_val, max_val)

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        # Use differentiable operations so higher-order grads work
        mask = ((x >= ctx.min_val) & (x <= ctx.max_val)).float()
        return grad_output * mask, None, None


x = torch.tensor([-2.0, -0.5, 0.5, 2.0], requires_grad=True)
y = DifferentiableClamp.apply(x, -1.0, 1.0)
(g,) = torch.autograd.grad((y ** 2).sum(), x, create_graph=True)   # 2 y * mask
(gg,) = torch.autograd.grad(g.sum(), x)                            # 2 * mask
print(g, gg)     # [0, -1, 1, 0]  [0, 2, 2, 0]
xd = torch.tensor([-2.0, -0.5, 0.5, 2.0], dtype=torch.double, requires_grad=True)
ok = gradgradcheck(lambda t: DifferentiableClamp.apply(t, -1.0, 1.0) ** 2, (xd,))
print(f"Second-order gradient check passed: {ok}")
