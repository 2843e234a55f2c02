"""In-place ops: compute out of place, write into the tensor, rewrite its history.

# NOTE [in-place]
`x.op_(...)` computes `r = op(x, ...)`, copies r into x's memory, bumps the
version counter x shares with its views, and makes r's node x's grad_fn
(add_, sub_, mul_, div_, fill_ and zero_ write straight into x's array where no
history can change: NOTE [direct writes]). When
x is a view of a base that is part of a graph, the base's history is
rewritten too (a CopySlices node: the base with the view's region replaced),
so gradients through the base see the write. Saved tensors remember versions,
so a backward that needs an overwritten value raises instead of lying. The op
itself reads a snapshot of x (`source`), so its own node never saves the value
it overwrites. Other views of the base notice the write by version and rebuild
their history from the base when next used (`refresh_view`).

The same holds at every grad level (`func.grad`, `vjp`, `jacrev`): a level
writes one level down, then rewrites its own tensors' history with `track`,
views of that level included; the snapshot is taken at every level. A
tensor created inside a grad or jvp transform that receives a value of it
joins the level (`promote`, with its base if it is a view), as torch's
functorch wraps every tensor made inside; a captured outer tensor is refused.
"""
from .. import _tensor as _t
from .. import dtypes as _dt
from ..backends import backend_of, numpy_backend, silent
from ..core import grad_mode
from ..core import dispatch
from ..core.dispatch import born_inside
from . import eager
from .graph import Node, gradient_edge, move_retain_hook
from .views import base_of, refresh_view

_ndarray = numpy_backend.array_type
_np = numpy_backend.xp

Tensor = _t.Tensor


def check(self, name):
    """torch's refusals of in-place writes into leaves that require grad and their views."""
    if not grad_mode.state.grad_enabled:
        return
    if self.grad_fn is None and self._requires_grad:
        if self._base is not None:
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in an "
                               "in-place operation.")
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")
    custom = self.__dict__.get("_custom_view")      # set by autograd.Function (view outputs)
    if custom is not None and self._requires_grad:
        raise RuntimeError(f"Output {custom[1]} of {custom[0]} is a view and is being modified "
                           "inplace. This view was created inside a custom Function (or because "
                           "an input was returned as-is) and the autograd logic to handle "
                           "view+inplace would override the custom backward associated with the "
                           "custom Function, leading to incorrect gradients. This behavior is "
                           "forbidden. You can fix this by cloning the output of the custom "
                           "Function.")
    base = self._base
    if base is not None and base.grad_fn is None and (base._requires_grad or self._requires_grad):
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an "
                           "in-place operation.")


def apply(self, result, name="inplace"):
    """Make `self` hold `result` in place (see NOTE [in-place]); returns self."""
    if self._lvl is not None or result._lvl is not None:
        return _apply_wrapped(self, _conform(self, result), name)
    check(self, name)
    result = _conform(self, result)
    data = self._data
    if self._base is not None and not backend_of(data).views:
        raise NotImplementedError(f"{name}: an in-place write to a view of a "
                                  f"{backend_of(data).name} tensor cannot reach its base (the "
                                  "library's arrays share no memory); write to the base instead, "
                                  "e.g. x[1:3] = x[1:3] + 1")
    if hasattr(data, "flags") and not data.flags.writeable:
        raise RuntimeError("unsupported operation: more than one element of the written-to tensor "
                           "refers to a single memory location. Please clone() the tensor before "
                           "performing the operation.")
    data[...] = result._data
    self._vc[0] += 1
    track(self, result, name)
    return self


# NOTE [direct writes]
# `p -= lr * g` under no_grad is most of a hand-written optimizer step. The general path
# computes `p - lr * g` into a new array and copies it into p's: a parameter-sized buffer
# more per op, which glibc hands back to the OS and faults in again every step. Where no
# history can change (grad mode off, or nothing involved requires grad and p is no view) and
# the operands are the plain case (float32/float64 NumPy arrays of one dtype, the other
# broadcasting to p's shape, or a Python number), the arithmetic ops write into p's array
# with the ufunc's `out=`: the same operation on the same operands, so the same bits (NumPy
# handles overlapping operands as if they did not overlap); fill_ and zero_ of a number
# assign it. Everything else, a profiled run included (it times the dispatched op), takes
# the general path.
DIRECT = {"add": _np.add, "sub": _np.subtract, "mul": _np.multiply, "div": _np.divide}


def direct(self, ufunc, other, alpha=1):
    """`self.op_(other, alpha=alpha)` written straight into self's array by NumPy's `ufunc`
    (NOTE [direct writes]); False where the general path must run."""
    if type(alpha) is not int and type(alpha) is not float or not _writable(self):
        return False
    if isinstance(other, Tensor):
        y = other._data
        if other._lvl is not None or type(y) is not _ndarray or y.dtype != self._data.dtype or \
                y.ndim > self._data.ndim or other._requires_grad and \
                grad_mode.state.grad_enabled or any(
                    a != b and a != 1 for a, b in zip(y.shape[::-1], self._data.shape[::-1])):
            return False
    elif type(other) is float or type(other) is int:
        y = other
    else:
        return False
    _write(_np, ufunc, self._data, y if alpha == 1 else y * alpha)
    self._vc[0] += 1
    return True


def direct_fill(self, value):
    """`self.fill_(value)` for a Python number, written straight into self's array (NOTE
    [direct writes]); False where the general path must run."""
    if type(value) is not float and type(value) is not int or not _writable(self):
        return False
    self._data[...] = value
    self._vc[0] += 1
    return True


def _writable(self):
    """Whether `self` takes a direct write: a plain float32/float64 NumPy array that takes
    writes, no history that could change, no transform or profiler watching."""
    data = self._data
    return type(data) is _ndarray and self._lvl is None and data.dtype.char in "fd" and \
        not dispatch._tls.interpreters and dispatch._eager is eager.process and \
        not (grad_mode.state.grad_enabled and (self._requires_grad or self._base is not None)) \
        and data.flags.writeable


@silent     # torch gives inf and nan without a word
def _write(xp, ufunc, data, y):
    ufunc(data, y, out=data)


def _conform(self, result):
    """`result` broadcast to `self`'s shape and cast to its dtype, at the outermost level, so
    every level below records a value of the written tensor's shape."""
    if result.shape != self.shape:
        try:
            result = result.expand(self.shape)
        except RuntimeError:
            raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast "
                               f"shape {list(result.shape)}") from None
    if result.dtype is not self.dtype:
        check_cast(result.dtype, self)
        result = result.to(self.dtype)
    a, b = self._base_array(), result._base_array()
    if type(a) is not type(b) or type(a) is not _ndarray and backend_of(a) is not backend_of(b):
        result = result.to(self.device)     # fills made on the cpu, copy_ from another device
    return result


def check_cast(dtype, self):
    """torch's refusal to write a result of `dtype` into `self` of a lower category
    (complex -> real, float -> integral, integral -> bool)."""
    if dtype._category > self.dtype._category:
        raise RuntimeError(f"result type {_dt.short_name(dtype)} can't be cast to the desired "
                           f"output type {_dt.short_name(self.dtype)}")


def track(self, result, name):
    """Rewrite the history of `self` (a tensor of one graph level: eager or a grad level)
    after `result`, a tensor of the same level, was written into it."""
    if not (grad_mode.state.grad_enabled and (
            result._requires_grad or self._requires_grad or
            (self._base is not None and self._base._requires_grad))):
        return
    moved = [(t, t.grad_fn, t._output_nr) for t in (self, self._base)
             if t is not None and t._retains_grad]
    if self._base is not None and self._view_fn is not None:
        rebase(self, result)
    elif result.grad_fn is not None:
        self.grad_fn = result.grad_fn
        self._output_nr = result._output_nr
        self._requires_grad = True
    else:
        # every value was replaced by constants (fill_, copy_ of a constant)
        self.grad_fn = Overwritten(gradient_edge(self), name)
        self._output_nr = 0
    for t, node, nr in moved:
        move_retain_hook(t, node, nr)


class Overwritten(Node):
    """History of a tensor whose values were all replaced by constants: the old history
    gets zero gradient (torch's FillBackward0, ZeroBackward0, CopyBackwards)."""

    def __init__(self, old_edge, name):
        Node.__init__(self, (old_edge,))
        self._name = name if "Backward" in name else "FillBackward0"

    def name(self):
        return self._name

    def apply(self, grads):
        return [grads[0]._zeros_like()]


def source(self, args):
    """What `self.op_(*args)` computes from: `self`, or, when the op may be recorded, a
    snapshot of it. The op's node may save its input, which the write is about to overwrite
    (torch clones `original_self` for the same reason)."""
    if not grad_mode.state.grad_enabled:
        return self
    if self._lvl is None and not (self._requires_grad or any(
            isinstance(a, Tensor) and (a._requires_grad or a._lvl is not None) for a in args)):
        return self
    return snapshot(self)


def snapshot(t):
    """A copy of `t`'s value carrying `t`'s history, tangent or batch dim at every level."""
    t = _t.lower(t)
    if t._lvl is not None:
        return t._lvl.snapshot(t, snapshot(t._inner))
    check(t, "inplace")
    if t._base is not None and t._vc[0] != t._view_version:
        refresh_view(t)
    snap = _t.make(backend_of(t._data).xp.asarray(t._data, copy=True), t._requires_grad)
    snap.grad_fn = t.grad_fn
    snap._output_nr = t._output_nr
    return snap


class CopySlices(Node):
    """The base after one of its views was written: view region from the written value."""

    def __init__(self, base_edge, result_edge, view_fn, shape, dtype):
        Node.__init__(self, (base_edge or (None, 0), result_edge or (None, 0)))
        self.view_fn = view_fn
        self.shape = shape
        self.dtype = dtype

    def apply(self, grads):
        g, = grads
        # the base's old values outside the region: the gradient with the region zeroed
        # through the view itself, so that a view of some components (`x.real` of a complex
        # base) zeroes only those
        outside = g.clone()
        self.view_fn(outside).zero_()
        return [outside, self.view_fn(g)]


def rebase(view, result):
    base = base_of(view)
    node = CopySlices(gradient_edge(base), gradient_edge(result), view._view_fn,
                      tuple(base.shape), base.dtype)
    base.grad_fn, base._output_nr, base._requires_grad = node, 0, True
    fresh = view._view_fn(base)
    view.grad_fn, view._output_nr, view._requires_grad = fresh.grad_fn, fresh._output_nr, True
    view._view_version = view._vc[0]


def _apply_wrapped(self, result, name):
    """In-place on or from a transform's tensor: the higher level decides (see its `inplace`)."""
    self, result = _t.lower(self), _t.lower(result)
    lvl, rl = self._lvl, result._lvl
    if rl is not None and rl.alive and (lvl is None or rl.level > lvl.level):
        if not rl.batched:
            # a tensor created inside the transform joins its level (torch's functorch wraps
            # every tensor made inside); one captured from outside may not change
            for t in (self, self._base):
                if t is not None and t._lvl is not rl and not born_inside(t, rl):
                    raise RuntimeError(
                        "During a grad (vjp, jvp, grad, etc) transform, the function provided "
                        f"attempted to call an in-place operation ({name}) that would mutate a "
                        "captured Tensor. Please instead call the out-of-place version of this "
                        "operation (e.g. use y = x + y instead of x += y).")
            _t.promote(self, rl)
        lvl = rl    # (the batch level explains why its write cannot be done)
    if lvl is None:
        return apply(self, _t.lower(result), name)
    return lvl.inplace(self, result, name)
