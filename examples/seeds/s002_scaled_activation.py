"""Seed 002: ScaledActivation, None gradients for non-differentiable arguments."""
import arraygrad as torch
from arraygrad.autograd import gradcheck


class ScaledActivation(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale, use_relu):
        """Apply scaled activation. scale and use_relu are not differentiable."""
        ctx.save_for_backward(x)
        ctx.scale = scale
        ctx.use_relu = use_relu
        out = torch.relu(x) if use_relu else torch.tanh(x)
        return scale * out

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        if ctx.use_relu:
            grad_x = grad_output * ctx.scale * (x > 0).float()
        else:
            grad_x = grad_output * ctx.scale * (1 - torch.tanh(x) ** 2)
        return grad_x, None, None  # None for scale and use_relu


x = torch.randn(5, dtype=torch.double, requires_grad=True)
ok_tanh = gradcheck(lambda t: ScaledActivation.apply(t, 2.5, False), (x,))
x_relu = torch.tensor([-1.0, 0.5, 2.0], requires_grad=True)
ScaledActivation.apply(x_relu, 2.0, True).sum().backward()
print(ok_tanh, x_relu.grad)    # True tensor([0., 2., 2.])
