"""Torch-style dtypes over backend dtypes, and torch's type promotion.

# NOTE [promotion]
Operands fall in three tiers: tensors with dimensions, zero-dim tensors, and
Python scalars. The result starts from the first tier; a later tier only wins
when its category (bool < int < float) is higher. Python floats then give the
default dtype, Python ints int64. This is torch's rule, not NumPy's.

# NOTE [bfloat16]
NumPy has no bfloat16; the optional ml_dtypes package (extra `bf16`) adds it as a NumPy dtype
whose ufuncs compute in bfloat16. Without it `bfloat16` still exists as a dtype object, and
anything that needs its array type raises an error saying what to install.
"""
import builtins as _b

import numpy as np

try:
    import ml_dtypes as _ml_dtypes
except ImportError:         # optional: only bfloat16 needs it
    _ml_dtypes = None


class dtype:
    __slots__ = ("name", "np", "kind", "is_floating_point", "is_signed", "itemsize", "_category")

    def __init__(self, name, np_dtype, category):
        self.name = name
        self.np = np.dtype(np_dtype)
        self.kind = self.np.kind     # NumPy's letter: b, i, u or f
        self.is_floating_point = category == 2
        self.is_signed = self.np.kind in "if"
        self.itemsize = self.np.itemsize
        self._category = category

    def __repr__(self):
        return "arraygrad." + self.name

    def __reduce__(self):
        return (_by_name, (self.name,))


float16 = half = dtype("float16", np.float16, 2)
float32 = float = dtype("float32", np.float32, 2)
float64 = double = dtype("float64", np.float64, 2)
uint8 = dtype("uint8", np.uint8, 1)
int8 = dtype("int8", np.int8, 1)
int16 = short = dtype("int16", np.int16, 1)
int32 = int = dtype("int32", np.int32, 1)
int64 = long = dtype("int64", np.int64, 1)
bool = dtype("bool", np.bool_, 0)


class _MissingDtype(dtype):
    """A dtype whose array type needs a package that is not installed."""
    __slots__ = ("_package", "_extra")

    def __init__(self, name, category, itemsize, package, extra):
        self.name = name
        self.is_floating_point = category == 2
        self.is_signed = True
        self.itemsize = itemsize
        self._category = category
        self._package, self._extra = package, extra

    @property
    def np(self):
        raise RuntimeError(f"arraygrad.{self.name} needs the {self._package} package: "
                           f"pip install {self._package} (or arraygrad[{self._extra}])")


if _ml_dtypes is not None:
    bfloat16 = dtype("bfloat16", _ml_dtypes.bfloat16, 2)
    _ALL = (float16, bfloat16, float32, float64, uint8, int8, int16, int32, int64, bool)
else:
    bfloat16 = _MissingDtype("bfloat16", 2, 2, "ml-dtypes", "bf16")
    _ALL = (float16, float32, float64, uint8, int8, int16, int32, int64, bool)
_FROM_NP = {d.np: d for d in _ALL}
_FOREIGN = {}     # dtypes of other array libraries (kept apart: they may hash as NumPy's)
_NAMES = {d.name: d for d in _ALL + (bfloat16,)}
_default = [float32]


def _by_name(name):
    return _NAMES[name]


def from_numpy_dtype(np_dtype):
    try:
        return _FROM_NP[np.dtype(np_dtype)]
    except KeyError:
        raise TypeError(f"arraygrad does not support the array dtype {np_dtype}") from None


def register_array_dtype(array_dtype, d):
    """Arrays of another library whose dtype is `array_dtype` hold arraygrad dtype `d`."""
    _FOREIGN[array_dtype] = d


def of_array(array_dtype):
    """arraygrad's dtype for an array whose dtype is `array_dtype` (NumPy's or registered)."""
    return _FROM_NP[array_dtype] if isinstance(array_dtype, np.dtype) else _FOREIGN[array_dtype]


def get_default_dtype():
    return _default[0]


def set_default_dtype(d):
    if not isinstance(d, dtype) or not d.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _default[0] = d


def promote_types(a, b):
    """Promotion of two dtypes: higher category wins, else NumPy's widening."""
    if a is b:
        return a
    if a._category != b._category:
        return a if a._category > b._category else b
    if a.itemsize == b.itemsize == 2 and a._category == 2:
        return float32              # float16 with bfloat16: neither holds the other
    return _FROM_NP[np.promote_types(a.np, b.np)]


_pybool, _pyint, _pyfloat = _b.bool, _b.int, _b.float


def result_type(*operands):
    """The dtype torch gives an elementwise op over `operands` (Tensors and scalars)."""
    dim_t = zero_t = None
    scalar_cat = -1
    for v in operands:
        d = getattr(v, "dtype", None)
        if isinstance(d, dtype):
            if v.ndim:
                dim_t = d if dim_t is None else promote_types(dim_t, d)
            else:
                zero_t = d if zero_t is None else promote_types(zero_t, d)
        elif v is not None:
            if isinstance(v, (_pybool, np.bool_)):
                c = 0
            elif isinstance(v, (_pyint, np.integer)):
                c = 1
            else:
                c = 2
            scalar_cat = max(scalar_cat, c)
    res = dim_t
    if zero_t is not None and (res is None or zero_t._category > res._category):
        res = zero_t
    if scalar_cat >= 0 and (res is None or scalar_cat > res._category):
        res = (bool, int64, get_default_dtype())[scalar_cat]
    return res
