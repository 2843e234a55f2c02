"""The jvp level: forward mode as a transform (func.jvp, jacfwd, forward_ad.dual_level).

# NOTE [jvp level]
A tensor of a jvp level wraps its primal (one level down) and carries its
tangent in `_aux` (None means zero; the tangent also lives below this level).
A primitive on such tensors binds the primitive on the primals, then runs its
jvp rule on the primals and tangents. The rule is made of arraygrad ops on
lower-level values, so every level below sees it: jvp(grad(f)), grad of a
function that uses jvp, and jacfwd(jacfwd(f)) need nothing more. Tensors of
lower levels are constants here (zero tangent); that is what keeps nested jvps
from confusing their perturbations.

# NOTE [jvp in-place]
`x.op_()` on a dual tensor writes the new primal into x's primal (the level
below handles its own history) and gives x the new tangent. Tangents are
rebound, never written into, because a tangent may be the caller's own tensor
or shared with other duals. A view made at this level keeps no tangent of its
own: it remembers its base and how to redo the view, and its tangent is the
view of the base's tangent, so it sees later writes into the base, as in
torch where they share storage. Writing into a view rewrites the base's
tangent over the view's region (found by viewing an arange of the base).
"""
from .. import _tensor as _t
from ..autograd import inplace
from ..autograd.graph import PrimNode, RuleCtx, SavedTensor
from ..autograd.views import base_of, mark_view, viewed
from ..core import grad_mode
from ..core.dispatch import Interpreter, bind, not_complex
from ..ops import creation
from ..ops.index import index_put

Tensor = _t.Tensor


class JvpCtx(RuleCtx):
    """What a jvp rule sees: primal inputs and outputs, input shapes and dtypes. It notes
    whether the rule read a primal value (`read_primals`): NOTE [tangents that require grad]."""

    def __init__(self, inputs, outs, tangents):
        self._inputs = inputs
        self._outs = outs
        self.read_primals = False
        self.needs_input_grad = tuple([t is not None for t in tangents])

    @property
    def inputs(self):
        self.read_primals = True
        return self._inputs

    @property
    def outs(self):
        self.read_primals = True
        return self._outs

    @property
    def shapes(self):
        return tuple(tuple(a.shape) if isinstance(a, Tensor) else None for a in self._inputs)

    @property
    def dtypes(self):
        return tuple(a.dtype if isinstance(a, Tensor) else None for a in self._inputs)


class JvpInterpreter(Interpreter):
    kind = "jvp"
    primal_autograd = True      # NOTE [reverse over duals]

    def __init__(self, dual=False):
        super().__init__()
        self.dual = dual        # a forward_ad dual level (runs forward(ctx, ...) Functions)

    def wrap(self, primal, tangent=None):
        """A tensor of this level with value `primal` and tangent `tangent` (None: zero)."""
        t = _t.wrap(primal, self, tangent)
        if primal._requires_grad:
            self.mirror(t)
        return t

    def mirror(self, t):
        """Show the eager autograd state of `t`'s primal on `t` (requires_grad, grad_fn)."""
        p = t._inner
        t._requires_grad, t.grad_fn, t._output_nr = p._requires_grad, p.grad_fn, p._output_nr

    def unwrap(self, x):
        """(primal, tangent or None) of `x` seen from this level."""
        if isinstance(x, Tensor) and x._lvl is self:
            return x._inner, _tangent(x)
        return x, None

    def tensor_repr(self, t):
        """As torch prints a dual tensor: `tensor([...], tangent=tensor([...]))`."""
        r, tangent = repr(t._inner), _tangent(t)
        return r if tangent is None else f"{r[:-1]}, tangent={tangent!r})"

    def shape_of(self, t):
        p = t._inner
        return _t.Size(p._data.shape) if p._lvl is None else p._lvl.shape_of(p)

    def process(self, prim, args, params):
        primals, tangents = [], []
        tangent = False     # whether any arg has a tangent
        for a in args:
            if type(a) is Tensor and a._lvl is self:
                primals.append(a._inner)
                t = a._aux if a._base is None else _tangent(a)
                tangents.append(t)
                if t is not None:
                    tangent = True
            else:
                primals.append(a)
                tangents.append(None)
        out = bind(prim, tuple(primals), params)
        outs = list(out) if prim.multiple_results else [out]
        src = args[0]
        if (prim.is_view and prim.differentiable and type(src) is Tensor and src._lvl is self
                and viewed(src._inner, out)):
            view = self.wrap(out)   # its tangent is read off its base's: NOTE [jvp in-place]
            mark_view(prim, src, params, view)
            wrapped = [view]
        elif tangent and prim.differentiable:
            out_tangents = self.tangents(prim, params, tuple(primals), tuple(tangents), outs)
            wrapped = [self.wrap(o, t) for o, t in zip(outs, out_tangents)]
        else:
            wrapped = [self.wrap(o) for o in outs]
        node = outs[0].grad_fn
        if type(node) is PrimNode and node.prim is prim and eager_below(outs[0]):
            dual_of = {id(p): a for p, a in zip(primals, args) if type(a) is Tensor and a._lvl is self}
            dual_of.update((id(o), w) for o, w in zip(outs, wrapped))
            save_duals(node._saved + (node._saved_outs or ()), dual_of)
        return wrapped if prim.multiple_results else wrapped[0]

    def tangents(self, prim, params, primals, tangents, outs):
        """Output tangents of `prim` by its jvp rule, fitted to the outputs' shapes and dtypes."""
        rule = prim.jvp
        if rule is None:
            raise NotImplementedError(
                f"Trying to use forward AD with {prim.name} that does not support it because "
                "it has not been implemented yet (the primitive has no jvp rule).")
        if not prim.complex:
            for o in outs:
                if o.dtype.is_complex:
                    raise not_complex(prim)
        ctx = JvpCtx(primals, outs, tangents)
        multi = prim.multiple_results
        if callable(rule):
            ts = [t if t is not None or not isinstance(p, Tensor)
                  else creation.zeros(tuple(p.shape), dtype=p.dtype) for p, t in zip(primals, tangents)]
            res = rule(ctx, *ts, **params)
            res = list(res) if multi else [res]
        else:
            res = [None] * len(outs)
            for f, t in zip(rule, tangents):
                if t is None:
                    continue
                c = f(ctx, t, **params)
                for j, cj in enumerate(c if multi else (c,)):
                    if cj is not None:
                        res[j] = cj if res[j] is None else res[j] + cj
        nondiff = prim.nondiff_outputs
        res = [_fit(t, o, nondiff and j in nondiff) for j, (t, o) in enumerate(zip(res, outs))]
        if grad_mode.state.grad_enabled and _reads_primals(prim, ctx):
            for p in primals:
                if isinstance(p, Tensor) and (p._requires_grad or p._lvl is not None
                                              and _differentiated(p)):
                    res = [_connect(t, p) if t is not None and not t.requires_grad else t
                           for t in res]
                    break
        return res

    def snapshot(self, t, inner):
        return self.wrap(inner, _tangent(t))

    def inplace(self, t, result, name):
        p, tangent = self.unwrap(result)
        inplace.apply(t._inner, p, name)
        self.mirror(t)
        base = None if t._base is None else base_of(t)
        if base is not None:
            self.mirror(base)       # the write rewrote the base's history below too
        tangent = _fit(tangent, t._inner, False)
        if base is None:
            if tangent is None and t._aux is not None:     # a dual stays one (zero tangent)
                tangent = creation.zeros(tuple(t.shape), dtype=t.dtype)
            t._aux = tangent
        elif tangent is not None or base._aux is not None:
            _write_base_tangent(t, tangent)
        return t


# NOTE [reverse over duals]
# Eager autograd under a dual level records its graph on the primals (one level down),
# so `requires_grad`, `grad_fn` and graph edges of a dual tensor are its primal's. The
# node saves the dual tensors themselves, though: while the level lives, backward runs
# the vjp rules on duals and so computes the tangents of the gradients as well
# (forward-over-reverse, as torch's `autograd.grad` on dual tensors); once the level
# has ended, the saved duals read as their primals.
def save_duals(saved, dual_of):
    """Make the SavedTensors in `saved` hold the duals (`dual_of`: id of primal -> dual)."""
    for s in saved:
        if type(s) is SavedTensor:
            d = dual_of.get(id(s.value if s.ref is None else s.ref()))
            if d is not None:
                s.value, s.ref = d, None


# NOTE [tangents that require grad]
# torch computes a tangent with the op's forward formula while autograd records, with the
# tangents of inputs that have none materialized as zeros. So the tangent requires grad when
# the formula reads a primal that requires grad (`self_p`, `other_p`, `result`), even one
# multiplied by a zero tangent (`2 * a`: `other_t * self_p + self_t * other_p`), and not
# when it reads no primal (the linear ops: add, sum, views, cat, gather) or reads them only to
# compare (where, clamp, maximum, max, sort: masks and indices have no history). A jvp rule
# here reads the primals through its ctx, as torch's codegen finds them in the formula's
# text, so the level connects the tangents to the primals below when the rule read one;
# a primitive whose rule reads primals only to compare declares `jvp_reads_primals=False`,
# one whose primal-reading term is skipped (its input has no tangent) `True` (fmod: the
# divisor's term `-t * trunc(x / y)`).
def _reads_primals(prim, ctx):
    flag = prim.jvp_reads_primals
    return ctx.read_primals if flag is None else flag


def eager_below(t):
    """Whether eager autograd recorded `t` directly or through jvp levels only, whose
    tensors show their primal's graph (nested dual levels save their duals in turn)."""
    while t._lvl is not None:
        if not t._lvl.primal_autograd:
            return False
        t = t._inner
    return True


def _differentiated(p):
    """Whether a level below (eager autograd, a grad level, through vmap levels) tracks `p`."""
    while not p._requires_grad:
        if p._lvl is None:
            return False
        p = p._inner
    return True


def _connect(t, p):
    """`t` made differentiable with respect to `p`, with zero gradient: torch's term of an
    input whose tangent is zero (`0 * p`), on no element. It is a product, as torch's, so a
    jvp level below sees a primal read too (jvp of jacfwd(lambda u: 2 * u) at an input that
    requires grad gives a tangent that requires grad)."""
    return t + (p.reshape(-1)[:0] * 0).sum().to(t.dtype)


def _fit(t, out, nondiff):
    """Tangent `t` brought to the shape and dtype of output `out` (None if out has none)."""
    if t is None or nondiff:
        return None
    dtype = out.dtype
    if not dtype.is_differentiable:
        return None
    if not isinstance(t, Tensor):
        return creation.full(tuple(out.shape), t, dtype=dtype)
    if t._lvl is None and out._lvl is None:     # plain tensors: compare the arrays
        a, b = t._data, out._data
        if a.shape == b.shape and a.dtype == b.dtype:
            return t
    shape = out.shape
    if t.shape != shape:
        t = t.expand(shape)
    td = t.dtype
    if td is not dtype:
        t = (t.real if td.is_complex and not dtype.is_complex else t).to(dtype)
    return t


def _tangent(x):
    """Tangent of a tensor of this level; a view's is the view of its base's tangent."""
    if x._base is None:
        return x._aux
    base = base_of(x)
    return None if base._aux is None else x._view_fn(base._aux)


def _write_base_tangent(view, tangent):
    """After an in-place write into `view`, put its new tangent into its base's tangent."""
    base = base_of(view)
    if tangent is None:
        tangent = creation.zeros(tuple(view.shape), dtype=view.dtype)
    n = base.numel()
    where = view._view_fn(creation.arange(n).reshape(tuple(base.shape)))
    bt = base._aux
    if bt is None:
        bt = creation.zeros(tuple(base.shape), dtype=base.dtype)
    flat = index_put(bt.reshape(n), (where.reshape(-1),), tangent.reshape(-1))
    base._aux = flat.reshape(tuple(base.shape))
