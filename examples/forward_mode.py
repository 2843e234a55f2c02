"""Forward-mode AD with arraygrad: dual tensors, func.jvp, jacfwd, hessian.

Runs unchanged with `import torch` except for the two parts marked
"beyond PyTorch" (nested dual levels, and nested jacfwd through a Function).
"""
import arraygrad as torch
import arraygrad.autograd.forward_ad as fwAD
from arraygrad.func import jvp, jacfwd, jacrev, hessian

x = torch.tensor([0.5, 1.0, 2.0], dtype=torch.float64)
v = torch.tensor([1.0, 0.0, -1.0], dtype=torch.float64)


def f(x):
    return torch.sin(x) * x.sum()


# Dual tensors: the tangent rides along with the value.
with fwAD.dual_level():
    y = f(fwAD.make_dual(x, v))
    print(y)                                   # tensor([...], tangent=tensor([...]))
    value, tangent = fwAD.unpack_dual(y)

# The same with the functional API, and the full Jacobian column by column.
out, jv = jvp(f, (x,), (v,))
assert torch.allclose(jv, tangent)
J = jacfwd(f)(x)
assert torch.allclose(J @ v, jv)

# Hessians: forward over reverse.
H = hessian(lambda x: (x ** 3).sum())(x)
assert torch.allclose(H, torch.diag(6 * x))
assert torch.allclose(jacfwd(jacrev(lambda x: (x ** 3).sum()))(x), H)

# Beyond PyTorch: dual levels nest, each its own level, for higher derivatives.
with fwAD.dual_level():
    a = fwAD.make_dual(x, torch.ones_like(x))
    with fwAD.dual_level():
        _, d1 = fwAD.unpack_dual(torch.sin(fwAD.make_dual(a, torch.ones_like(x))))
    first, second = fwAD.unpack_dual(d1)
assert torch.allclose(first, torch.cos(x)) and torch.allclose(second, -torch.sin(x))


# Beyond PyTorch: nested jacfwd through a custom Function with a jvp staticmethod.
class Square(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return x ** 2

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, = inputs
        ctx.save_for_backward(x)
        ctx.save_for_forward(x)

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return 2 * x * g

    @staticmethod
    def jvp(ctx, t):
        x, = ctx.saved_tensors
        return 2 * x * t


def g(x):
    return Square.apply(Square.apply(x)).sum()     # x ** 4


x0 = torch.tensor(3.0, dtype=torch.float64)
derivs = [jacfwd(g)(x0), jacfwd(jacfwd(g))(x0), jacfwd(jacfwd(jacfwd(g)))(x0)]
print([d.item() for d in derivs])                 # [108.0, 108.0, 72.0] (torch 2.13: 108, 0, 0)
assert [d.item() for d in derivs] == [108.0, 108.0, 72.0]
