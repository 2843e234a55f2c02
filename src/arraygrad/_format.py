"""Torch-like text for tensors: `tensor([1.5000, 2.0000], requires_grad=True)`."""
import numpy as np


def _float_formatter(a):
    finite = a[np.isfinite(a)]
    if finite.size == 0:
        return lambda v: _nonfinite(v) or ""
    absf = np.abs(finite)
    ints = np.all(finite == np.round(finite))
    amax, amin = absf.max(), absf[absf > 0].min() if np.any(absf > 0) else 0.0
    sci = amax >= 1e8 or (amin > 0 and (amin < 1e-4 or amax / amin > 1000))
    shown = finite[finite != 0]     # torch sizes the columns by the nonzero values only
    if ints and not sci:
        width = max((len(f"{v:.0f}") for v in shown), default=0) + 1
        return lambda v: (_nonfinite(v) or f"{v:.0f}.").rjust(width)
    if sci:
        width = max((len(f"{v:.4e}") for v in shown), default=1)
        return lambda v: (_nonfinite(v) or f"{v:.4e}").rjust(width)
    width = max((len(f"{v:.4f}") for v in shown), default=1)
    return lambda v: (_nonfinite(v) or f"{v:.4f}").rjust(width)


def _complex_formatter(a):
    """torch's: real and imaginary parts each get their own float format; the imaginary one
    is written unpadded with its sign (`1.+2.j`, `-0.-1.j`)."""
    re = _float_formatter(a.real.astype(np.float64))
    im = _float_formatter(a.imag.astype(np.float64))

    def fmt(v):
        i = im(v.imag).lstrip()
        return re(v.real) + ("" if i[0] == "-" else "+") + i + "j"
    return fmt


def _nonfinite(v):
    if np.isnan(v):
        return "nan"
    if np.isinf(v):
        return "inf" if v > 0 else "-inf"
    return None


_THRESHOLD, _EDGE = 1000, 3


def _summarized(a):
    """The entries a summarised print shows (torch's get_summarized_data): the number format
    is chosen from these, so printing a huge tensor costs little more than a small one."""
    if a.size <= _THRESHOLD:
        return a
    for axis, n in enumerate(a.shape):
        if n > 2 * _EDGE:
            a = np.concatenate([np.take(a, range(_EDGE), axis), np.take(a, range(n - _EDGE, n), axis)],
                               axis)
    return a


def format_array(a, indent):
    a = np.asarray(a)
    if a.dtype.char == "E":         # bfloat16 (ml_dtypes): NumPy's printer knows float32
        a = a.astype(np.float32)
    if a.dtype.kind == "f":
        fmt = _float_formatter(_summarized(a).astype(np.float64))
        formatter = {"float_kind": fmt}
    elif a.dtype.kind == "c":
        formatter = {"complex_kind": _complex_formatter(_summarized(a))}
    elif a.dtype.kind == "b":
        shown = _summarized(a)
        width = 5 if shown.size and not shown.all() else 4     # torch pads True to False's width
        formatter = {"bool": lambda v: ("True" if v else "False").rjust(width)}
    else:
        formatter = None
    if a.size == 0 and a.ndim == 1:
        return "[]"
    text = np.array2string(a, separator=", ", formatter=formatter, prefix=" " * indent,
                           threshold=_THRESHOLD, edgeitems=_EDGE, max_line_width=80)
    return text.replace(", ..., ", ",  ..., ")    # torch's summary marker within a row


def tensor_repr(t, data, extra):
    prefix = "tensor("
    body = format_array(data, len(prefix))
    if data.size == 0 and data.ndim != 1:
        body = "[]"
        extra = [f"size={tuple(data.shape)}"] + extra
    return prefix + body + "".join(", " + e for e in extra) + ")"
