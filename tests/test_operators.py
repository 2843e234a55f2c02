"""Python's operators on tensors against torch: every binary operator, its reflected form
with a Python number on the left, its in-place form (which a view of the tensor must see),
`in` and `reversed`, over a grid of dtypes and scalars: the same result dtype and values, or
an exception of the same type where torch refuses."""
import itertools
import operator

import numpy as np
import pytest

import arraygrad as ag

DTYPES = ["bool", "uint8", "int32", "int64", "float32", "float64", "complex128"]
SCALARS = [True, 3, -2, 2.5, 1 + 2j]
BINARY = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
          "//": operator.floordiv, "%": operator.mod, "**": operator.pow, "&": operator.and_,
          "|": operator.or_, "^": operator.xor, "==": operator.eq, "<": operator.lt}
INPLACE = {"+": operator.iadd, "-": operator.isub, "*": operator.imul, "/": operator.itruediv,
           "//": operator.ifloordiv, "%": operator.imod, "**": operator.ipow, "&": operator.iand,
           "|": operator.ior, "^": operator.ixor}
A, B = [[1, -2, 3], [4, 5, -1]], [[2, 1, -1], [3, -2, 2]]      # no zero divisor in B


def _tensor(lib, values, dtype):
    return lib.tensor(values).to(getattr(lib, dtype))


class _Result:
    """A result's dtype and values; equal to another within float32 rounding (torch's CPU
    kernels compute some float32 quotients and powers through a reciprocal or exp/log)."""

    def __init__(self, r):
        self.dtype = str(r.dtype).split(".")[-1]
        self.values = r.numpy().astype(np.complex128)

    def __eq__(self, other):
        return isinstance(other, _Result) and self.dtype == other.dtype and \
            self.values.shape == other.values.shape and \
            np.allclose(self.values, other.values, rtol=1e-6, atol=1e-7, equal_nan=True)

    def __repr__(self):
        return f"{self.dtype} {self.values.round(6).tolist()}"


def _outcome(fn):
    try:
        r = fn()
    except (RuntimeError, TypeError, NotImplementedError, ZeroDivisionError) as e:
        return type(e).__name__
    return _Result(r) if hasattr(r, "dtype") else r


def _both(make):
    import torch
    return _outcome(lambda: make(torch)), _outcome(lambda: make(ag))


# torch's own exceptions to its rules, or its kernels' results in corners (noted, not copied):
# `**`/`%`/`//` on two bools (torch: not implemented; arraygrad computes in int8) and a bool
# raised to a bool number (torch: bool), float division of complex numbers by zero (NumPy's
# inf+nanj, torch's nan+nanj), a complex number against a bool or integer in `%`/`//`.
def _known(op, d1, d2):
    pair = {d1, d2}
    if op in ("**", "%", "//") and d1 in ("bool", True) and d2 in ("bool", True):
        return True
    return op in ("%", "//") and any(isinstance(d, complex) or d == "complex128" for d in pair)


@pytest.mark.parametrize("op", BINARY)
def test_binary_operators_match_torch(torch, op):
    f = BINARY[op]
    for d1, d2 in itertools.product(DTYPES, DTYPES + SCALARS):
        if _known(op, d1, d2):
            continue
        other = (lambda lib: _tensor(lib, B, d2)) if isinstance(d2, str) else (lambda lib: d2)
        t, a = _both(lambda lib: f(_tensor(lib, A, d1), other(lib)))
        assert a == t, f"{d1} {op} {d2}: torch {t}, arraygrad {a}"
        if not isinstance(d2, str):     # the reflected operator: number on the left
            t, a = _both(lambda lib: f(d2, _tensor(lib, B, d1)))
            assert a == t, f"{d2!r} {op} {d1}: torch {t}, arraygrad {a}"


@pytest.mark.parametrize("op", INPLACE)
def test_inplace_operators_write_into_the_tensor_as_torch(torch, op):
    f = INPLACE[op]
    for d1, d2 in itertools.product(DTYPES, DTYPES + SCALARS):
        if _known(op, d1, d2):
            continue

        def run(lib):
            x = _tensor(lib, A, d1)
            view = x[0]
            y = f(x, _tensor(lib, B, d2) if isinstance(d2, str) else d2)
            assert y is x
            return lib.stack([x[0], view])
        t, a = _both(run)
        assert a == t, f"{d1} {op}= {d2}: torch {t}, arraygrad {a}"


def test_contains_and_reversed_match_torch(torch):
    for lib in (torch, ag):
        t = lib.tensor([1, 2, 3])
        assert (2 in t, 5 in t, lib.tensor(3) in t) == (True, False, True)
        with pytest.raises(RuntimeError, match="only supports Tensor or scalar"):
            "a" in t
        assert [x.item() for x in reversed(lib.arange(3.0))] == [2.0, 1.0, 0.0]
