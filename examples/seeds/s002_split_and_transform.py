"""Seed 002, Example 4: a Function with two outputs; backward gets one grad per output."""
import arraygrad as torch


class SplitAndTransform(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        """Split x into positive and negative parts."""
        ctx.save_for_backward(x)
        pos = torch.relu(x)
        neg = torch.relu(-x)
        return pos, neg

    @staticmethod
    def backward(ctx, grad_pos, grad_neg):
        """Backward receives one gradient per output."""
        x, = ctx.saved_tensors
        mask_pos = (x > 0).float()
        mask_neg = (x < 0).float()
        grad_x = grad_pos * mask_pos - grad_neg * mask_neg
        return grad_x


x = torch.tensor([-2., -1., 0., 1., 2.], requires_grad=True)
pos, neg = SplitAndTransform.apply(x)

loss = pos.sum() + neg.sum()
loss.backward()
print(f"x:      {x.data}")
print(f"x.grad: {x.grad}")  # [-1, -1, 0, 1, 1]
