"""Level 0: compute on raw arrays and record a graph node when grad mode asks. Importing
this module installs it as the base of the dispatcher's interpreter stack."""
import functools
import operator

from .. import _tensor as _t
from .. import dtypes as _dt
from .._tensor import Tensor
from ..backends import (backend_of, default_backend, numpy_backend, common_backend, adopt,
                        QUIET_NUMPY)
from ..core import dispatch, grad_mode
from .anomaly_mode import state as _anomaly
from .graph import (record_eager, PrimNode, SavedTensor, accumulator, shared_shapes, NO_PARAMS,
                    _seq, _COMPACT, _NOT_SAVED, _ZEROS, _dtype_tuples, _needs_tuples,
                    _shape_tuples, _hooks_state)
from .views import mark_view, refresh_view
from ..core.grad_mode import state as _grad_state

_ndarray = numpy_backend.array_type     # results of this type need no `backend.result`
_FROM_NP = _dt._FROM_NP
_new = object.__new__
_np = numpy_backend.xp
_tls = dispatch._tls
_entered = dispatch._entered
_quiet, _loud, _IGNORE_ALL = QUIET_NUMPY or (None, None, None)


def _interned(table, key):
    return table.setdefault(key, key)
_shares = _np.may_share_memory


def process(prim, args, params):
    """Run `prim` on its args' arrays; a complex array reaching a primitive whose impl and
    rules are not verified for complex raises here (NOTE [complex autograd]), so neither a
    value nor a gradient is ever silently wrong."""
    arrays = []
    needs_grad = False
    backend = None
    mixed = False
    real_only = not prim.complex
    for a in args:
        if isinstance(a, Tensor):
            if a._lvl is not None:      # escaped from a finished transform
                return process(prim, tuple(_t.lower(x) for x in args), params)
            d = a._data
            if real_only:       # verified prims pay nothing
                dt = _FROM_NP.get(d.dtype) if type(d) is _ndarray else None
                if (_dt.of_array(d.dtype) if dt is None else dt).is_complex:
                    raise dispatch.not_complex(prim)
            if backend is None:
                backend = numpy_backend if type(d) is _ndarray else backend_of(d)
                first = d
            elif type(d) is not type(first):
                backend = common_backend(backend, first, d)
                mixed = True
            arrays.append(d)
            if a._requires_grad:
                needs_grad = True
            elif a._base is not None and a._vc[0] != a._view_version:
                # a view whose base was written in place (and may have gained history)
                refresh_view(a)
                needs_grad = needs_grad or a._requires_grad
        else:
            arrays.append(a)
    if backend is None:
        backend = default_backend()
    elif mixed:
        arrays = [adopt(backend, d) if isinstance(a, Tensor) else d for a, d in zip(args, arrays)]
    out = prim.impl(backend.xp, *arrays, **params)
    if prim.multiple_results:
        outs = [_t.make(backend.result(o)) for o in out]
    else:
        t = _new(Tensor)        # _t.make, inlined: this runs for every primitive
        t._data = out if type(out) is _ndarray else backend.result(out)
        t._lvl = t.grad_fn = None
        t._requires_grad = False
        t._output_nr = 0
        t._vc = {0: 0}
        outs = [t]
    if needs_grad and prim.differentiable and grad_mode.state.grad_enabled:
        record_eager(prim, params, args, outs)
    if prim.is_view:
        src, o = arrays[0], outs[0]._data
        if type(o) is not _ndarray or src.flags.c_contiguous or _shares(o, src):
            mark_view(prim, args[0], params, outs[0])   # else NumPy's reshape copied (views.viewed)
    return outs if prim.multiple_results else outs[0]


dispatch.swap_eager(process)


# NOTE [one-frame ops]
# The public forms of the common primitives (the Tensor operators, `x.tanh()`,
# `arraygrad.tanh`, matrix-vector and matrix products, full sums and means, `x[i]`) are made
# by `unary_op`, `binary_op` and `select_op`: in level 0's common case they do in one frame
# what the public op, the dispatcher, `process`, the impl's wrappers, `record_eager` and
# `_fill` do in ten. The common case: no transform level and no profiler (`dispatch._eager`
# is `process`); every tensor argument a plain Tensor (not a subclass, of no level, not a
# view unless one that needs no grad and whose base was not written since: `process` leaves
# those as they are) over a NumPy array, all of one dtype, float32 or float64; the others
# Python floats or ints. There the public op passes the arguments unchanged to the
# primitive (promotion keeps them), so `prim.plain` computed on them with NumPy silenced is
# what it computes (a ValueError sends the call down the general path, which raises torch's
# error), and the node built here is the one `record_eager` builds (NOTE [node footprint];
# under saved-tensor hooks or anomaly mode `record_eager` itself records). Any other call
# goes to `slow`, the public op. 0-d float64 tensors and Python floats (scalar code, such
# as `y * 0.999`) are computed as Python floats by the primitive's `float_op`: +, -, * and /
# of two doubles are correctly rounded in IEEE arithmetic, so the bits are NumPy's, for a
# third of its scalar path's cost (a division by zero goes to NumPy, which gives inf or nan;
# Python's would raise).
_F32, _F64 = _dt.float32.np, _dt.float64.np     # NumPy's own dtype objects, tested by identity
_truediv = operator.truediv
# the node's shared tuples for each fast dtype: (d,), (d, d), (d, None), (None, d)
_D32, _D64 = (tuple(_interned(_dtype_tuples, k) for k in ((d,), (d, d), (d, None), (None, d)))
              for d in (_dt.float32, _dt.float64))
_NEEDS = ((None, _interned(_needs_tuples, (False, True))),      # by needs[0], needs[1]
          (_interned(_needs_tuples, (True, False)), _interned(_needs_tuples, (True, True))))
_NEEDS1 = _interned(_needs_tuples, (True,))
_Z1, _Z2 = _ZEROS[(0,)], _ZEROS[(0, 0)]
_NOTHING_SAVED = (_NOT_SAVED,)


def _general_view(x, inside=False):
    """Whether view `x` goes the general way: it needs grad, or its base was written since it
    was made (`process` refreshes its history first), or (`inside` a transform) its base is a
    tensor of a level, which the view joins (`dispatch._top`)."""
    return x._requires_grad or x._vc[0] != x._view_version or \
        inside and x._base._lvl is not None


def _saves(prim, i, needs):
    """Whether a node of `prim` whose inputs need gradients as `needs` says saves input `i`:
    the inputs its vjp reads (`save`), less those that only rules which will not run read
    (`save_when`, where the primitive declares it), as `record_eager`."""
    if prim.save is not None and i not in prim.save:
        return False
    when = getattr(prim, "save_when", None)
    return when is None or when[i] is None or any(needs[j] for j in when[i])


def unary_op(prim, slow, params_for=None):
    """`slow(input)`, the public op of unary primitive `prim`, with its common case in one
    frame (NOTE [one-frame ops]); `params_for(array)`: the params (a dict shared between
    calls, as rules only read them) the public op passes the primitive for that input, where
    it passes any (a full reduction's dims)."""
    if prim.multiple_results or prim.is_view or prim.nondiff_inputs or prim.nondiff_outputs \
            or prim.plain is None or QUIET_NUMPY is None:
        return slow
    record, save_x, save_out = prim.differentiable, _saves(prim, 0, (True,)), prim.save_output

    def op(input):
        if type(input) is not Tensor or input._lvl is not None or dispatch._eager is not process:
            return slow(input)
        inside = _tls.interpreters
        if input._base is not None and _general_view(input, inside):
            return slow(input)
        d = input._data
        if type(d) is not _ndarray:
            return slow(input)
        dt = d.dtype
        if dt is not _F64 and dt is not _F32:
            return slow(input)
        params = NO_PARAMS if params_for is None else params_for(d)
        token = _quiet(_IGNORE_ALL)
        try:
            out = prim.plain(_np, d) if params is NO_PARAMS else prim.plain(_np, d, **params)
        except ValueError:      # the impl's own error, from the general path
            out = None
        finally:
            _loud(token)
        if out is None:
            return slow(input)
        if type(out) is not _ndarray:
            out = _np.asarray(out)
        t = _new(Tensor)
        t._data = out
        t._lvl = t.grad_fn = None
        t._output_nr = 0
        t._vc = vc = {0: 0}
        if inside:      # (as `bind` marks what a primitive makes inside a transform)
            t._born = _entered[0]
        if not (record and input._requires_grad and _grad_state.grad_enabled):
            t._requires_grad = False
            return t
        if inside or out.dtype is not dt or _hooks_state.stack or _anomaly.enabled:
            t._requires_grad = False
            record_eager(prim, params, (input,), [t])
            return t
        node = _new(PrimNode)
        node._seq = next(_seq)
        node.prim = prim
        node.params = params
        node.needs_input_grad = _NEEDS1
        node._nrs = _Z1
        shapes = (d.shape,)
        node.shapes = _shape_tuples.get(shapes) or shared_shapes(shapes)
        node.dtypes = (_D64 if dt is _F64 else _D32)[0]
        fn = input.grad_fn
        k = 0
        if fn is None:
            node._fns = accumulator(input)      # NOTE [node footprint]: no tuple
            node._saved = (SavedTensor(input),) if save_x else _NOTHING_SAVED
        else:
            node._fns = fn
            nr = input._output_nr
            if nr:
                node._nrs = (nr,)
            if save_x:
                node._saved = ((_COMPACT, d, input._vc[0], 0, 0),)
                node._vc0 = input._vc
                k = 1
            else:
                node._saved = _NOTHING_SAVED
        if save_out:
            node._saved_outs = ((_COMPACT, out, 0, 0, k),)
            if k:
                node._vc1 = vc
            else:
                node._vc0 = vc
        else:
            node._saved_outs = None
        t._requires_grad = True
        t.grad_fn = node
        return t
    functools.update_wrapper(op, slow)     # its name, docs and signature are the public op's
    op.prim = prim
    return op


def binary_op(prim, slow, reflected=False):
    """`slow(x, y)`, the public op of binary primitive `prim`, with its common case in one
    frame (NOTE [one-frame ops]); `reflected`: the function is `y.__rop__(x)`, called with
    the arguments the other way round."""
    if prim.multiple_results or prim.is_view or prim.nondiff_inputs or prim.nondiff_outputs \
            or not prim.number_edges or prim.save_output or prim.plain is None \
            or QUIET_NUMPY is None:
        return slow if not reflected else _reflected(slow)
    record, floats = prim.differentiable, prim.float_op
    # by needs[0], needs[1]: the node's needs_input_grad and whether it saves x and y
    plans = [[(_NEEDS[nx][ny], _saves(prim, 0, (nx, ny)), _saves(prim, 1, (nx, ny)))
              for ny in (False, True)] for nx in (False, True)]

    def op(x, y):
        if reflected:
            x, y = y, x
        if dispatch._eager is not process:
            return slow(x, y)
        inside = _tls.interpreters
        tx, ty = type(x), type(y)
        if tx is Tensor:
            if x._lvl is not None or x._base is not None and _general_view(x, inside):
                return slow(x, y)
            dx = x._data
            if type(dx) is not _ndarray:
                return slow(x, y)
            dt = dx.dtype
            if dt is not _F64 and dt is not _F32:
                return slow(x, y)
            if ty is Tensor:
                if y._lvl is not None or y._base is not None and _general_view(y, inside):
                    return slow(x, y)
                dy = y._data
                if type(dy) is not _ndarray or dy.dtype is not dt:
                    return slow(x, y)
                nx, ny = x._requires_grad, y._requires_grad
            elif ty is float or ty is int:
                dy = y
                nx, ny = x._requires_grad, False
            else:
                return slow(x, y)
        elif ty is Tensor and (tx is float or tx is int):
            if y._lvl is not None or y._base is not None and _general_view(y, inside):
                return slow(x, y)
            dy = y._data
            if type(dy) is not _ndarray:
                return slow(x, y)
            dt = dy.dtype
            if dt is not _F64 and dt is not _F32:
                return slow(x, y)
            dx = x
            nx, ny = False, y._requires_grad
        else:
            return slow(x, y)
        if floats is not None and dt is _F64 and (tx is float or tx is Tensor and not dx.ndim) \
                and (ty is float or ty is Tensor and not dy.ndim) \
                and (floats is not _truediv or dy):     # (x / 0: NumPy's inf or nan)
            out = _np.asarray(floats(float(dx), float(dy)))
        else:
            token = _quiet(_IGNORE_ALL)
            try:
                out = prim.plain(_np, dx, dy)
            except ValueError:      # the impl's own error (broadcasting), from the general path
                return slow(x, y)
            finally:
                _loud(token)
            if type(out) is not _ndarray:
                out = _np.asarray(out)
        t = _new(Tensor)
        t._data = out
        t._lvl = t.grad_fn = None
        t._output_nr = 0
        t._vc = {0: 0}
        if inside:      # (as `bind` marks what a primitive makes inside a transform)
            t._born = _entered[0]
        if not (record and (nx or ny) and _grad_state.grad_enabled):
            t._requires_grad = False
            return t
        if inside or out.dtype is not dt or _hooks_state.stack or _anomaly.enabled:
            t._requires_grad = False
            record_eager(prim, {}, (x, y), [t])
            return t
        node = _new(PrimNode)
        node._seq = next(_seq)
        node.prim = prim
        node.params = NO_PARAMS
        node.needs_input_grad, save_x, save_y = plans[nx][ny]
        node._saved_outs = None
        vcs = 0                 # version counters stored so far (NOTE [node footprint])
        if tx is Tensor:
            sx = dx.shape
            if nx:
                fx = x.grad_fn
                if fx is None:
                    fx, rx = accumulator(x), 0
                    kx = SavedTensor(x) if save_x else _NOT_SAVED
                else:
                    rx = x._output_nr
                    kx = _NOT_SAVED
                    if save_x:
                        kx = (_COMPACT, dx, x._vc[0], 0, 0)
                        node._vc0 = x._vc
                        vcs = 1
            else:
                fx = None
                rx = 0
                kx = _NOT_SAVED
                if save_x:
                    kx = (_COMPACT, dx, x._vc[0], -1, 0)
                    node._vc0 = x._vc
                    vcs = 1
        else:
            fx, rx, kx, sx = None, 0, x, None
        if ty is Tensor:
            sy = dy.shape
            if ny:
                fy = y.grad_fn
                if fy is None:
                    fy, ry = accumulator(y), 0
                    ky = SavedTensor(y) if save_y else _NOT_SAVED
                else:
                    ry = y._output_nr
                    ky = _NOT_SAVED
                    if save_y:
                        ky = (_COMPACT, dy, y._vc[0], 1, vcs)
                        if vcs:
                            node._vc1 = y._vc
                        else:
                            node._vc0 = y._vc
            else:
                fy = None
                ry = 0
                ky = _NOT_SAVED
                if save_y:
                    ky = (_COMPACT, dy, y._vc[0], -1, vcs)
                    if vcs:
                        node._vc1 = y._vc
                    else:
                        node._vc0 = y._vc
        else:
            fy, ry, ky, sy = None, 0, y, None
        node._fns = fx if fy is None and fx is not None else (fx, fy)
        node._nrs = _Z2 if not (rx or ry) else (rx, ry)
        shapes = (sx, sy)
        node.shapes = _shape_tuples.get(shapes) or shared_shapes(shapes)
        dtypes = _D64 if dt is _F64 else _D32
        node.dtypes = dtypes[1] if sx is not None and sy is not None else \
            dtypes[2] if sy is None else dtypes[3]
        node._saved = (kx, ky)
        t._requires_grad = True
        t.grad_fn = node
        return t
    functools.update_wrapper(op, slow)     # its name, docs and signature are the public op's
    op.prim = prim
    return op


def _reflected(slow):
    def op(y, x):
        return slow(x, y)
    functools.update_wrapper(op, slow)
    return op


def select_op(prim, slow):
    """`slow(x, index)`, the public `x[index]` of basic-index view primitive `prim`, with its
    common case in one frame (NOTE [one-frame ops]): an int index into a plain tensor that
    records nothing (a batch taken from a data set), a view as `process` makes it."""
    real_only = not prim.complex

    def op(x, index):
        if type(index) is not int or type(x) is not Tensor or x._lvl is not None \
                or x._base is not None or _tls.interpreters or dispatch._eager is not process \
                or x._requires_grad and _grad_state.grad_enabled:
            return slow(x, index)
        d = x._data
        if type(d) is not _ndarray or not d.ndim or real_only and d.dtype.kind == "c" \
                or not -d.shape[0] <= index < d.shape[0]:
            return slow(x, index)
        t = _new(Tensor)
        t._data = d[index, ...]         # as the primitive: a 0-d view, not a NumPy scalar
        t._lvl = t.grad_fn = None
        t._requires_grad = False
        t._output_nr = 0
        mark_view(prim, x, {"index": (index,)}, t)
        return t
    functools.update_wrapper(op, slow)
    return op
