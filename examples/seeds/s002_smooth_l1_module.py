"""Seed 002: a custom Function wrapped in an nn.Module (SmoothL1Loss)."""
import arraygrad as torch
import arraygrad.nn as nn


class SmoothL1Function(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, beta):
        ctx.save_for_backward(x)
        ctx.beta = beta
        abs_x = x.abs()
        out = torch.where(abs_x < beta, 0.5 * x**2 / beta, abs_x - 0.5 * beta)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        beta = ctx.beta
        abs_x = x.abs()
        grad_x = torch.where(abs_x < beta, x / beta, x.sign())
        return grad_output * grad_x, None


class SmoothL1Loss(nn.Module):
    def __init__(self, beta=1.0):
        super().__init__()
        self.beta = beta

    def forward(self, prediction, target):
        diff = prediction - target
        return SmoothL1Function.apply(diff, self.beta).mean()


# Usage in a model
criterion = SmoothL1Loss(beta=0.5)
pred = torch.randn(10, requires_grad=True)
target = torch.randn(10)
loss = criterion(pred, target)
loss.backward()
print(loss, pred.grad)
