"""Differential fuzzer of bad inputs: every op of the catalogue (tests/op_db.py) on mutated
samples (another dtype, another shape, None / a list / a string in a tensor's place, a dim out
of range), run by torch and by arraygrad.

A case passes when both raise the same exception type, or both succeed with equal results.
It fails when arraygrad raises where torch succeeds, succeeds where torch raises, raises another
type, raises an internal exception (KeyError, AttributeError, ... never torch's answer), warns
where torch does not, or gives another result.

    PYTHONPATH=src python tests/input_fuzz.py [--ops NAME,...] [--show K]

test_input_fuzz.py runs it over the whole catalogue with the known differences listed.
"""
import argparse
import collections
import warnings

import numpy as np

import arraygrad as ag
import op_db

# ops whose bad inputs crash torch itself (a segmentation fault): no oracle
TORCH_CRASHES = {"embedding_bag", "embedding_bag_psw"}
# catalogue entries that run an op under func.jvp (to reach its rules' primitives): their
# mutated inputs test the transform API's own checks, not an op; and torch's func.jvp keeps a
# tangent's own dtype (float64 beside a float32 primal) where arraygrad casts it to the primal's
UNDER_TRANSFORMS = {"max_pool2d_jvp"}
# ops whose indices among ties are torch's kernel order, not a documented choice: values only
TIE_ORDER = {"topk", "kthvalue", "mode", "sort", "argsort", "median", "nanmedian"}
# (op, mutation) -> why torch is no oracle for that case
NO_ORACLE = {
    ("bucketize", "arg1:grow_last"): "unsorted boundaries: the result is documented as undefined",
    ("searchsorted", "arg0:grow_last"): "unsorted sequence: the result is documented as undefined",
    ("multi_margin_loss", "margin:nan"): "torch's kernel drops a NaN margin (its `z > 0` test "
                                         "is false) where the formula gives NaN",
    ("local_response_norm", "arg0:int64"): "torch averages the squared integers in integer "
                                           "arithmetic (truncating) before the power",
    ("linalg.lstsq", "arg1:empty"): "torch returns rank 0 for a b without columns, skipping the "
                                    "factorisation that gives the rank",
    ("linalg.eig", "arg0:float32"): "torch's float32 eigenvalues are 1.3e-6 off those of float64 "
                                    "(arraygrad's 3e-7), beyond the fuzzer's atol",
    ("linalg.eigvals", "arg0:float32"): "as linalg.eig",
}
INTERNAL = (KeyError, AttributeError, AssertionError, ZeroDivisionError, UnboundLocalError,
            NameError, RecursionError, OverflowError, FloatingPointError)


# ----------------------------------------------------------------- mutations
def _is_array(v):
    return isinstance(v, np.ndarray)


def _mutations(sample):
    """(label, mutated Sample) pairs: one change to one argument each."""
    args = list(sample.args)
    kw = dict(sample.kwargs)
    out = []

    def with_arg(i, v):
        a = list(args)
        a[i] = v
        return op_db.Sample(tuple(a), dict(kw), sample.smooth)

    def with_kw(k, v):
        d = dict(kw)
        d[k] = v
        return op_db.Sample(tuple(args), d, sample.smooth)

    for i, a in enumerate(args):
        if _is_array(a):
            if a.dtype.kind == "f":
                # np.asarray: a 0-d array's round and comparison are NumPy scalars
                ints = np.asarray(np.round(np.nan_to_num(a, posinf=9, neginf=-9) * 3), np.int64)
                out.append((f"arg{i}:int64", with_arg(i, ints)))
                out.append((f"arg{i}:bool", with_arg(i, np.asarray(a > 0))))
                out.append((f"arg{i}:float32", with_arg(i, a.astype(np.float32))))
            elif a.dtype.kind in "iu":
                out.append((f"arg{i}:float", with_arg(i, a.astype(np.float64))))
            if a.ndim >= 1 and a.shape[-1]:
                out.append((f"arg{i}:drop_dim", with_arg(i, a[..., 0])))
                out.append((f"arg{i}:grow_last", with_arg(i, np.concatenate([a, a[..., :1]], -1))))
                out.append((f"arg{i}:empty", with_arg(i, a[..., :0])))
            out.append((f"arg{i}:add_dim", with_arg(i, np.stack([a, a]))))
            out.append((f"arg{i}:None", with_arg(i, None)))
            out.append((f"arg{i}:str", with_arg(i, "ab")))
            if a.dtype.kind == "f" and a.ndim == 1:
                out.append((f"arg{i}:list", with_arg(i, [float(v) for v in a])))
    for k, v in kw.items():
        if isinstance(v, bool):
            out.append((f"{k}:None", with_kw(k, None)))
        elif isinstance(v, int):
            out.append((f"{k}:+9", with_kw(k, v + 9)))
            out.append((f"{k}:-9", with_kw(k, v - 9)))
            out.append((f"{k}:float", with_kw(k, v + 0.5)))
            out.append((f"{k}:str", with_kw(k, "x")))
        elif isinstance(v, float):
            out.append((f"{k}:nan", with_kw(k, float("nan"))))
            out.append((f"{k}:str", with_kw(k, "x")))
        elif isinstance(v, tuple) and v and all(isinstance(e, int) for e in v):
            out.append((f"{k}:repeat", with_kw(k, v + v[:1])))
            out.append((f"{k}:+9", with_kw(k, tuple(e + 9 for e in v))))
        elif isinstance(v, str):
            out.append((f"{k}:bad_str", with_kw(k, v + "_not")))
        elif _is_array(v):
            out.append((f"{k}:None", with_kw(k, None)))
            if v.ndim >= 1 and v.shape[-1]:
                out.append((f"{k}:drop_dim", with_kw(k, v[..., 0])))
    return out


# ----------------------------------------------------------------- running
def _convert(lib, v):
    if _is_array(v):
        return lib.tensor(v)
    if isinstance(v, list) and v and _is_array(v[0]):
        return [_convert(lib, a) for a in v]
    return v


def _outcome(lib, op, sample):
    """(exception or None, outputs or None, warnings caught)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            args = [_convert(lib, a) for a in sample.args]
            kwargs = {k: _convert(lib, v) for k, v in sample.kwargs.items()}
            out = op.fn(lib, *args, **kwargs)
            outs = list(out) if isinstance(out, (tuple, list)) else [out]
            return None, outs, caught
        except Exception as e:      # noqa: BLE001 - the exception is what is compared
            return e, None, caught


def _as_numpy(v):
    if hasattr(v, "detach"):
        v = v.detach()
        if getattr(v, "is_sparse", False) or getattr(v, "layout", None) not in (None,) and \
                str(getattr(v, "layout", "")).endswith(("sparse_coo", "sparse_csr")):
            v = v.to_dense()
        if v.dtype.is_complex:
            return np.asarray(v.tolist(), dtype=complex)
        return np.asarray(v.tolist(), dtype=float)
    return np.asarray(v, dtype=float) if isinstance(v, (int, float, bool)) else None


def _same_results(mine, theirs):
    if len(mine) != len(theirs):
        return f"{len(mine)} outputs, torch {len(theirs)}"
    for i, (a, e) in enumerate(zip(mine, theirs)):
        ea, aa = _as_numpy(e), _as_numpy(a)
        if ea is None or aa is None:
            continue
        if ea.shape != aa.shape:
            return f"output {i}: shape {aa.shape}, torch {ea.shape}"
        if hasattr(a, "dtype") and hasattr(e, "dtype") and \
                str(a.dtype).split(".")[-1] != str(e.dtype).split(".")[-1]:
            return f"output {i}: dtype {a.dtype}, torch {e.dtype}"
        if not np.allclose(aa, ea, rtol=1e-5, atol=1e-6, equal_nan=True):
            return f"output {i}: values differ"
    return None


def _leaked(w, torch_warnings):
    """A warning of ours that torch does not give: NumPy's floating-point warnings always; our
    own (torch's wording) only where torch gave none and it is no deprecation notice, which
    torch gives once per process."""
    if issubclass(w.category, RuntimeWarning) or w.category.__module__.startswith("numpy"):
        return True
    return not torch_warnings and "is deprecated" not in str(w.message)


def check(torch, op, label, sample):
    """None when arraygrad answers as torch, else (kind, detail)."""
    t_err, t_out, t_warn = _outcome(torch, op, sample)
    a_err, a_out, a_warn = _outcome(ag, op, sample)
    a_warn = [str(w.message) for w in a_warn if _leaked(w, t_warn)]
    if op.name in TIE_ORDER and a_out and t_out:
        a_out, t_out = a_out[:1], t_out[:1]
    if a_warn:
        return "warning", a_warn[0][:120]
    if isinstance(a_err, INTERNAL) and not isinstance(t_err, type(a_err)):
        return "internal", f"{type(a_err).__name__}: {str(a_err)[:120]}"
    if t_err is None and a_err is None:
        diff = _same_results(a_out, t_out)
        return None if diff is None else ("result", diff)
    if t_err is None:
        if isinstance(a_err, NotImplementedError):
            return "unsupported", f"{type(a_err).__name__}: {str(a_err)[:120]}"
        return "raises", f"{type(a_err).__name__}: {str(a_err)[:120]}"
    if a_err is None:
        return "accepts", f"torch raises {type(t_err).__name__}: {str(t_err)[:120]}"
    if isinstance(t_err, INTERNAL):
        return None     # torch's Python code fails before its own check (None.size()): any
                        # error of ours that is not internal is as good an answer
    if type(a_err) is not type(t_err):
        return "type", (f"{type(a_err).__name__} ({str(a_err)[:90]}), torch "
                        f"{type(t_err).__name__} ({str(t_err)[:90]})")
    return None


def cases(ops=None, per_op=2):
    """(op, label, sample) for the first `per_op` samples of each op, every mutation."""
    for op in op_db.OPS:
        if ops and op.name not in ops or op.name in TORCH_CRASHES | UNDER_TRANSFORMS:
            continue
        rng = np.random.default_rng(7)
        for s in list(op.samples(rng))[:per_op]:
            for label, m in _mutations(s):
                if (op.name, label) not in NO_ORACLE:
                    yield op, label, m


def main():
    import torch
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--ops", default="")
    p.add_argument("--show", type=int, default=200)
    a = p.parse_args()
    ops = set(a.ops.split(",")) if a.ops else None
    counts, found = collections.Counter(), collections.defaultdict(list)
    for op, label, sample in cases(ops):
        r = check(torch, op, label, sample)
        kind = "ok" if r is None else r[0]
        counts[kind] += 1
        if r is not None:
            found[kind].append(f"{op.name} {label} {sample!r}: {r[1]}")
    print(", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    for kind, rows in sorted(found.items()):
        print(f"\n== {kind}: {len(rows)}")
        for row in rows[:a.show]:
            print("  " + row)


if __name__ == "__main__":
    main()
