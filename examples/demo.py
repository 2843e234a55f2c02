"""arraygrad in one page: a custom autograd.Function, plain autograd, torch.func, a tiny model.

    python examples/demo.py

Every line below is PyTorch code; only the import differs.
"""
import arraygrad as torch
import arraygrad.nn as nn
import arraygrad.nn.functional as F

torch.manual_seed(0)


# 1. A custom Function, as in the seeds: forward saves what backward needs.
class SmoothL1Function(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, beta):
        ctx.save_for_backward(x)
        ctx.beta = beta
        abs_x = x.abs()
        return torch.where(abs_x < beta, 0.5 * x ** 2 / beta, abs_x - 0.5 * beta)

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        grad_x = torch.where(x.abs() < ctx.beta, x / ctx.beta, x.sign())
        return grad_output * grad_x, None    # no gradient for beta


x = torch.tensor([-2.0, -0.3, 0.0, 0.4, 3.0], requires_grad=True)
y = SmoothL1Function.apply(x, 1.0)
y.sum().backward()
print("x                      ", x.detach())
print("smooth_l1(x)           ", y.detach(), y.grad_fn)
print("d/dx (custom backward) ", x.grad)
x.grad = None
F.smooth_l1_loss(x, torch.zeros(5), reduction="sum").backward()
print("d/dx (built-in ops)    ", x.grad)

# 2. Higher-order gradients: differentiate the gradient again.
t = torch.tensor(0.5, requires_grad=True)
dy, = torch.autograd.grad(torch.tanh(t) ** 2, t, create_graph=True)
d2y, = torch.autograd.grad(dy, t)
print(f"\nd/dt tanh(t)^2 = {dy.item():.6f}, d2/dt2 = {d2y.item():.6f} at t = 0.5")

# 3. torch.func: gradients and per-example gradients as functions.
w = torch.randn(3)
xs = torch.randn(4, 3)
loss = lambda w, x: torch.tanh(x @ w) ** 2
print("\nfunc.grad(loss)(w, x0)          ", torch.func.grad(loss)(w, xs[0]))
per_example = torch.func.vmap(torch.func.grad(loss), in_dims=(None, 0))(w, xs)
print("vmap(grad(loss)) per example:\n", per_example)


# 4. A module using the custom Function, trained a few steps.
class SmoothL1Loss(nn.Module):
    def __init__(self, beta=1.0):
        super().__init__()
        self.beta = beta

    def forward(self, prediction, target):
        return SmoothL1Function.apply(prediction - target, self.beta).mean()


model = nn.Sequential(nn.Linear(3, 16), nn.Tanh(), nn.Linear(16, 1))
opt = torch.optim.Adam(model.parameters(), lr=0.05)
criterion = SmoothL1Loss(beta=0.5)
inputs = torch.randn(64, 3)
targets = (inputs ** 2).sum(1, keepdim=True)
for step in range(101):
    opt.zero_grad()
    loss = criterion(model(inputs), targets)
    loss.backward()
    opt.step()
    if step % 25 == 0:
        print(f"step {step:3d}  loss {loss.item():.4f}")
