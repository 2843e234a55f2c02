"""Torch-style dtypes over backend dtypes, and torch's type promotion.

# NOTE [promotion]
Operands fall in three tiers: tensors with dimensions, zero-dim tensors, and
Python scalars. The result starts from the first tier; a later tier only wins
when its category (bool < int < float < complex) is higher. Python floats then
give the default dtype, Python ints int64, Python complex numbers the default
complex dtype. A complex lower tier over a float higher one keeps the float's
precision (float32 tensor * complex128 zero-dim -> complex64). This is torch's
rule (c10's combine_categories), not NumPy's.

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
    __slots__ = ("name", "np", "kind", "is_floating_point", "is_complex", "is_differentiable",
                 "is_signed", "itemsize", "_category")

    def __init__(self, name, np_dtype, category):
        self.name = name
        self.np = np.dtype(np_dtype)
        self.kind = self.np.kind     # NumPy's letter: b, i, u, f or c
        self.is_floating_point = category == 2
        self.is_complex = category == 3
        self.is_differentiable = category >= 2     # may require grad: floating or complex
        self.is_signed = self.np.kind in "ifc"
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
complex64 = cfloat = dtype("complex64", np.complex64, 3)
complex128 = cdouble = dtype("complex128", np.complex128, 3)


class _MissingDtype(dtype):
    """A dtype whose array type needs a package that is not installed."""
    __slots__ = ("_package", "_extra")

    def __init__(self, name, category, itemsize, package, extra):
        self.name = name
        self.is_floating_point = category == 2
        self.is_complex = False
        self.is_differentiable = category >= 2
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
    _ALL = (float16, bfloat16, float32, float64, uint8, int8, int16, int32, int64, bool,
            complex64, complex128)
else:
    bfloat16 = _MissingDtype("bfloat16", 2, 2, "ml-dtypes", "bf16")
    _ALL = (float16, float32, float64, uint8, int8, int16, int32, int64, bool, complex64,
            complex128)
_FROM_NP = {d.np: d for d in _ALL}
_FOREIGN = {}     # dtypes of other array libraries (kept apart: they may hash as NumPy's)
_NAMES = {d.name: d for d in _ALL + (bfloat16,)}
_default = [float32]

# torch's names of a dtype in kernel messages: its ScalarType ('Float', 'Long') and its C++
# type ('float', 'long int')
_SHORT = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
          "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
          "bool": "Bool", "complex64": "ComplexFloat", "complex128": "ComplexDouble"}
_C_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half",
            "bfloat16": "c10::BFloat16", "int64": "long int", "int32": "int", "int16": "short int",
            "int8": "signed char", "uint8": "unsigned char", "bool": "bool",
            "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}


def short_name(d):
    """torch's ScalarType name of a dtype ('Float', 'Long', ...)."""
    return _SHORT[d.name]


def c_name(d):
    """torch's C++ type name of a dtype ('float', 'long int', ...)."""
    return _C_NAMES[d.name]


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


def get_default_complex_dtype():
    """complex64 when the default dtype is float32, complex128 for float64 (as torch)."""
    return complex128 if _default[0] is float64 else complex64


def to_complex(d):
    """The complex dtype with `d`'s precision (float64 -> complex128)."""
    if d.is_complex:
        return d
    if d is float64:
        return complex128
    if d is float32 or d is bfloat16:   # (torch has no complex bfloat16: it takes complex64)
        return complex64
    raise TypeError(f"arraygrad has no complex dtype for {d} (torch's complex32 is not "
                    "supported): cast to float32 first")


def promote_types(a, b):
    """Promotion of two dtypes: higher category wins, else NumPy's widening; float with
    complex keeps the wider precision (float64 + complex64 -> complex128)."""
    if a is b:
        return a
    if a._category != b._category:
        hi, lo = (a, b) if a._category > b._category else (b, a)
        if hi.is_complex and lo.is_floating_point:
            return to_complex(promote_types(lo, float32 if hi is complex64 else float64))
        return hi
    if a.itemsize == b.itemsize == 2 and a._category == 2:
        return float32              # float16 with bfloat16: neither holds the other
    return _FROM_NP[np.promote_types(a.np, b.np)]


_pybool, _pyint, _pyfloat, _pycomplex = _b.bool, _b.int, _b.float, _b.complex


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
            elif isinstance(v, (_pycomplex, np.complexfloating)):
                c = 3
            else:
                c = 2
            scalar_cat = max(scalar_cat, c)
    scalar_t = None
    if scalar_cat >= 0:
        scalar_t = (bool, int64, get_default_dtype(), get_default_complex_dtype())[scalar_cat]
    return _combine(dim_t, _combine(zero_t, scalar_t))


def cast_scalar(value, d):
    """A Python scalar as a value of dtype `d` (fill values of masked_fill, scatter, index_fill,
    threshold keep the tensor's dtype in torch: 0.5 into an int64 tensor writes 0)."""
    if d is bool:
        return _pybool(value)
    if d._category == 1 and not isinstance(value, (_pybool, _pyint)):
        if not np.isfinite(value):
            raise RuntimeError(f"value cannot be converted to type {d.name} without overflow")
        return _pyint(value)
    return value


def _combine(higher, lower):
    """A tier's dtype `higher` against the lower tiers' `lower` (c10's combine_categories)."""
    if higher is None:
        return lower
    if lower is None or higher._category >= lower._category:
        return higher if higher._category > 0 or lower is None else promote_types(higher, lower)
    if lower.is_complex and higher.is_floating_point:
        return to_complex(higher)
    return lower
