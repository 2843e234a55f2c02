"""The batch level: vmap as a transform.

# NOTE [batch level]
A tensor of a batch level wraps the value one level down, which has one more
dimension than the tensor shows: the batch dim, kept in `_aux` (`bdim`). A
primitive on such tensors hands the values and their bdims (None for tensors
of lower levels: constants here, the same for every example) to the
primitive's batch rule. The rule computes with ordinary ops on the values, so
lower levels see those ops, and says where the outputs keep their batch dim.
Rules mostly move the batch dim to the front and shift the op's dim params.
"""
import threading
import warnings

from .. import _tensor as _t
from ..autograd import inplace
from ..autograd.views import mark_view, viewed
from ..core.dispatch import Interpreter
from ..ops.shape import select, stack

_RANDOM_ERROR = ("vmap: called random operation while in randomness error mode. Please either use "
                 "the 'same' or 'different' randomness flags on vmap or perform the randomness "
                 "operation out of vmap")


class BatchInterpreter(Interpreter):
    kind = "batch"
    batched = True

    def __init__(self, batch_size, randomness="error"):
        super().__init__()
        self.batch_size = batch_size
        self.randomness = randomness

    # ----------------------------------------------------------- wrappers
    def wrap(self, value, bdim):
        """A tensor of this level whose examples lie along `bdim` of `value` (None: unbatched)."""
        if bdim is None:
            return value
        return _t.wrap(value, self, bdim if bdim >= 0 else bdim + value.ndim)

    def unwrap(self, x):
        """(value one level down, batch dim or None) of `x`."""
        if isinstance(x, _t.Tensor) and x._lvl is self:
            return x._inner, x._aux
        return x, None

    def constant_like(self, t, inner):
        return _t.wrap(inner, self, t._aux)

    def tensor_repr(self, t):
        """As torch prints a tensor inside vmap."""
        return f"BatchedTensor(lvl={self.level}, bdim={t._aux}, value={t._inner!r})"

    def shape_of(self, t):
        v = t._inner
        s = v._data.shape if v._lvl is None else v._lvl.shape_of(v)
        d = t._aux
        return _t.Size(s[:d] + s[d + 1:])

    # ----------------------------------------------------------- primitives
    def process(self, prim, args, params):
        values, bdims = [], []
        for a in args:
            if getattr(a, "_lvl", None) is self:
                values.append(a._inner)
                bdims.append(a._aux)
            else:
                values.append(a)
                bdims.append(None)
        rule = prim.batch
        if rule is None:
            if not _fallback.enabled:
                raise NotImplementedError(
                    f"vmap: the primitive '{prim.name}' has no batching rule, so it cannot run "
                    "inside vmap yet. Write its `batch` rule, or opt in to a slow per-example "
                    "loop with `arraygrad.func.vmap_loop_fallback()`")
            rule = _loop_rule(prim)
        out, out_bdims = rule(tuple(values), tuple(bdims), **params)
        if prim.multiple_results:
            return [self.wrap(o, d) for o, d in zip(out, out_bdims)]
        out = self.wrap(out, out_bdims)
        if (prim.is_view and out._lvl is self and getattr(args[0], "_lvl", None) is self
                and viewed(args[0]._inner, out._inner)):
            # a higher level that writes into the view must see its base (NOTE [in-place])
            mark_view(prim, args[0], params, out)
        return out

    def inplace(self, t, result, name):
        """`t.op_(...)`: write the batched `result` into `t` (as torch allows in vmap)."""
        r, rd = self.unwrap(result)
        if t._lvl is not self:
            if rd is not None:
                raise RuntimeError("vmap: an in-place operation is not possible here because its "
                                   "result is vmapped over but the tensor written to is not (it "
                                   "was created outside vmap or from unbatched values). Please "
                                   "use the out-of-place operator instead.")
            return inplace.apply(t, r, name)
        # `result` already has t's logical shape (inplace.apply broadcasts it first)
        bdim = t._aux
        r = r.unsqueeze(bdim) if rd is None else move_bdim(r, rd, bdim)
        inplace.apply(t._inner, r, name)
        return t

    # ----------------------------------------------------------- randomness
    def check_random(self, what):
        """A random op here: raises ('error'), gets no batch dim ('same') or one ('different')."""
        if self.randomness == "error":
            raise RuntimeError(_RANDOM_ERROR)
        return self.batch_size if self.randomness == "different" else None


def move_bdim(x, bdim, to):
    """The value `x` with its batch dim at `to` (unchanged when already there; to the front:
    `ops._rules.to_front`, as batching rules do)."""
    return x if bdim == to else x.movedim(bdim, to)


# ----------------------------------------------------------------- opt-in loop fallback
class _Fallback(threading.local):
    enabled = False


_fallback = _Fallback()


class vmap_loop_fallback:
    """Inside this block, vmap runs a primitive without a batching rule once per example
    (slow, with a warning) instead of raising.

        >>> with arraygrad.func.vmap_loop_fallback():
        ...     vmap(f)(x)
    """

    def __init__(self, enabled=True):
        self.enabled = enabled

    def __enter__(self):
        self.prev, _fallback.enabled = _fallback.enabled, self.enabled
        return self

    def __exit__(self, *exc):
        _fallback.enabled = self.prev


def _loop_rule(prim):
    def rule(args, bdims, **params):
        warnings.warn(f"vmap: the primitive '{prim.name}' has no batching rule; running it once "
                      "per example (slow)", UserWarning, stacklevel=4)
        n = next(a.shape[d] for a, d in zip(args, bdims) if d is not None)
        per = [prim(*(a if d is None else select(a, d, b) for a, d in zip(args, bdims)), **params)
               for b in range(n)]
        if prim.multiple_results:
            return [stack(list(outs), 0) for outs in zip(*per)], (0,) * len(per[0])
        return stack(per, 0), 0
    return rule
