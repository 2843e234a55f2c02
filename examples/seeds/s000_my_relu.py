"""Seed 000/001 (C++ docs), MyReLU: save_for_backward + get_saved_variables, in Python."""
import arraygrad as torch


class MyReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return input.clamp_min(0)

    @staticmethod
    def backward(ctx, grad_output):
        saved = ctx.get_saved_variables()
        input = saved[0]
        grad_input = grad_output * (input > 0).to(grad_output.dtype)
        return grad_input


input = torch.tensor([-1.0, 0.5, 2.0], requires_grad=True)
output = MyReLU.apply(input)
output.sum().backward()
print(output, input.grad)
