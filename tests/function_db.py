"""The catalogue of custom Functions (like torch's autograd_function_db): Functions that several
test files use live here. test_function_db.py runs every transform test over `DB`;
test_check_function.py checks them with check_function."""
import numpy as np

import arraygrad as ag
from arraygrad.autograd import Function


class NumpyCube(Function):
    """Forward in NumPy, returns an intermediate; backward and jvp in arraygrad ops."""

    @staticmethod
    def forward(x):
        a = x.detach().numpy()
        return ag.tensor(a ** 3), ag.tensor(3 * a ** 2)

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, = inputs
        _, dx = output
        ctx.save_for_backward(x, dx)
        ctx.save_for_forward(x, dx)

    @staticmethod
    def backward(ctx, g, g_dx):
        x, dx = ctx.saved_tensors
        return g * dx + g_dx * 6 * x

    @staticmethod
    def jvp(ctx, t):
        x, dx = ctx.saved_tensors
        return dx * t, 6 * x * t

    @staticmethod
    def vmap(info, in_dims, x):
        return NumpyCube.apply(x), (in_dims[0], in_dims[0])


class ExpSavesOutput(Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return x.exp()

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)

    @staticmethod
    def backward(ctx, g):
        y, = ctx.saved_tensors
        return g * y


class MulScaled(Function):
    """Two tensor inputs and a Python number; jvp derived from backward."""
    generate_vmap_rule = True

    @staticmethod
    def forward(x, y, k):
        return x * y * k

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, y, k = inputs
        ctx.save_for_backward(x, y)
        ctx.k = k

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        return g * y * ctx.k, g * x * ctx.k, None


class SoftmaxRows(Function):
    """A reduction inside: softmax over the last dim, saved output."""
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        e = (x - x.amax(-1, keepdim=True)).exp()
        return e / e.sum(-1, keepdim=True)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)
        ctx.save_for_forward(output)

    @staticmethod
    def backward(ctx, g):
        s, = ctx.saved_tensors
        return s * (g - (g * s).sum(-1, keepdim=True))

    @staticmethod
    def jvp(ctx, t):
        s, = ctx.saved_tensors
        return s * (t - (t * s).sum(-1, keepdim=True))


class SortWithIndices(Function):
    """Integer, non-differentiable outputs; a backward that is another Function."""

    @staticmethod
    def forward(x):
        a = x.detach().numpy()
        ind = np.argsort(a, axis=-1)
        return ag.tensor(np.take_along_axis(a, ind, -1)), ag.tensor(ind)

    @staticmethod
    def setup_context(ctx, inputs, output):
        _, ind = output
        ctx.mark_non_differentiable(ind)
        ctx.save_for_backward(ind)

    @staticmethod
    def backward(ctx, g, _):
        ind, = ctx.saved_tensors
        return ScatterBack.apply(g, ind)

    @staticmethod
    def vmap(info, in_dims, x):
        return SortWithIndices.apply(x.movedim(in_dims[0], 0)), (0, 0)


class ScatterBack(Function):
    """g placed back at positions ind along the last dim (the inverse of a sort)."""
    generate_vmap_rule = True

    @staticmethod
    def forward(g, ind):
        return ag.zeros_like(g).scatter_add(-1, ind, g)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[1])

    @staticmethod
    def backward(ctx, gg):
        ind, = ctx.saved_tensors
        return gg.gather(-1, ind), None


def _sample(*shape, seed=0):
    a = np.random.default_rng(seed).uniform(-1, 1, shape)
    return ag.tensor(a, dtype=ag.float64, requires_grad=True)


# name -> (a function of tensors, a maker of its sample inputs)
DB = {
    "numpy_cube": (lambda x: NumpyCube.apply(x)[0], lambda: (_sample(4),)),
    "exp_saves_output": (ExpSavesOutput.apply, lambda: (_sample(2, 3),)),
    "mul_scaled": (lambda x, y: MulScaled.apply(x, y, 1.5),
                   lambda: (_sample(3), _sample(3, seed=1))),
    "softmax_rows": (SoftmaxRows.apply, lambda: (_sample(2, 4),)),
    "sort_values": (lambda x: SortWithIndices.apply(x)[0], lambda: (_sample(2, 5),)),
}
