"""nn.utils.parametrize: a module tensor computed from an underlying parameter.

    class Symmetric(nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)

    P.register_parametrization(layer, "weight", Symmetric())
    layer.weight          # recomputed from layer.parametrizations.weight.original

As torch: the module's class is swapped for a subclass `Parametrized<Name>`
holding a property per parametrized tensor; the original lives in
`module.parametrizations[name].original` (so state_dict keys are
`parametrizations.<name>.original`). A parametrization with `right_inverse`
maps assigned values (and the initial one) back to the original.
"""
import contextlib

from ... import _tensor as _t
from ...core.grad_mode import no_grad
from ..modules.container import ModuleDict, ModuleList
from ..modules.module import Module
from ..parameter import Parameter

_cache = {"enabled": 0, "values": {}}


@contextlib.contextmanager
def cached():
    """Compute each parametrized tensor once inside the block (e.g. for an RNN's steps)."""
    _cache["enabled"] += 1
    try:
        yield
    finally:
        _cache["enabled"] -= 1
        if not _cache["enabled"]:
            _cache["values"] = {}


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, applied in order to `original`."""

    def __init__(self, modules, original, unsafe=False):
        super().__init__(modules)
        self.unsafe = unsafe
        with no_grad():
            new = original
            for m in reversed(list(self)):
                if hasattr(m, "right_inverse"):
                    new = m.right_inverse(new)
        if not isinstance(new, _t.Tensor):
            raise ValueError("parametrize: a right_inverse that returns several tensors is not "
                             "supported; return one tensor")
        if new is not original:
            _check_like(original, new, "right_inverse", unsafe)
            original.data = new.detach()
        if isinstance(original, Parameter):
            self.register_parameter("original", original)
        else:
            self.register_buffer("original", original)

    def right_inverse(self, value):
        """Set `original` so that the parametrized tensor becomes `value`."""
        with no_grad():
            for m in reversed(list(self)):
                if not hasattr(m, "right_inverse"):
                    raise RuntimeError(f"parametrization {type(m).__name__} does not implement "
                                       "right_inverse.")
                value = m.right_inverse(value)
            _check_like(self.original, value, "right_inverse", self.unsafe)
            self.original.copy_(value)

    def forward(self):
        x = self.original
        for m in self:
            x = m(x)
        return x


def _check_like(original, new, what, unsafe):
    if unsafe:
        return
    if not isinstance(new, _t.Tensor):
        raise ValueError(f"'{what}' must return a tensor. Got an instance of "
                         f"{type(new).__name__}.")
    if new.dtype != original.dtype:
        raise ValueError(f"When `right_inverse` outputs one tensor, it may not change the "
                         f"dtype.\noriginal.dtype: {original.dtype}\n{what}(original).dtype: "
                         f"{new.dtype}")
    if tuple(new.shape) != tuple(original.shape):
        raise ValueError(f"When `right_inverse` outputs one tensor, it may not change the "
                         f"shape.\noriginal.shape: {tuple(original.shape)}\n"
                         f"{what}(original).shape: {tuple(new.shape)}")


def is_parametrized(module, tensor_name=None):
    """Whether `module` has parametrizations (on `tensor_name`, if given)."""
    params = module.__dict__.get("_modules", {}).get("parametrizations")
    if not isinstance(params, ModuleDict):
        return False
    return len(params) > 0 if tensor_name is None else tensor_name in params


def type_before_parametrizations(module):
    """The module's class before parametrization swapped it."""
    return type(module).__bases__[0] if is_parametrized(module) else type(module)


def _property(name):
    def getter(self):
        key = (id(self), name)
        if _cache["enabled"] and key in _cache["values"]:
            return _cache["values"][key]
        value = self.parametrizations[name]()
        if _cache["enabled"]:
            _cache["values"][key] = value
        return value

    def setter(self, value):
        self.parametrizations[name].right_inverse(value)

    return property(getter, setter)


def register_parametrization(module, tensor_name, parametrization, *, unsafe=False):
    """Make `module.<tensor_name>` the output of `parametrization` on the original tensor."""
    if not isinstance(parametrization, Module):
        raise TypeError("parametrization must be an nn.Module, got "
                        f"{type(parametrization).__name__}")
    if is_parametrized(module, tensor_name):
        plist = module.parametrizations[tensor_name]
        if not unsafe:
            before = getattr(module, tensor_name)
            _check_like(before, parametrization(before), "parametrization", False)
        plist.append(parametrization)
        plist.unsafe |= unsafe
        return module
    if tensor_name not in module._parameters and tensor_name not in module._buffers:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a "
                         f"parametrized element with name '{tensor_name}'")
    original = getattr(module, tensor_name)
    plist = ParametrizationList([parametrization], original, unsafe=unsafe)
    if not unsafe:
        _check_like(original, plist(), "parametrization", False)
    delattr(module, tensor_name)
    if not is_parametrized(module):
        cls = type(module)
        module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), {})
        module.parametrizations = ModuleDict()
    setattr(type(module), tensor_name, _property(tensor_name))
    module.parametrizations[tensor_name] = plist
    return module


def remove_parametrizations(module, tensor_name, leave_parametrized=True):
    """Undo `register_parametrization`: the tensor becomes a plain parameter (or buffer)
    again, holding the parametrized value (or the original one)."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    plist = module.parametrizations[tensor_name]
    original = plist.original
    if leave_parametrized:
        with no_grad():
            value = getattr(module, tensor_name)
        original.data = value.detach()
    delattr(type(module), tensor_name)
    del module.parametrizations[tensor_name]
    if isinstance(original, Parameter):
        module.register_parameter(tensor_name, original)
    else:
        module.register_buffer(tensor_name, original)
    if not is_parametrized(module):
        del module._modules["parametrizations"]
        module.__class__ = type(module).__bases__[0]
    return module
