"""Seed 002, Example 1: the straight-through estimator."""
import arraygrad as torch


class StraightThroughEstimator(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        """Binarize: output is 0 or 1."""
        return (x > 0).float()

    @staticmethod
    def backward(ctx, grad_output):
        """Pass gradient through unchanged (identity)."""
        return grad_output


ste_binarize = StraightThroughEstimator.apply

x = torch.tensor([-0.5, 0.3, 1.2, -0.1], requires_grad=True)
y = ste_binarize(x)
loss = y.sum()
loss.backward()

print(f"x:      {x.data}")
print(f"y:      {y.data}")        # [0, 1, 1, 0]
print(f"x.grad: {x.grad}")       # [1, 1, 1, 1] — gradient passes through
