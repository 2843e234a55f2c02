"""Seed 002: the Function interface (forward/backward with ctx) and applying it."""
import arraygrad as torch


class MyFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input):
        # Save tensors needed for backward
        ctx.save_for_backward(input)
        # Compute and return output
        return input.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        # Retrieve saved tensors
        input, = ctx.saved_tensors
        # Compute gradient: d(clamp)/d(input)
        grad_input = grad_output * (input > 0).float()
        return grad_input


# Create an alias for convenience
my_relu = MyFunction.apply

x = torch.randn(5, requires_grad=True)
y = my_relu(x)
loss = y.sum()
loss.backward()

print(f"x:      {x.data}")
print(f"x.grad: {x.grad}")
