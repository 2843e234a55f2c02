"""The grad level: reverse mode as a transform (func.grad, func.vjp, jacrev).

# NOTE [grad level]
A tensor of a grad level wraps the value one level down. A primitive on it
binds the primitive on the inner values (with the grad mode that was in force
outside the transform, so eager autograd below still records), then wraps the
results with a graph node whose saved values are the inner tensors. Backward
runs that node's vjp rule on inner tensors: every lower level sees those ops,
which is what makes grad(grad(f)) and vmap(grad(f)) work.
"""
from .. import _tensor as _t
from ..autograd import inplace
from ..autograd.anomaly_mode import state as anomaly
from ..autograd.graph import accumulator, record, record_level
from ..autograd.views import mark_view, refresh_view, viewed
from ..core import grad_mode
from ..core.dispatch import Interpreter, bind, bind_plain


class GradInterpreter(Interpreter):
    kind = "grad"
    refuses_requires_grad = True

    def __enter__(self):
        state = grad_mode.state
        self.prev_grad_mode = state.grad_enabled
        super().__enter__()
        state.grad_enabled = True       # enable_grad() for the transform's body
        return self

    def __exit__(self, *exc):
        grad_mode.state.grad_enabled = self.prev_grad_mode
        super().__exit__(*exc)

    def lift(self, x, requires_grad=False):
        """`x` (a lower-level tensor) as a tensor of this level."""
        t = _t.wrap(x, self)
        t._requires_grad = requires_grad
        return t

    def unwrap(self, x):
        return x._inner if isinstance(x, _t.Tensor) and x._lvl is self else x

    def shape_of(self, t):
        p = t._inner
        return _t.Size(p._data.shape) if p._lvl is None else p._lvl.shape_of(p)

    def process(self, prim, args, params):
        state = grad_mode.state
        recording = state.grad_enabled and prim.differentiable
        inner = []
        edges = []          # per arg: its gradient edge at this level, or None
        track = False
        plain = True        # every tensor below is a plain level-0 tensor (`bind_plain`)
        for a in args:
            if getattr(a, "_lvl", None) is self:
                if a._base is not None and a._vc[0] != a._view_version:
                    refresh_view(a)     # its base was written: NOTE [in-place]
                v = a._inner
                if v._lvl is not None or v._base is not None:
                    plain = False
                inner.append(v)
                if a._requires_grad:
                    track = True
                if not recording:
                    continue
                fn = a.grad_fn
                if fn is not None:
                    edges.append((fn, a._output_nr))
                elif a._requires_grad:      # a leaf: its accumulator, made once a node needs it
                    edges.append((accumulator(a), 0))
                else:
                    edges.append(None)
            else:
                if plain and isinstance(a, _t.Tensor) and (a._lvl is not None or
                                                           a._base is not None):
                    plain = False
                inner.append(a)
                if recording:
                    edges.append(None)
        inner = tuple(inner)
        lower = bind_plain if plain else bind
        # lower levels keep the mode of outside the transform, and no_grad() inside it
        # holds at every level (a value computed under no_grad is constant to all of them);
        # the mode is switched only where those differ (no context object per primitive)
        if self.prev_grad_mode or not state.grad_enabled:
            out = lower(prim, inner, params)
        else:
            state.grad_enabled = False
            try:
                out = lower(prim, inner, params)
            finally:
                state.grad_enabled = True
        if prim.one_output_node:
            result = _t.wrap(out, self)
            if track and recording:
                if anomaly.enabled:
                    record(prim, params, inner, [out], [result], edges, False)
                else:
                    record_level(prim, params, inner, out, result, edges)
            return result
        outs = list(out) if prim.multiple_results else [out]
        wrapped = [_t.wrap(o, self) for o in outs]
        if track and recording:
            record(prim, params, inner, outs, wrapped, edges, False)
        if prim.is_view and args and getattr(args[0], "_lvl", None) is self \
                and viewed(inner[0], outs[0]):
            mark_view(prim, args[0], params, wrapped[0])
        return wrapped if prim.multiple_results else wrapped[0]

    def inplace(self, t, result, name):
        """Write below, then rewrite `t`'s history at this level as eager autograd does
        (views of a base rewrite the base's: NOTE [in-place])."""
        inplace.check(t, name)
        inplace.apply(t._inner, result._inner if result._lvl is self else result, name)
        inplace.track(t, result if result._lvl is self else self.lift(result), name)
        return t

    def snapshot(self, t, inner):
        if t._base is not None and t._vc[0] != t._view_version:
            refresh_view(t)
        s = self.lift(inner, t._requires_grad)
        s.grad_fn, s._output_nr = t.grad_fn, t._output_nr
        return s
