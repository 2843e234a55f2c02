"""check_function: one call checks a custom Function under every mode a user may run it in.

    report = arraygrad.autograd.check_function(MyCube, arraygrad.randn(3, 4),
                                               raise_on_failure=False)
    print(report)                 # one row per mode: passed / failed / not supported / error
    report["vmap"].diagnosis      # e.g. "wrong out_dims: ..."

# NOTE [check_function]
The Function is seen as a map from its floating-point tensor inputs (as
float64 copies) to its differentiable outputs, the other arguments held
fixed. Every mode computes something a reference also gives: the Jacobian
(eager backward row by row, forward AD column by column, func.grad/vjp/jvp,
jacrev, jacfwd), the second derivatives of s(x) = sum_k <w_k, f_k(x)> for
fixed random w (double backward, grad(grad), hessian), or values over a batch
(vmap against a loop, vmap(grad) against per-sample eager backward). The
reference is central differences of the Function itself, or the user's
`reference` function (arraygrad ops, differentiated by eager autograd, also
compared in values). Modes run in strict mode (`set_strict`), so the ctx lints
and a gradient that torch would silently sum to the input's shape fail with
their own diagnosis. A mode that raises the error for something the Function
does not declare (setup_context for transforms, a jvp, a vmap rule) is "not
supported", with that error as the user would get it.
"""
import os
import traceback
import warnings

import numpy as np

from .._tensor import Tensor
from ..dtypes import float64
from ..utils._pytree import tree_flatten, tree_unflatten
from . import engine
from .check_report import (CheckReport, Mismatch, ModeResult, PASSED, FAILED, NOT_SUPPORTED,
                           ERROR)
from .function import Function, set_strict, _SingleLevelFunction
from .function import has_setup_context as _has_setup_context
from .gradcheck import (GradcheckError, gradcheck, gradgradcheck, _numerical, _pattern_hint,
                        _forward_jacobian)
from .. import func as _func
from ..ops.creation import tensor, zeros
from ..ops.shape import stack

__all__ = ["check_function", "CheckFunctionError", "MODES"]

MODES = ("backward", "double_backward", "gradcheck", "gradgradcheck", "forward_ad", "grad", "vjp",
         "jvp", "vmap", "vmap_grad", "grad_grad", "jacrev", "jacfwd", "hessian", "jvp_vs_backward")
_SECOND_ORDER = ("double_backward", "gradgradcheck", "grad_grad", "hessian")
_FORWARD = ("forward_ad", "jvp", "jacfwd")


class CheckFunctionError(GradcheckError):
    """Raised by check_function when a mode fails; `.report` is the CheckReport."""


def check_function(fn, *example_inputs, modes=None, reference=None, atol=1e-5, rtol=1e-3,
                   eps=1e-6, batch_size=3, seed=0, raise_on_failure=True):
    """Check `fn.apply` at `example_inputs` under eager backward, double backward,
    gradcheck/gradgradcheck, forward AD, func.grad/vjp/jvp, vmap (in_dims 0, 1 and
    None mixes), vmap(grad), grad(grad), jacrev, jacfwd, hessian and the agreement of
    jvp with backward (`modes=` picks a subset of `MODES`).

    Floating-point tensors among the inputs are differentiated (only those with
    requires_grad=True if any has it); other arguments are held fixed. `reference`,
    a function of the same arguments built from arraygrad ops, replaces finite
    differences and is compared in values too. Returns a CheckReport; raises
    CheckFunctionError (with `.report`) on a failure when `raise_on_failure`.
    """
    if not (isinstance(fn, type) and issubclass(fn, Function)):
        raise TypeError(f"check_function expects an autograd.Function subclass as its first "
                        f"argument, got {fn!r}")
    if modes is None:
        modes = MODES
    elif isinstance(modes, str):
        modes = (modes,)
    unknown = [m for m in modes if m not in MODES]
    if unknown:
        raise ValueError(f"check_function: unknown mode(s) {unknown}; the modes are {list(MODES)}")
    p = _Problem(fn, example_inputs, reference, atol, rtol, eps, batch_size, seed)
    results = []
    if reference is not None:
        results.append(_run(p, "values", _check_values))
    for mode in modes:
        results.append(_run(p, mode, _CHECKS[mode]))
    report = CheckReport(f"check_function({p.signature}), in float64", results)
    if raise_on_failure and not report.passed:
        err = CheckFunctionError(str(report))
        err.report = report
        raise err
    return report


# ----------------------------------------------------------------- the problem
class _Problem:
    """The Function as a map from its differentiable inputs to its differentiable outputs."""

    def __init__(self, fn, inputs, reference, atol, rtol, eps, batch_size, seed):
        self.fn, self.reference = fn, reference
        self.atol, self.rtol, self.eps, self.batch_size = atol, rtol, eps, batch_size
        self.rng = np.random.default_rng(seed)
        flat, self.spec = tree_flatten(tuple(inputs))
        floating = [j for j, a in enumerate(flat) if isinstance(a, Tensor) and
                    a.dtype.is_floating_point]
        marked = [j for j in floating if flat[j].requires_grad]
        self.diff_pos = marked or floating
        if not self.diff_pos:
            raise ValueError(f"check_function({fn.__name__}): no floating-point tensor among the "
                             "example inputs to differentiate")
        self.flat = [a.detach() if isinstance(a, Tensor) else a for a in flat]
        self.xs = [self.flat[j].to(float64) for j in self.diff_pos]
        names = _leaf_names(inputs, "input")
        self.in_names = [names[j] for j in self.diff_pos]
        self.signature = f"{fn.__name__}({', '.join(_describe(a) for a in inputs)})"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")     # the modes report what this run would warn
            out = self.apply(fn, self.leaves())
        out_leaves = tree_flatten(out)[0]
        self.out_pos = [k for k, o in enumerate(out_leaves) if isinstance(o, Tensor) and
                        o.dtype.is_floating_point and o.requires_grad]
        if not self.out_pos:
            raise ValueError(f"check_function({fn.__name__}): no output is differentiable (a "
                             "floating-point tensor that requires grad) at these inputs")
        out_names = _leaf_names(out, "output")
        self.out_names = [out_names[k] for k in self.out_pos]
        self.out_shapes = [tuple(out_leaves[k].shape) for k in self.out_pos]
        self.ws = [self.randn(s) for s in self.out_shapes]
        self._ref = {}

    def randn(self, shape):
        return tensor(self.rng.standard_normal(shape), dtype=float64)

    def leaves(self):
        """Fresh float64 leaves that require grad, one per differentiable input."""
        return [x.detach().requires_grad_() for x in self.xs]

    def apply(self, fn, xs):
        flat = list(self.flat)
        for j, x in zip(self.diff_pos, xs):
            flat[j] = x
        return (fn.apply if fn is self.fn else fn)(*tree_unflatten(flat, self.spec))

    def call(self, *xs):
        return self.pick(self.apply(self.fn, xs))

    def pick(self, out):
        leaves = tree_flatten(out)[0]
        return tuple(leaves[k] for k in self.out_pos)

    def scalar(self, *xs):
        return sum((o * w).sum() for o, w in zip(self.call(*xs), self.ws))

    # the references, computed once on first use
    def jacobian(self):
        if "J" not in self._ref:
            if self.reference is None:
                xs = [x.detach() for x in self.xs]
                self._ref["J"] = _numerical(self.call, xs, xs, list(self.call(*xs)), self.eps)
            else:
                xs = self.leaves()
                outs = self.pick(self.apply(self.reference, xs))
                self._ref["J"] = _rows(outs, xs, create_graph=False)
        return self._ref["J"]

    def hessian(self):
        """H[a][i]: d(grad of input a of s)/d(input i), (numel i, numel a)."""
        if "H" not in self._ref:
            fn = self.fn if self.reference is None else self.reference

            def grad_s(*xs):
                xs = [x.detach().requires_grad_() for x in xs]
                s = sum((o * w).sum() for o, w in zip(self.pick(self.apply(fn, xs)), self.ws))
                return tuple(engine.grad([s], xs, allow_unused=True, materialize_grads=True))
            xs = [x.detach() for x in self.xs]
            self._ref["H"] = _numerical(grad_s, xs, xs, list(grad_s(*xs)), self.eps)
        return self._ref["H"]

    def expected_name(self):
        return "finite differences" if self.reference is None else "reference"


def _leaf_names(tree, what):
    """'input 0', 'input 1.2' (leaf 2 of a container argument)...: a name per leaf."""
    if not isinstance(tree, tuple):
        tree = (tree,)
    names = []
    for p, a in enumerate(tree):
        leaves = tree_flatten(a)[0]
        if len(leaves) == 1 and leaves[0] is a:
            names.append(f"{what} {p}")
        else:
            names.extend(f"{what} {p}.{j}" for j in range(len(leaves)))
    return names


def _describe(a):
    if isinstance(a, Tensor):
        return f"{a.dtype.name}{list(a.shape)}"
    if isinstance(a, (list, tuple)):
        inner = ", ".join(_describe(x) for x in a)
        return f"[{inner}]" if isinstance(a, list) else f"({inner})"
    return repr(a)


def _np(t):
    return np.array(t.detach().numpy(), dtype=np.float64)


def _rows(outs, xs, create_graph):
    """The Jacobian of `outs` by eager backward, one row (output element) at a time."""
    jac = [[np.zeros((x.numel(), o.numel())) for x in xs] for o in outs]
    for k, o in enumerate(outs):
        if not o.requires_grad:
            continue
        for j in range(o.numel()):
            g = zeros(tuple(o.shape), dtype=o.dtype)
            g._data.reshape(-1)[j] = 1
            grads = engine.grad([o], xs, [g], retain_graph=True, allow_unused=True,
                                create_graph=create_graph)
            for i, gi in enumerate(grads):
                if gi is not None:
                    jac[k][i][:, j] = _np(gi).reshape(-1)
    return jac


# ----------------------------------------------------------------- running a mode
def _claims(cls):
    """What the Function declares: setup_context (transforms), a jvp, a vmap rule."""
    out = set()
    if _has_setup_context(cls):
        out.add("setup_context")
    if cls.jvp is not _SingleLevelFunction.jvp:
        out.add("jvp")
    if cls.generate_vmap_rule or cls.vmap is not Function.vmap:
        out.add("vmap")
    return out


def _run(p, mode, check):
    with warnings.catch_warnings(record=True) as caught, set_strict(True):
        warnings.simplefilter("always")
        try:
            result = check(p, mode)
        except Exception as e:
            result = _from_exception(p, mode, e)
    result.warnings = [str(w.message) for w in caught]
    return result


# the errors a user gets for what a Function does not declare
_UNSUPPORTED = {"setup_context": ("must override the setup_context staticmethod",),
                "jvp": ("implement the jvp function", "has no jvp staticmethod"),
                "vmap": ("but it does not have vmap support",)}


def _from_exception(p, mode, e):
    msg = f"{type(e).__name__}: {e}"
    if _unsupported(p, e):
        return ModeResult(mode, NOT_SUPPORTED, msg)
    diagnosis = _error_diagnosis(p, str(e))
    if diagnosis is None:
        root = e
        while root.__cause__ is not None:
            root = root.__cause__
        where = traceback.extract_tb(root.__traceback__)[-1]
        msg += f" (raised at {os.path.basename(where.filename)}:{where.lineno} in {where.name})"
    return ModeResult(mode, FAILED if diagnosis else ERROR, msg, diagnosis)


def _unsupported(p, e):
    """Whether `e` is the error for something the Function does not declare; a jvp
    derived from backward that failed for another reason is that other error."""
    claims = _claims(p.fn)
    msg = str(e)
    for c, signs in _UNSUPPORTED.items():
        if c not in claims and any(s in msg for s in signs):
            if "has no jvp staticmethod" in msg and e.__cause__ is not None:
                return _unsupported(p, e.__cause__)
            return True
    return False


def _error_diagnosis(p, text):
    if "would sum it to the input's shape" in text:
        return ("missing sum over a broadcast dim: backward returned the gradient of an input "
                "that forward broadcast without summing it back to the input's shape "
                "(g.sum_to_size(x.shape)); only eager backward fixes that up")
    if "holds an input or output" in text or "holds a tensor that requires grad" in text or \
            "was modified in place after forward" in text:
        return ("state on ctx: a tensor kept as a ctx attribute instead of with "
                "ctx.save_for_backward(...) (" + text.split(";")[0] + ")")
    if "differentiate twice" in text:
        return "not differentiable twice: " + _twice_reason(p)
    return None


def _twice_reason(p):
    backward = p.fn.vjp if p.fn.vjp is not _SingleLevelFunction.vjp else p.fn.backward
    if getattr(backward, "_once_differentiable", False):
        return "backward is marked @once_differentiable"
    return ("backward's result does not depend on its inputs through arraygrad ops (NumPy, "
            ".detach(), no_grad or .data inside backward?)")


def _result(p, mode, expected, got, names, exp_name=None, got_name="got", diagnose=None):
    """Compare Jacobian-like blocks [k][i] (numel in i, numel k): passed or failed."""
    rows_names, col_names, row_shapes, col_shapes = names
    ms = []
    for k in range(len(expected)):
        for i in range(len(expected[k])):
            e, g = expected[k][i], got[k][i]
            if not np.allclose(g, e, rtol=p.rtol, atol=p.atol):
                ms.append(Mismatch(f"{col_names[k]} w.r.t. {rows_names[i]}", e, g,
                                   rows_names[i], row_shapes[i], col_names[k], col_shapes[k],
                                   p.atol, p.rtol, exp_name or p.expected_name(), got_name))
    if not ms:
        return ModeResult(mode, PASSED)
    diagnosis = (diagnose or _jacobian_diagnosis)(p, mode, ms)
    return ModeResult(mode, FAILED, f"{len(ms)} Jacobian block(s) differ from the "
                      f"{exp_name or p.expected_name()}", diagnosis, ms)


def _first_order_names(p):
    return p.in_names, p.out_names, [x.shape for x in p.xs], p.out_shapes


def _second_order_names(p):
    return (p.in_names, [f"grad of {n}" for n in p.in_names], [x.shape for x in p.xs],
            [tuple(x.shape) for x in p.xs])


def _second_order_reference(p):
    return ("finite differences of the gradient" if p.reference is None else
            "finite differences of the reference's gradient")


def _rule(p, mode):
    if mode in _FORWARD or mode == "hessian":
        return "jvp" if "jvp" in _claims(p.fn) else "the jvp derived from backward"
    return "backward"


def _jacobian_diagnosis(p, mode, ms):
    m = ms[0]
    e, g, bad = m.expected, m.got, m.bad
    rule = _rule(p, mode)
    if mode in _SECOND_ORDER and not np.any(g) and np.any(e):
        return "not differentiable twice: " + _twice_reason(p)
    if e.shape[0] == e.shape[1] and e.shape[0] > 1 and \
            not np.allclose(e, e.T, rtol=p.rtol, atol=p.atol) and \
            np.allclose(g, e.T, rtol=p.rtol, atol=p.atol):
        return (f"transposed Jacobian: {rule} multiplies by J where J^T is needed (or the "
                "reverse): a missing .t()/.mT or swapped matmul operands?")
    hint = _pattern_hint(e, g, bad)
    if hint is None:
        return None
    hint = hint[len("hint: "):].replace("analytical gradient", "result").replace(
        "analytical", "got").replace("numerical", "expected").replace(" in backward", "")
    where = f"{hint} (in {rule})"
    if mode in _FORWARD and rule == "jvp" and _backward_agrees(p):
        where += "; backward agrees with the reference, so the jvp staticmethod is wrong"
    return where


def _backward_agrees(p):
    try:
        got = _eager_jacobian(p)
    except Exception:
        return False
    return all(np.allclose(g, e, rtol=p.rtol, atol=p.atol)
               for gk, ek in zip(got, p.jacobian()) for g, e in zip(gk, ek))


def _eager_jacobian(p):
    xs = p.leaves()
    return _rows(p.call(*xs), xs, create_graph=False)


# ----------------------------------------------------------------- the modes
def _check_values(p, mode):
    xs = [x.detach() for x in p.xs]
    got = [_np(o) for o in p.call(*xs)]
    exp = [_np(o) for o in p.pick(p.apply(p.reference, xs))]
    ms = [Mismatch(f"{p.out_names[k]} value", e.reshape(1, -1), g.reshape(1, -1), "value", (1,),
                   p.out_names[k], e.shape, p.atol, p.rtol, "reference")
          for k, (e, g) in enumerate(zip(exp, got))
          if e.shape != g.shape or not np.allclose(g, e, rtol=p.rtol, atol=p.atol)]
    if ms:
        return ModeResult(mode, FAILED, "forward's values differ from the reference's", None, ms)
    return ModeResult(mode, PASSED)


def _check_backward(p, mode):
    return _result(p, mode, p.jacobian(), _eager_jacobian(p), _first_order_names(p))


def _check_double_backward(p, mode):
    xs = p.leaves()
    gs = engine.grad([p.scalar(*xs)], xs, create_graph=True, allow_unused=True,
                     materialize_grads=True)
    return _result(p, mode, p.hessian(), _rows(gs, xs, create_graph=False),
                   _second_order_names(p),
                   exp_name=_second_order_reference(p))


def _check_gradcheck(p, mode):
    check = gradcheck if mode == "gradcheck" else gradgradcheck
    try:
        check(p.call, tuple(p.leaves()), eps=p.eps, atol=p.atol, rtol=p.rtol)
    except GradcheckError as e:
        ms = e.report.results[0].mismatches if e.report is not None else []
        diagnosis = _error_diagnosis(p, str(e))
        if diagnosis is None and ms:
            diagnosis = _jacobian_diagnosis(p, mode if mode == "gradcheck" else "gradgradcheck",
                                            ms)
        first = str(e).splitlines()[0].rstrip(",")
        return ModeResult(mode, FAILED, f"GradcheckError: {first}", diagnosis, ms)
    return ModeResult(mode, PASSED)


def _check_forward_ad(p, mode):
    xs = [x.detach() for x in p.xs]
    got = _forward_jacobian(p.call, xs, xs, list(p.call(*xs)))
    return _result(p, mode, p.jacobian(), got, _first_order_names(p))


def _one_hots(shapes):
    """(position, one-hot tensors of `shapes`) for every element of every shape."""
    for i, s in enumerate(shapes):
        for j in range(int(np.prod(s, dtype=np.int64))):
            ts = [zeros(sh, dtype=float64) for sh in shapes]
            ts[i]._data.reshape(-1)[j] = 1
            yield i, j, ts


def _empty_jacobian(p):
    return [[np.zeros((x.numel(), int(np.prod(s, dtype=np.int64)))) for x in p.xs]
            for s in p.out_shapes]


def _check_grad(p, mode):
    xs = [x.detach() for x in p.xs]
    argnums = tuple(range(len(xs)))
    got = _empty_jacobian(p)
    for k, j, ws in _one_hots(p.out_shapes):
        w = ws[k]
        g = _func.grad(lambda *a: (p.call(*a)[k] * w).sum(), argnums=argnums)(*xs)
        for i, gi in enumerate(g):
            got[k][i][:, j] = _np(gi).reshape(-1)
    return _result(p, mode, p.jacobian(), got, _first_order_names(p))


def _vjp_jacobian(p):
    _, pullback = _func.vjp(p.call, *[x.detach() for x in p.xs])
    got = _empty_jacobian(p)
    for k, j, ws in _one_hots(p.out_shapes):
        for i, gi in enumerate(pullback(tuple(ws))):
            got[k][i][:, j] = _np(gi).reshape(-1)
    return got


def _jvp_jacobian(p):
    xs = tuple(x.detach() for x in p.xs)
    got = _empty_jacobian(p)
    for i, j, ts in _one_hots([tuple(x.shape) for x in xs]):
        _, outs = _func.jvp(p.call, xs, tuple(ts))
        for k, t in enumerate(outs):
            got[k][i][j] = _np(t).reshape(-1)
    return got


def _check_vjp(p, mode):
    return _result(p, mode, p.jacobian(), _vjp_jacobian(p), _first_order_names(p))


def _check_jvp(p, mode):
    return _result(p, mode, p.jacobian(), _jvp_jacobian(p), _first_order_names(p))


def _check_jac(p, mode):
    transform = _func.jacrev if mode == "jacrev" else _func.jacfwd
    xs = [x.detach() for x in p.xs]
    res = transform(p.call, argnums=tuple(range(len(xs))))(*xs)
    got = [[_np(res[k][i]).reshape(int(np.prod(p.out_shapes[k], dtype=np.int64)), -1).T
            for i in range(len(xs))] for k in range(len(p.out_shapes))]
    return _result(p, mode, p.jacobian(), got, _first_order_names(p))


def _check_hessian(p, mode):
    xs = [x.detach() for x in p.xs]
    res = _func.hessian(p.scalar, argnums=tuple(range(len(xs))))(*xs)
    got = [[_np(res[a][i]).reshape(xs[a].numel(), -1).T for i in range(len(xs))]
           for a in range(len(xs))]
    return _result(p, mode, p.hessian(), got, _second_order_names(p),
                   exp_name=_second_order_reference(p))


def _check_grad_grad(p, mode):
    xs = [x.detach() for x in p.xs]
    argnums = tuple(range(len(xs)))
    inner = _func.grad(p.scalar, argnums=argnums)
    got = [[np.zeros((xi.numel(), xa.numel())) for xi in xs] for xa in xs]
    for a, j, vs in _one_hots([tuple(x.shape) for x in xs]):
        v = vs[a]
        gg = _func.grad(lambda *z: (inner(*z)[a] * v).sum(), argnums=argnums)(*xs)
        for i, g in enumerate(gg):
            got[a][i][:, j] = _np(g).reshape(-1)
    return _result(p, mode, p.hessian(), got, _second_order_names(p),
                   exp_name=_second_order_reference(p))


def _check_jvp_vs_backward(p, mode):
    """J from jvp (columns) against J from vjp (rows): <v, J u> both ways, for all u, v."""
    by_backward = _vjp_jacobian(p)
    by_jvp = _jvp_jacobian(p)

    def diagnose(p, mode, ms):
        ref = p.jacobian()
        agree = [name for name, jac in (("backward", by_backward), ("jvp", by_jvp))
                 if all(np.allclose(g, e, rtol=p.rtol, atol=p.atol)
                        for gk, ek in zip(jac, ref) for g, e in zip(gk, ek))]
        which = (f"; {agree[0]} agrees with the {p.expected_name()}" if len(agree) == 1 else
                 "; neither agrees with the " + p.expected_name() if not agree else "")
        return "jvp and backward disagree: <v, J u> differs when computed by jvp and by " \
               "backward" + which
    return _result(p, mode, by_backward, by_jvp, _first_order_names(p), exp_name="backward",
                   got_name="jvp", diagnose=diagnose)


# vmap: values of a batch against a loop of unbatched calls
def _in_dims_combos(p):
    n = len(p.xs)
    ones = tuple(1 if x.dim() >= 1 else 0 for x in p.xs)
    combos = [(0,) * n, ones]
    if n > 1:
        combos += [(None,) + (0,) * (n - 1), (0,) * (n - 1) + (None,)]
    seen = []
    for c in combos:
        if c not in seen:
            seen.append(c)
    return seen


def _sample(x, b):
    return x * (1 + 0.1 * b) + 0.05 * b


def _batched(p, in_dims):
    """(per-sample inputs for each batch index, the batched arguments)."""
    B = p.batch_size
    per = [[_sample(x, b) if d is not None else x for x, d in zip(p.xs, in_dims)]
           for b in range(B)]
    args = [stack([per[b][i] for b in range(B)], d) if d is not None else x
            for i, (x, d) in enumerate(zip(p.xs, in_dims))]
    return per, args


def _check_vmap(p, mode):
    ms, notes, diagnosis = [], [], None
    rule = "its vmap staticmethod" if p.fn.vmap is not Function.vmap else "the generated rule"
    combos = _in_dims_combos(p)
    failed_combos = []
    for in_dims in combos:
        per, args = _batched(p, in_dims)
        expected = [np.stack([_np(o) for o in outs])
                    for outs in zip(*[p.call(*xs) for xs in per])]
        got = [_np(o) for o in _func.vmap(p.call, in_dims=in_dims)(*args)]
        bad = False
        for k, (e, g) in enumerate(zip(expected, got)):
            if e.shape == g.shape and np.allclose(g, e, rtol=p.rtol, atol=p.atol):
                continue
            bad = True
            diagnosis = diagnosis or _out_dims_diagnosis(p, e, g, k)
            if e.shape != g.shape:
                notes.append(f"in_dims={in_dims}: {p.out_names[k]} has shape {list(g.shape)}, "
                             f"expected {list(e.shape)}")
            else:
                ms.append(Mismatch(f"vmap in_dims={in_dims}: {p.out_names[k]}",
                                   e.reshape(p.batch_size, -1), g.reshape(p.batch_size, -1),
                                   "batch", (p.batch_size,), p.out_names[k], e.shape[1:],
                                   p.atol, p.rtol, "loop", "vmap"))
        if bad:
            failed_combos.append(in_dims)
    if not failed_combos:
        return ModeResult(mode, PASSED, f"in_dims {combos} with {rule}")
    if combos[0] not in failed_combos:
        diagnosis = (f"{rule} ignores in_dims: right for in_dims={combos[0]}, wrong for "
                     f"{failed_combos}" + (f" ({diagnosis})" if diagnosis else "") +
                     "; move the batch dim to the front (x.movedim(in_dims[0], 0)) or return "
                     "where it is in out_dims")
    msg = f"vmap with {rule} differs from a loop for in_dims {failed_combos}"
    if notes:
        msg += "; " + "; ".join(notes)
    return ModeResult(mode, FAILED, msg, diagnosis, ms)


def _out_dims_diagnosis(p, expected, got, k):
    """The result is the expected batch with its batch dim elsewhere: out_dims lies."""
    for q in range(got.ndim):           # the out_dims claimed...
        o = np.moveaxis(got, 0, q)
        for d in range(o.ndim):         # ...and where the batch dim really was
            cand = np.moveaxis(o, d, 0)
            if d != q and cand.shape == expected.shape and np.allclose(
                    cand, expected, rtol=p.rtol, atol=p.atol):
                where = (f"at dim {np.moveaxis(np.arange(got.ndim), 0, q)[d]}" if q == 0 or
                         d == 0 else f"moved (out_dims {q}, batch dim at {d}?)")
                return (f"wrong out_dims: in the vmap result, the batch dim of "
                        f"{p.out_names[k]} is {where}, not at 0: the out_dims the vmap rule "
                        "returns does not say where its output's batch dim is")
    return None


def _check_vmap_grad(p, mode):
    per, args = _batched(p, (0,) * len(p.xs))
    argnums = tuple(range(len(p.xs)))
    got = _func.vmap(_func.grad(p.scalar, argnums=argnums))(*args)
    expected = []
    for xs in per:
        xs = [x.detach().requires_grad_() for x in xs]
        expected.append(engine.grad([p.scalar(*xs)], xs, allow_unused=True,
                                    materialize_grads=True))
    ms = []
    for i, g in enumerate(got):
        e = np.stack([_np(gs[i]) for gs in expected]).reshape(p.batch_size, -1)
        g = _np(g).reshape(p.batch_size, -1)
        if e.shape != g.shape or not np.allclose(g, e, rtol=p.rtol, atol=p.atol):
            ms.append(Mismatch(f"vmap(grad) w.r.t. {p.in_names[i]}", e, g, "batch",
                               (p.batch_size,), f"grad of {p.in_names[i]}", p.xs[i].shape,
                               p.atol, p.rtol, "eager loop", "vmap(grad)"))
    if ms:
        return ModeResult(mode, FAILED, "per-sample gradients by vmap(grad) differ from eager "
                          "backward one sample at a time", None, ms)
    return ModeResult(mode, PASSED)


_CHECKS = {
    "backward": _check_backward,
    "double_backward": _check_double_backward,
    "gradcheck": _check_gradcheck,
    "gradgradcheck": _check_gradcheck,
    "forward_ad": _check_forward_ad,
    "grad": _check_grad,
    "vjp": _check_vjp,
    "jvp": _check_jvp,
    "vmap": _check_vmap,
    "vmap_grad": _check_vmap_grad,
    "grad_grad": _check_grad_grad,
    "jacrev": _check_jac,
    "jacfwd": _check_jac,
    "hessian": _check_hessian,
    "jvp_vs_backward": _check_jvp_vs_backward,
}
