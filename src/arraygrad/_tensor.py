"""Tensor: one backend array plus autograd metadata, or a transform's wrapper.

A plain tensor holds `_data` (a backend array) and `_lvl is None`. A tensor
created inside a transform holds `_inner` (the tensor one level down) and
`_aux` (the tangent for forward mode, the batch dim for vmap) and `_lvl`, the
interpreter it belongs to; its `_data` is None. See NOTE [levels].
"""
import numpy as np

from . import _device
from . import dtypes as _dt
from ._format import tensor_repr
from .backends import backend_of
from .core import grad_mode


class Size(tuple):
    """Shape of a tensor: a tuple that prints like torch's."""

    def __repr__(self):
        return f"arraygrad.Size({list(self)})"

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n


class Tensor:
    # hot attributes live in slots; rarely set ones default here (NOTE [tensor cost])
    __slots__ = ("_data", "_lvl", "_requires_grad", "grad_fn", "_output_nr", "_vc",
                 "__weakref__", "__dict__")
    _inner = None
    _aux = None
    _grad = None
    _base = None
    _view_fn = None
    _view_version = 0   # version of the base when this view's grad_fn was made
    _retains_grad = False
    _hooks = None
    _post_accumulate_hooks = None
    _accum = None
    _born = 0           # see core.dispatch.born_inside

    __array_priority__ = 1000

    def __new__(cls, *args, device=None):
        """`Tensor(2, 3)` / `Tensor([1., 2.])`: torch's legacy constructor (see _legacy)."""
        from ._legacy import tensor_new     # cycle: _legacy builds tensors with make below
        return tensor_new(cls, *args, device=device)

    # ----------------------------------------------------------- metadata
    @property
    def shape(self):
        if self._lvl is None:
            return Size(self._data.shape)
        return self._lvl.shape_of(self)

    def size(self, dim=None):
        s = self.shape
        return s if dim is None else s[_wrap_dim(dim, len(s))]

    @property
    def dtype(self):
        t = self
        while t._lvl is not None:
            t = t._inner
        return _dt.of_array(t._data.dtype)

    @property
    def ndim(self):
        return len(self.shape)

    def dim(self):
        return len(self.shape)

    def numel(self):
        return self.shape.numel()

    nelement = numel

    def __len__(self):
        s = self.shape
        if not s:
            raise TypeError("len() of a 0-d tensor")
        return s[0]

    @property
    def device(self):
        return _device.of(backend_of(self._base_array()).device)

    @property
    def is_cuda(self):
        return self.device.type == "cuda"

    def is_floating_point(self):
        return self.dtype.is_floating_point

    def is_complex(self):
        return self.dtype.is_complex

    def element_size(self):
        return self.dtype.itemsize

    @property
    def grad(self):
        g = self._grad
        if g is None and self.grad_fn is not None and not self._retains_grad:
            import warnings
            warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its "
                ".grad attribute won't be populated during autograd.backward(). If you indeed "
                "want the .grad field to be populated for a non-leaf Tensor, use .retain_grad() "
                "on the non-leaf Tensor. If you access the non-leaf Tensor by mistake, make sure "
                "you access the leaf Tensor instead.", UserWarning, stacklevel=2)
        return g

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError("assigned grad expected to be a Tensor or None but got grad of "
                                f"type {type(value).__name__}")
            if value.shape != self.shape:
                raise RuntimeError(f"attempting to assign a gradient of size '{list(value.shape)}' "
                                   f"to a tensor of size '{list(self.shape)}'. Please ensure that "
                                   "the gradient and the tensor are the same size")
            if value.dtype is not self.dtype:
                raise RuntimeError(f"attempting to assign a gradient with dtype "
                                   f"'{value.dtype.name}' to a tensor with dtype "
                                   f"'{self.dtype.name}'. The gradient must match the tensor's "
                                   "dtype")
        self._grad = value

    @property
    def requires_grad(self):
        return autograd_self(self)._requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        if self._lvl is not None and self._lvl.primal_autograd:
            autograd_self(self).requires_grad = value
            self._lvl.mirror(self)
            return
        value = bool(value)
        if value and self._lvl is not None and self._lvl.refuses_requires_grad:
            raise RuntimeError("You are attempting to call Tensor.requires_grad_() (or perhaps "
                               "using torch.autograd.functional.* APIs) inside of a function being "
                               "transformed by a functorch transform. This is unsupported, please "
                               "attempt to use the functorch transforms (e.g. grad, vjp, jacrev, "
                               "jacfwd, hessian) or call requires_grad_() outside of a function "
                               "being transformed instead.")
        if not value and self.grad_fn is not None:
            raise RuntimeError("you can only change requires_grad flags of leaf variables. If you "
                               "want to use a computed variable in a subgraph that doesn't require "
                               "differentiation use var_no_grad = var.detach().")
        if value and not self.dtype.is_differentiable:
            raise RuntimeError("only Tensors of floating point and complex dtype can require "
                               "gradients")
        self._requires_grad = value

    def requires_grad_(self, requires_grad=True):
        self.requires_grad = requires_grad
        return self

    @property
    def is_leaf(self):
        return self.grad_fn is None

    @property
    def output_nr(self):
        """Which output of its `grad_fn` this tensor is (0 for a leaf)."""
        return self._output_nr

    @property
    def data(self):
        """The values as a detached tensor with its own version counter: writes through
        `.data` are hidden from autograd's saved-value checks, as torch's."""
        d = self.detach()
        d._vc = {0: 0}
        return d

    @data.setter
    def data(self, value):
        self._data = value._data

    @property
    def _version(self):
        """torch's version counter: how many in-place writes this memory has seen. The counter
        itself (`_vc`, a dict {0: version}) is shared with views and transform wrappers."""
        return self._vc[0]

    @property
    def retains_grad(self):
        return self._retains_grad

    def _base_array(self):
        t = self
        while t._lvl is not None:
            t = t._inner
        return t._data

    def detach_(self):
        if self._base is not None and self._base._requires_grad:
            raise RuntimeError("Can't detach views in-place. Use detach() instead.")
        self.grad_fn = None
        self._requires_grad = False
        return self

    # ----------------------------------------------------------- conversion
    def numpy(self, *, force=False):
        if self._lvl is not None:
            raise RuntimeError(f"numpy() is not available on a tensor inside a {self._lvl.kind} "
                               "transform; convert it outside the transform")
        if self._requires_grad and not force and grad_mode.state.grad_enabled:   # as torch
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. "
                               "Use tensor.detach().numpy() instead.")
        backend = backend_of(self._data)
        if backend.device != "cpu":
            raise TypeError(f"can't convert {backend.device} device type tensor to numpy. Use "
                            "Tensor.cpu() to copy the tensor to host memory first.")
        return backend.to_numpy(self._data)

    def __array__(self, dtype=None, copy=None):
        a = self.detach().numpy()
        return a if dtype is None else a.astype(dtype)

    def item(self):
        if self.numel() != 1:
            raise RuntimeError(f"a Tensor with {self.numel()} elements cannot be converted to Scalar")
        return _scalar(self._base_array()) if self._lvl is None else _item_inside(self)

    def tolist(self):
        if self._lvl is not None and _batched(self):
            _item_inside(self)
        a = self._base_array()
        return np.asarray(backend_of(a).to_numpy(a)).tolist()

    def __float__(self):
        return float(self._real_item("double"))

    def __int__(self):
        return int(self._real_item("int64_t"))

    def __complex__(self):
        return complex(self.item())

    def _real_item(self, ctype):
        v = self.item()
        if isinstance(v, complex):      # torch refuses to drop an imaginary part here
            if v.imag:
                raise RuntimeError(f"value cannot be converted to type {ctype} without overflow")
            return v.real
        return v

    def __bool__(self):
        if self.numel() != 1:
            raise RuntimeError(f"Boolean value of Tensor with more than one value is ambiguous")
        if self._lvl is not None and _batched(self):
            _item_inside(self, control_flow=True)
        return bool(self.item())

    def __index__(self):
        if self.dtype.is_floating_point or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __hash__(self):
        return id(self)

    def __repr__(self):
        if self._lvl is not None:
            if not self._lvl.alive:
                return repr(lower(self))
            own = getattr(self._lvl, "tensor_repr", None)
            if own is not None:
                return own(self)
            return f"{self._lvl.kind.capitalize()}Tensor(lvl={self._lvl.level}, value={self._inner!r})"
        extra = []
        if backend_of(self._data).lazy:     # printing does not compute (that is compute()'s job)
            if self.grad_fn is not None:
                extra.append(f"grad_fn=<{self.grad_fn.name()}>")
            elif self._requires_grad:
                extra.append("requires_grad=True")
            return f"tensor({self._data!r}{''.join(', ' + e for e in extra)})"
        backend = backend_of(self._data)
        data = np.asarray(backend.to_numpy(self._data))
        if backend.device != "cpu":
            extra.append(f"device='{backend.device}'")
        if self.dtype is not _dt.get_default_dtype() and (data.size == 0 or self.dtype not in (
                _dt.int64, _dt.bool, _dt.get_default_complex_dtype())):
            extra.append(f"dtype={self.dtype}")
        if self.grad_fn is not None:
            extra.append(f"grad_fn=<{self.grad_fn.name()}>")
        elif self._requires_grad:
            extra.append("requires_grad=True")
        return tensor_repr(self, data, extra)

    __str__ = __repr__

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __reduce_ex__(self, protocol):
        return (_rebuild, (self.detach().numpy(), self._requires_grad))

    def __deepcopy__(self, memo):
        """A new leaf with copies of the data and of `.grad`; only leaves can be copied (torch)."""
        if not self.is_leaf:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support "
                               "the deepcopy protocol at the moment.  If you were attempting to "
                               "deepcopy a module, this may be because of a "
                               "torch.nn.utils.weight_norm usage, see "
                               "https://github.com/pytorch/pytorch/pull/103001")
        out = self.detach().clone().requires_grad_(self._requires_grad)
        memo[id(self)] = out
        if self._grad is not None:
            out._grad = self._grad.__deepcopy__(memo)
        return out


def _rebuild(array, requires_grad):
    return make(array.copy(), requires_grad)


def _batched(t):
    """Whether some vmap level holds `t` (its value differs per example)."""
    while t._lvl is not None:
        if t._lvl.batched:
            return True
        t = t._inner
    return False


def _item_inside(t, control_flow=False):
    if _batched(t):
        if control_flow:
            raise RuntimeError("vmap: It looks like you're attempting to use a Tensor in some "
                               "data-dependent control flow. We don't support that yet, please "
                               "file an issue at https://github.com/pytorch/pytorch/issues .")
        raise RuntimeError("vmap: It looks like you're calling .item() on a Tensor. We don't "
                           "support vmap over calling .item() on a Tensor, please try to rewrite "
                           "what you're doing with other operations.")
    # grad and jvp levels hold one concrete value: control flow on it is fine, as in torch.func
    return _scalar(t._base_array())


def _scalar(array):
    """The one value of `array` as a Python number."""
    if type(array) is not np.ndarray:
        array = np.asarray(backend_of(array).to_numpy(array))
    return array.reshape(()).item()


def _wrap_dim(dim, ndim):
    lo = -ndim if ndim else -1
    hi = ndim - 1 if ndim else 0
    if not lo <= dim <= hi:
        raise IndexError(f"Dimension out of range (expected to be in range of [{lo}, {hi}], but got {dim})")
    return dim % ndim if ndim else 0


# NOTE [tensor cost]
# Every primitive call makes a Tensor, so construction sets only the slots;
# attributes most tensors never change (grad, hooks, view base...) are class
# defaults until assigned.
def make(array, requires_grad=False):
    """A plain leaf tensor holding `array` (which must be a backend array)."""
    t = _new(Tensor)
    t._data = array
    t._lvl = None
    t._requires_grad = requires_grad
    t.grad_fn = None
    t._output_nr = 0
    t._vc = {0: 0}      # version counter: an int dict, which the cyclic collector skips
    return t


_new = object.__new__


def lower(x):
    """`x` seen below every finished transform (a wrapper that escaped its level)."""
    lvl = getattr(x, "_lvl", None)
    while lvl is not None and not lvl.alive:
        x = x._inner
        lvl = x._lvl
    return x


def promote(t, lvl):
    """Make `t`, a tensor below transform level `lvl`, a constant of `lvl` in place: what it
    was moves into a new tensor one level down, which `t` now wraps. A view's base is
    promoted first, and `t` stays a view of it at `lvl`."""
    base = t._base
    if base is not None and base._lvl is not lvl:
        promote(base, lvl)
    old = _new(Tensor)
    for name in Tensor.__slots__[:-2]:
        setattr(old, name, getattr(t, name))
    old.__dict__.update(t.__dict__)
    t.__dict__.clear()
    t._data, t._lvl, t._inner, t._requires_grad, t.grad_fn, t._output_nr = \
        None, lvl, old, False, None, 0
    t._born = old._born
    if base is not None:
        old._base = base._inner
        t._base, t._view_fn, t._view_version = base, old._view_fn, old._view_version


def autograd_self(t):
    """The tensor eager autograd tracks for `t`: `t`, or for a dual tensor its primal (a
    dual level computes its primal with eager autograd, as torch's forward AD does)."""
    while t._lvl is not None and t._lvl.primal_autograd:
        t = t._inner
    return t


def wrap(inner, lvl, aux=None):
    """A tensor of transform level `lvl` around `inner` (`make`'s slots, inlined: every
    primitive at a level makes one)."""
    t = _new(Tensor)
    t._data = t.grad_fn = None
    t._lvl = lvl
    t._requires_grad = False
    t._output_nr = 0
    t._inner = inner
    t._vc = inner._vc     # one memory, one version counter
    t._aux = aux
    return t
