"""Seed 003, Example 3, as written: backward returns the scalar grad_output for a
vector input. Like PyTorch this raises "returned an invalid gradient at index 0 -
got [] but expected shape compatible with [5]"; s003_no_grad_forward_fixed.py
expands the gradient to the input's shape."""
import arraygrad as torch
import arraygrad.autograd as autograd


class MyComplexFunction(autograd.Function):
    @staticmethod
    def forward(ctx, x):
        with torch.no_grad():
            z = x.clone()
            z[z < 0] = 0  # Non-differentiable operation
            result = torch.sum(z)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        # Gradient only calculated for the differentiable part of the forward pass
        return grad_output


x = torch.randn(5, requires_grad=True)
y = MyComplexFunction.apply(x)
y.backward(torch.tensor(1.0))
print(x.grad)
