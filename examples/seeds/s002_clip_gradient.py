"""Seed 002, Example 3: a Function that clips the gradient in backward."""
import arraygrad as torch


class ClipGradient(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, clip_value):
        """Forward pass is identity; backward clips the gradient."""
        ctx.clip_value = clip_value
        return x.clone()

    @staticmethod
    def backward(ctx, grad_output):
        """Clip gradient to [-clip_value, clip_value]."""
        clipped = grad_output.clamp(-ctx.clip_value, ctx.clip_value)
        return clipped, None


clip_grad = ClipGradient.apply

x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = clip_grad(x, 0.5)
loss = (y ** 2).sum()   # d(loss)/dx = 2x = [2, 4, 6]
loss.backward()

print(f"x.grad (clipped to ±0.5): {x.grad}")  # [0.5, 0.5, 0.5]
