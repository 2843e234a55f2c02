"""gradcheck / gradgradcheck: analytical gradients against finite differences (torch's API).

    x = arraygrad.randn(5, dtype=arraygrad.double, requires_grad=True)
    arraygrad.autograd.gradcheck(MySigmoid.apply, (x,))      # True, or GradcheckError

# NOTE [gradcheck report]
torch's failure message prints both Jacobians in full, unreadable past a few
dozen entries. Ours names the (output, input) pair, then lists the worst
entries (input element -> output element: numerical, analytical, difference),
how many entries are off, and the largest error; the full matrices follow
only when they are small.

# NOTE [complex gradcheck]
For complex inputs and outputs torch checks the real and the imaginary perturbation of
each input against the conjugate-Wirtinger gradients (NOTE [complex autograd]). The same
check is the real gradcheck of the function seen on real numbers: each complex input
that requires grad becomes two real leaves (its real and imaginary parts, joined again
by `complex()`) and each complex output its `view_as_real`. Backward through `complex`
and `view_as_real` turns the conjugate-Wirtinger gradient into exactly the columns and
rows of that real Jacobian, so a vjp missing a conjugate fails it, as in torch.
"""
import warnings

import numpy as np

from .._tensor import Tensor
from ..dtypes import float64
from ..func import vjp, vmap
from ..ops.complex import complex as _complex, view_as_real
from ..ops.creation import eye, ones, tensor, zeros, zeros_like
from ..ops.shape import stack
from ..utils._pytree import tree_flatten, tree_map
from . import engine, forward_ad
from .function import BackwardCFunction
from .batched import grad as batched_grad
from .check_report import CheckReport, Mismatch, ModeResult, FAILED

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]

_WORST = 8          # entries listed in a failure report
_FULL_MAX = 36      # Jacobians up to this many entries are also printed in full


class GradcheckError(RuntimeError):
    """Raised by gradcheck/gradgradcheck when a check fails. For a Jacobian mismatch,
    `.report` holds both Jacobians (`.report.plot()` draws them); otherwise None."""

    report = None


def _as_tuple(x):
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _tensors_in(x):
    return [t for t in tree_flatten(x)[0] if isinstance(t, Tensor)]


def _outputs(func, inputs):
    out = func(*inputs)
    return [o for o in tree_flatten(_as_tuple(out))[0] if isinstance(o, Tensor)]


def _np(t):
    return np.array(t.detach().numpy(), dtype=np.float64 if t.dtype.is_floating_point else None)


# ----------------------------------------------------------------- Jacobians
def _numerical(func, inputs, diff, outputs, eps):
    """Central differences: J[o][i] has shape (numel(input i), numel(output o))."""
    # the perturbation writes the raw data (no version bump), and func runs with grad
    # mode as the caller has it: gradgradcheck's func differentiates inside
    jac = [[np.zeros((x.numel(), o.numel())) for x in diff] for o in outputs]
    for i, x in enumerate(diff):
        data = x._data
        flat_idx = list(np.ndindex(*data.shape)) if data.ndim else [()]
        for j, idx in enumerate(flat_idx):
            orig = data[idx].copy()
            data[idx] = orig - eps
            lo = [_np(o) for o in _outputs(func, inputs)]
            data[idx] = orig + eps
            hi = [_np(o) for o in _outputs(func, inputs)]
            data[idx] = orig
            for k in range(len(outputs)):
                if outputs[k].dtype.is_floating_point:
                    jac[k][i][j] = ((hi[k] - lo[k]) / (2 * eps)).reshape(-1)
    return jac


def _analytical(outputs, diff, check_grad_dtypes):
    """Row by row with autograd.grad: J[o][i] (numel(input i), numel(output o))."""
    jac = [[np.zeros((x.numel(), o.numel())) for x in diff] for o in outputs]
    for k, o in enumerate(outputs):
        if not o.requires_grad:
            continue
        for j in range(o.numel()):
            g = zeros(tuple(o.shape), dtype=o.dtype)
            g._data.reshape(-1)[j] = 1
            grads = engine.grad([o], diff, [g], retain_graph=True, allow_unused=True)
            for i, (gi, x) in enumerate(zip(grads, diff)):
                if gi is None:
                    continue
                if tuple(gi.shape) != tuple(x.shape):
                    raise GradcheckError(f"Gradient for input {i} has shape {list(gi.shape)}, "
                                         f"expected {list(x.shape)} (output {k})")
                if check_grad_dtypes and gi.dtype is not x.dtype:
                    raise GradcheckError(f"Gradient has dtype mismatch: input {i} is {x.dtype}, "
                                         f"its gradient {gi.dtype}")
                jac[k][i][:, j] = _np(gi).reshape(-1)
    return jac


def _report(k, i, num, ana, atol, rtol, x, o):
    """The readable mismatch report of one (output, input) Jacobian block (NOTE above)."""
    diff = np.abs(num - ana)
    bad = diff > atol + rtol * np.abs(num)
    n_bad = int(bad.sum())
    order = np.argsort(-(diff * bad).reshape(-1), kind="stable")[:min(_WORST, n_bad)]
    lines = [f"Jacobian mismatch for output {k} with respect to input {i},",
             f"{n_bad} of {num.size} entries differ by more than atol + rtol * |numerical| "
             f"(atol={atol}, rtol={rtol}); largest |numerical - analytical| = "
             f"{diff.max():.6g}.",
             "worst entries (input element -> output element: numerical vs analytical):"]
    for flat in order:
        a, b = np.unravel_index(flat, num.shape)
        ii = np.unravel_index(a, tuple(x.shape)) if x.dim() else ()
        oi = np.unravel_index(b, tuple(o.shape)) if o.dim() else ()
        lines.append(f"  input {i}{list(map(int, ii))} -> output {k}{list(map(int, oi))}: "
                     f"numerical {num[a, b]:.8g} vs analytical {ana[a, b]:.8g} "
                     f"(diff {num[a, b] - ana[a, b]:+.3g})")
    hint = _pattern_hint(num, ana, bad)
    if hint:
        lines.append(hint)
    if num.size <= _FULL_MAX:
        lines.append(f"numerical:{np.array2string(num, precision=4)}")
        lines.append(f"analytical:{np.array2string(ana, precision=4)}")
    return "\n".join(lines)


def _pattern_hint(num, ana, bad):
    """Name a common mistake when the whole block shows it (sign, constant factor, zero)."""
    n, a = num[bad], ana[bad]
    if not np.any(n):
        return None
    if not np.any(a):
        return "hint: the analytical gradient is zero here: is a gradient missing or None?"
    if np.allclose(a, -n, rtol=1e-3, atol=1e-6):
        return "hint: analytical = -numerical: a sign error in backward?"
    nz = np.abs(n) > 1e-8
    ratio = a[nz] / n[nz]
    if ratio.size and np.allclose(ratio, ratio[0], rtol=1e-3):
        return (f"hint: analytical = {ratio[0]:.6g} * numerical everywhere: a missing or extra "
                "constant factor in backward?")
    return None


# ----------------------------------------------------------------- gradcheck
def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
              check_batched_grad=False, check_batched_forward_grad=False, check_forward_ad=False,
              check_backward_ad=True, fast_mode=False, masked=None):
    """Check the gradients of `func` at `inputs` against finite differences.

    Returns True, or raises GradcheckError (returns False with
    raise_exception=False). Inputs that require grad should be float64.
    """
    inputs = _as_tuple(inputs)
    all_tensors = _tensors_in(inputs)
    diff = [t for t in all_tensors if t.requires_grad]
    if not diff:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but "
                         "none of the them have requires_grad=True.")
    for i, t in enumerate(all_tensors):
        if t.requires_grad and t.dtype.name not in ("float64", "complex128"):
            warnings.warn(f"Input #{i} requires gradient and is not a double precision floating "
                          "point or complex. This check will likely fail if all the inputs are not "
                          "of double precision floating point or complex. ", UserWarning,
                          stacklevel=2)
    if not (check_forward_ad or check_backward_ad):
        raise ValueError("Expected at least one of check_forward_ad or check_backward_ad to be "
                         "True")
    if check_batched_forward_grad and not check_forward_ad:
        raise ValueError("check_batched_forward_grad requires check_forward_ad to be True")
    if check_batched_grad and not check_backward_ad:
        raise ValueError("check_batched_grad requires check_backward_ad to be True")
    func, inputs, diff = _realified(func, inputs, diff)
    try:
        return _gradcheck(func, inputs, diff, eps, atol, rtol, nondet_tol, check_undefined_grad,
                          check_grad_dtypes, check_batched_grad, check_batched_forward_grad,
                          check_forward_ad, check_backward_ad, fast_mode)
    except GradcheckError:
        if raise_exception:
            raise
        return False


def _realified(func, inputs, diff):
    """(func, inputs, diff) over real numbers where complex values take part (NOTE
    [complex gradcheck]); unchanged otherwise."""
    if not any(t.dtype.is_complex for t in diff) and not any(
            o.dtype.is_complex for o in _outputs(func, inputs)):
        return func, inputs, diff
    if any(t.dtype.is_complex for t in diff if not any(t is v for v in inputs)):
        raise NotImplementedError("gradcheck: complex inputs that require grad must be "
                                  "arguments of func themselves, not inside containers")
    real, parts = [], []
    for v in inputs:
        if isinstance(v, Tensor) and v.requires_grad and v.dtype.is_complex:
            pair = [p.detach().clone().requires_grad_() for p in (v.real, v.imag)]
            real += pair
            parts.append(len(pair))
        else:
            real.append(v)
            parts.append(1)

    def on_reals(*args):
        ins, k = [], 0
        for n in parts:
            ins.append(_complex(*args[k:k + 2]) if n == 2 else args[k])
            k += n
        out = func(*ins)
        return tree_map(lambda o: view_as_real(o) if isinstance(o, Tensor) and
                        o.dtype.is_complex else o, _as_tuple(out))
    return on_reals, tuple(real), [t for t in real if isinstance(t, Tensor) and t.requires_grad]


def _gradcheck(func, inputs, diff, eps, atol, rtol, nondet_tol, check_undefined_grad,
               check_grad_dtypes, check_batched_grad, check_batched_forward_grad,
               check_forward_ad, check_backward_ad, fast_mode):
    outputs = _outputs(func, inputs)
    if fast_mode:
        return _fast(func, inputs, diff, outputs, eps, atol, rtol, check_backward_ad,
                     check_forward_ad)
    num = _numerical(func, inputs, diff, outputs, eps)
    for k, o in enumerate(outputs):
        if not o.requires_grad:
            for i in range(len(diff)):
                if np.any(np.abs(num[k][i]) > atol):
                    raise GradcheckError(f"Numerical gradient for function expected to be zero: "
                                         f"output {k} does not require grad, but its numerical "
                                         f"gradient with respect to input {i} is not zero")
    if check_backward_ad:
        ana = _analytical(outputs, diff, check_grad_dtypes)
        _compare(num, ana, atol, rtol, diff, outputs, "")
        again = _analytical(_outputs(func, inputs), diff, False)     # reentrancy, as torch
        for k in range(len(outputs)):
            for i in range(len(diff)):
                if np.any(np.abs(again[k][i] - ana[k][i]) > nondet_tol):
                    raise GradcheckError(
                        "Backward is not reentrant, i.e., running backward with same input and "
                        "grad_output multiple times gives different values, although analytical "
                        "gradient matches numerical gradient.The tolerance for nondeterminism "
                        f"was {nondet_tol}.")
        if check_undefined_grad:
            _check_undefined_grad(func, inputs, diff)
        if check_batched_grad:
            _check_batched_grad(outputs, diff, atol, rtol)
    if check_forward_ad:
        fwd = _forward_jacobian(func, inputs, diff, outputs)
        _compare(num, fwd, atol, rtol, diff, outputs, "(forward AD) ")
        if check_batched_forward_grad:
            _check_batched_forward(func, inputs, diff, fwd, atol, rtol)
    return True


def _compare(num, ana, atol, rtol, diff, outputs, what):
    for k, o in enumerate(outputs):
        for i, x in enumerate(diff):
            n, a = num[k][i], ana[k][i]
            if not np.allclose(a, n, rtol=rtol, atol=atol):
                msg = what + _report(k, i, n, a, atol, rtol, x, o)
                m = Mismatch(f"{what}output {k} w.r.t. input {i}", n, a, f"input {i}", x.shape,
                             f"output {k}", o.shape, atol, rtol, "numerical", "analytical")
                err = GradcheckError(msg)
                err.report = CheckReport("gradcheck", [ModeResult("gradcheck", FAILED, msg,
                                                                  mismatches=[m])])
                raise err


def _check_undefined_grad(func, inputs, diff):
    """Backward must cope with undefined (None) output grads and give zero input grads.

    The node that made each output is called with undefined grads, as torch does; a
    custom Function then sees them materialized as zeros, or as None when it turned
    materialization off. Errors other than RuntimeError propagate, as in torch."""
    for k, o in enumerate(_outputs(func, inputs)):
        node = o.grad_fn
        if not o.requires_grad or node is None:
            continue
        try:
            if isinstance(node, BackwardCFunction):
                grads = node.apply([None] * node.n_outputs)
            else:
                grads = engine.grad([o], diff, [zeros_like(o)], retain_graph=True,
                                    allow_unused=True)
        except RuntimeError as e:
            raise GradcheckError("Expected backward function to handle undefined output grads. "
                                 f"Backward of output {k} raised: {e}") from e
        for i, g in enumerate(grads):
            if g is not None and np.any(_np(g) != 0):
                raise GradcheckError("Expected all input grads to be undefined or zero when all "
                                     f"output grads are undefined or zero (output {k}); "
                                     f"gradient {i} is nonzero")


def _random_like(t, rng):
    return tensor(rng.standard_normal(tuple(t.shape)), dtype=t.dtype)


def _check_batched_grad(outputs, diff, atol, rtol):
    """autograd.grad with is_grads_batched=True (vmap over backward) against a loop."""
    rng = np.random.default_rng(0)
    for k, o in enumerate(outputs):
        if not o.requires_grad:
            continue
        gs = [_random_like(o, rng) for _ in range(2)]
        expected = [engine.grad([o], diff, [g], retain_graph=True, allow_unused=True) for g in gs]
        try:
            batched = batched_grad([o], diff, [stack(gs)], retain_graph=True, allow_unused=True,
                                   is_grads_batched=True)
        except Exception as e:
            raise GradcheckError(f"While computing batched gradients for output {k}, got: "
                                 f"{type(e).__name__}: {e}\nIf the backward is not vmappable, "
                                 "pass check_batched_grad=False") from e
        for i, b in enumerate(batched):
            for n in range(len(gs)):
                e = expected[n][i]
                got = None if b is None else b[n]
                if e is None and (got is None or not np.any(_np(got))):
                    continue
                if got is None or not np.allclose(_np(got), _np(e), rtol=rtol, atol=atol):
                    raise GradcheckError(f"For output {k} and input {i}: batched gradient "
                                         f"(vmap over backward) differs from the gradient "
                                         f"computed one grad_output at a time (example {n})")


def _forward_jacobian(func, inputs, diff, outputs):
    """J by forward AD: one dual tangent per input element."""
    jac = [[np.zeros((x.numel(), o.numel())) for x in diff] for o in outputs]
    for i, x in enumerate(diff):
        for j in range(x.numel()):
            t = zeros(tuple(x.shape), dtype=x.dtype)
            t._data.reshape(-1)[j] = 1
            with forward_ad.dual_level():
                dual_inputs = _replace(inputs, x, forward_ad.make_dual(x.detach(), t))
                outs = _outputs(func, dual_inputs)
                for k, o in enumerate(outs):
                    tangent = forward_ad.unpack_dual(o).tangent
                    if tangent is not None:
                        jac[k][i][j] = _np(tangent).reshape(-1)
    return jac


def _replace(inputs, old, new):
    return tree_map(lambda v: new if v is old else v, inputs)


def _check_batched_forward(func, inputs, diff, fwd, atol, rtol):
    """Forward AD with a batch of tangents (vmap over jvp) against the per-tangent Jacobian."""
    for i, x in enumerate(diff):
        n = x.numel()
        basis = eye(n, dtype=x.dtype).reshape((n,) + tuple(x.shape))

        def one(t, i=i, x=x):
            with forward_ad.dual_level():
                dual_inputs = _replace(inputs, x, forward_ad.make_dual(x.detach(), t))
                outs = _outputs(func, dual_inputs)
                return tuple(_tangent_or_zeros(forward_ad.unpack_dual(o)) for o in outs)
        try:
            res = vmap(one)(basis)
        except Exception as e:
            raise GradcheckError(f"While computing batched forward gradients for input {i}, got: "
                                 f"{type(e).__name__}: {e}") from e
        for k, r in enumerate(res):
            if not np.allclose(_np(r).reshape(n, -1), fwd[k][i], rtol=rtol, atol=atol):
                raise GradcheckError(f"For output {k} and input {i}: batched forward gradient "
                                     "(vmap over jvp) differs from the unbatched one")


def _tangent_or_zeros(unpacked):
    p, t = unpacked
    return zeros_like(p) if t is None else t


def _fast(func, inputs, diff, outputs, eps, atol, rtol, check_backward_ad, check_forward_ad):
    """torch's fast mode: for random unit directions u_i (per input) and v_k (per output),
    compare v_k^T J_ki u_i by finite differences and by backward (and J_ki u_i by forward AD),
    input by input, with atol scaled by sum(u_i) * sum(v_k). The directions are
    non-negative, so that the entries' errors cannot cancel out."""
    rng = np.random.default_rng(0)
    us = [_unit_like(x, rng) for x in diff]
    vs = [_unit_like(o, rng) for o in outputs]
    backward = None
    if check_backward_ad:
        wanted = [(o, v) for o, v in zip(outputs, vs) if o.requires_grad]
        backward = [engine.grad([o], diff, [v], retain_graph=True, allow_unused=True)
                    for o, v in wanted] if wanted else []
    for i, (x, u) in enumerate(zip(diff, us)):
        saved = x._data.copy()
        x._data[...] = saved + eps * u._data
        hi = [_np(o) for o in _outputs(func, inputs)]
        x._data[...] = saved - eps * u._data
        lo = [_np(o) for o in _outputs(func, inputs)]
        x._data[...] = saved
        ju = [(h - l) / (2 * eps) for h, l in zip(hi, lo)]   # J u_i, numerically
        sum_u = float(np.sum(_np(u)))
        if check_backward_ad:
            grads = iter(backward)
            for k, (o, v) in enumerate(zip(outputs, vs)):
                numerical = float(np.sum(ju[k] * _np(v)))
                g = next(grads)[i] if o.requires_grad else None
                analytical = 0.0 if g is None else float(np.sum(_np(g) * _np(u)))
                tol = atol * sum_u * float(np.sum(_np(v)))
                if not abs(analytical - numerical) <= tol + rtol * abs(numerical):
                    raise GradcheckError(_fast_msg(k, i, numerical, analytical, "analytical"))
        if check_forward_ad:
            with forward_ad.dual_level():
                dual = _replace(inputs, x, forward_ad.make_dual(x.detach(), u))
                tangents = [forward_ad.unpack_dual(o).tangent for o in _outputs(func, dual)]
            for k, t in enumerate(tangents):
                found = np.zeros_like(ju[k]) if t is None else _np(t)
                if not np.allclose(found, ju[k], rtol=rtol, atol=atol * sum_u):
                    raise GradcheckError(_fast_msg(k, i, ju[k], found, "forward AD"))
    return True


def _unit_like(t, rng):
    """A random direction with t's shape and dtype: uniform in [0, 1), of unit norm."""
    r = rng.random(tuple(t.shape))
    return tensor(r / (np.linalg.norm(r) or 1.0), dtype=t.dtype)


def _fast_msg(k, i, numerical, found, what):
    fmt = (lambda a: f"{a:.8g}") if np.ndim(numerical) == 0 else (
        lambda a: np.array2string(np.asarray(a).reshape(-1), precision=8))
    return (f"Jacobian mismatch for output {k} with respect to input {i} (fast mode, random "
            f"directions): finite differences give {fmt(numerical)}, {what} gives "
            f"{fmt(found)}. Rerun with fast_mode=False to see which entries are wrong.")


# ----------------------------------------------------------------- gradgradcheck
def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False,
                  masked=False):
    """Check second derivatives: gradcheck of (inputs, grad_outputs) -> autograd.grad(...)."""
    inputs = _as_tuple(inputs)
    # torch's argument checks, with torch's exception type
    if not (check_fwd_over_rev or check_rev_over_rev):
        raise AssertionError("Expected at least one of check_fwd_over_rev or check_rev_over_rev "
                             "to be True")
    if not check_rev_over_rev:
        for flag, value in (("check_undefined_grad", check_undefined_grad),
                            ("check_batched_grad", check_batched_grad)):
            if value:
                raise AssertionError(f"Setting {flag}=True requires check_rev_over_rev to be "
                                     "True")
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        outs = _outputs(func, inputs)
        grad_outputs = []
        for o in outs:
            if not o.requires_grad:
                continue
            g = _random_like(o, rng)
            g._requires_grad = True
            grad_outputs.append(g)
        grad_outputs = tuple(grad_outputs)
    else:
        grad_outputs = _as_tuple(grad_outputs)
    n_in = len(inputs)
    diff_at = [i for i, t in enumerate(_tensors_in(inputs)) if t.requires_grad]

    def new_func(*args):
        ins, gos = args[:n_in], args[n_in:]
        # as torch, restore requires_grad: the forward-AD check passes detached dual inputs
        flat = _tensors_in(ins)
        d = [flat[i].requires_grad_() for i in diff_at]
        outs = [o for o in _outputs(func, ins) if o.requires_grad]
        grads = engine.grad(outs, d, gos, create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    checks = dict(eps=eps, atol=atol, rtol=rtol, raise_exception=raise_exception,
                  nondet_tol=nondet_tol, check_undefined_grad=check_undefined_grad,
                  check_grad_dtypes=check_grad_dtypes, fast_mode=fast_mode)
    args = inputs + grad_outputs
    fwd_func = new_func
    if check_fwd_over_rev and not _fwd_over_rev_supported():
        fwd_func = _reverse_by_transform(func, inputs, grad_outputs)
    if fwd_func is new_func:
        return gradcheck(new_func, args, check_batched_grad=check_batched_grad,
                         check_forward_ad=check_fwd_over_rev,
                         check_backward_ad=check_rev_over_rev, **checks)
    ok = True
    if check_rev_over_rev:
        ok = gradcheck(new_func, args, check_batched_grad=check_batched_grad, **checks)
    checks["check_undefined_grad"] = False      # a reverse-mode check
    return ok and gradcheck(fwd_func, args, check_forward_ad=True, check_backward_ad=False,
                            **checks)


def _reverse_by_transform(func, inputs, grad_outputs):
    """The gradients gradgradcheck differentiates, computed with func.vjp (which forward-AD
    dual tensors pass through) instead of the eager engine, for the forward-over-reverse
    check. Same outputs and same unused inputs dropped as the eager version."""
    n_in = len(inputs)
    d_pos = [i for i, t in enumerate(_tensors_in(inputs)) if t.requires_grad]
    outs = _outputs(func, inputs)
    out_used = [o.requires_grad for o in outs]
    eager = engine.grad([o for o in outs if o.requires_grad],
                        [t for t in _tensors_in(inputs) if t.requires_grad], grad_outputs,
                        allow_unused=True)
    in_used = [g is not None for g in eager]

    def rev(*args):
        ins, gos = args[:n_in], args[n_in:]
        ts = _tensors_in(ins)

        def f(*dv):
            new = ins
            for i, v in zip(d_pos, dv):
                new = _replace(new, ts[i], v)
            return tuple(o for o, used in zip(_outputs(func, new), out_used) if used)
        try:
            _, pullback = vjp(f, *[ts[i] for i in d_pos])
        except RuntimeError as e:
            raise RuntimeError("gradgradcheck(check_fwd_over_rev=True) differentiates the "
                               "gradients through func.vjp (forward AD does not run through "
                               f"eager backward yet), which refused the function: {e}") from e
        grads = pullback(tuple(gos))
        return tuple(g for g, used in zip(grads, in_used) if used)
    return rev


def _fwd_over_rev_supported():
    """Whether eager backward runs on forward-AD dual tensors (a feature probe)."""
    p = ones(1, dtype=float64, requires_grad=True)
    try:
        with forward_ad.dual_level():
            x = forward_ad.make_dual(p, ones(1, dtype=float64))
            g, = engine.grad([(x * x).sum()], [p], create_graph=True)
            return forward_ad.unpack_dual(g).tangent is not None
    except RuntimeError:
        return False
