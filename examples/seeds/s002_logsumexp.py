"""Seed 002, Example 2: numerically stable log-sum-exp, checked against the built-in."""
import arraygrad as torch
from arraygrad.autograd import gradcheck


class StableLogSumExp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        """Compute log(sum(exp(x))) with numerical stability."""
        c = x.max()  # Shift for stability
        exp_shifted = torch.exp(x - c)
        sum_exp = exp_shifted.sum()
        ctx.save_for_backward(exp_shifted)
        ctx.sum_exp = sum_exp
        return c + torch.log(sum_exp)

    @staticmethod
    def backward(ctx, grad_output):
        """d/dx_i log(sum(exp(x))) = exp(x_i) / sum(exp(x)) = softmax(x)_i"""
        exp_shifted, = ctx.saved_tensors
        softmax = exp_shifted / ctx.sum_exp
        return grad_output * softmax


# Verify
x = torch.randn(5, dtype=torch.double, requires_grad=True)
assert gradcheck(StableLogSumExp.apply, (x,))

# Compare with built-in
x_float = x.float().detach().requires_grad_(True)
custom = StableLogSumExp.apply(x_float)
builtin = torch.logsumexp(x_float.detach().requires_grad_(True), dim=0)
print(f"Custom:  {custom.item():.6f}")
print(f"Built-in: {builtin.item():.6f}")
