"""Seed 000/001 (C++ docs), MyFunction: saved_data and mark_dirty on an in-place forward."""
import arraygrad as torch


class MyFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, n, var):
        # Save data for backward in context
        ctx.saved_data["n"] = n
        var.mul_(n)
        # Mark var as modified by inplace operation
        ctx.mark_dirty(var)
        return (var,)

    @staticmethod
    def backward(ctx, grad_output):
        # Use data saved in forward
        n = ctx.saved_data["n"]
        return None, grad_output * n


leaf = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
x = leaf * 1          # not a leaf: it can be modified in place
y = MyFunction.apply(6, x)
# Example backward call
y[0].sum().backward()
print(y[0], leaf.grad)
