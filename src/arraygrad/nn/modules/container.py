"""Containers (torch.nn.modules.container): Sequential, ModuleList, ModuleDict, ParameterList,
ParameterDict."""
import operator
from collections import OrderedDict

from ... import _tensor as _t
from ..parameter import Parameter
from .module import Module

Tensor = _t.Tensor


class _NumberedModules(Module):
    """Children keyed "0", "1", ...: what Sequential and ModuleList share."""

    def __setitem__(self, idx, module):
        self.add_module(_key(self, idx), module)

    def __delitem__(self, idx):
        if isinstance(idx, slice):
            for k in list(self._modules)[idx]:
                del self._modules[k]
        else:
            del self._modules[_key(self, idx)]
        # keep keys 0..n-1, as torch does
        mods = list(self._modules.values())
        self._modules.clear()
        for i, m in enumerate(mods):
            self._modules[str(i)] = m

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())


class Sequential(_NumberedModules):
    """Modules applied in order: `Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))`."""

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for name, m in args[0].items():
                self.add_module(name, m)
        else:
            for i, m in enumerate(args):
                self.add_module(str(i), m)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(OrderedDict(list(self._modules.items())[idx]))
        return self._modules[_key(self, idx)]


    def append(self, module):
        self.add_module(str(len(self)), module)
        return self

    def forward(self, input):
        for m in self._modules.values():
            input = m(input)
        return input


class ModuleList(_NumberedModules):
    """A list of modules whose parameters belong to the owner."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(list(self._modules.values())[idx])
        return self._modules[_key(self, idx)]


    def __iadd__(self, modules):
        return self.extend(modules)

    def __add__(self, other):
        return ModuleList(list(self) + list(other))

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules):
        for m in modules:
            self.append(m)
        return self

    def insert(self, index, module):
        mods = list(self._modules.values())
        mods.insert(index, module)
        self._modules.clear()
        for i, m in enumerate(mods):
            self.add_module(str(i), m)


def _key(container, idx):
    """The registry key of position `idx` (negative counts from the end)."""
    idx = operator.index(idx)
    n = len(container)
    if not -n <= idx < n:
        raise IndexError(f"index {idx} is out of range")
    return list(container._modules)[idx % n]


class ModuleDict(Module):
    """Modules by name, registered as children in insertion order."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key):
        return self._modules[key]

    def __setitem__(self, key, module):
        self.add_module(key, module)

    def __delitem__(self, key):
        del self._modules[key]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key):
        return key in self._modules

    def clear(self):
        self._modules.clear()

    def pop(self, key):
        return self._modules.pop(key)

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()

    def update(self, modules):
        """Add from a mapping or from (name, module) pairs."""
        if isinstance(modules, Module) or not hasattr(modules, "__iter__"):
            raise TypeError("ModuleDict.update should be called with an iterable of key/value "
                            f"pairs, but got {type(modules).__name__}")
        pairs = modules.items() if hasattr(modules, "items") else modules
        for j, pair in enumerate(pairs):
            _check_pair("ModuleDict", j, pair)
            self[pair[0]] = pair[1]


def _as_parameter(value):
    """Tensors become Parameters (as torch's ParameterList/Dict); other values stay as is."""
    if isinstance(value, Tensor) and not isinstance(value, Parameter):
        return Parameter(value)
    return value


def _param_repr(p):
    if not isinstance(p, Tensor):
        return f"Object of type: {type(p).__name__}"
    size = "x".join(str(s) for s in p.shape)
    kind = "Parameter containing" if isinstance(p, Parameter) else "Tensor containing"
    return f"{kind}: [torch.{p.dtype.name} of size {size}]"


class ParameterList(Module):
    """A list of parameters (tensors are wrapped as Parameters) owned by the module."""

    def __init__(self, values=None):
        super().__init__()
        self._size = 0
        if values is not None:
            self.extend(values)

    def _set(self, key, value):
        value = _as_parameter(value)
        if isinstance(value, Parameter):
            self.register_parameter(key, value)
        else:
            self._parameters.pop(key, None)
            setattr(self, key, value)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return ParameterList([self[i] for i in range(len(self))[idx]])
        return getattr(self, _key_of(self, idx))

    def __setitem__(self, idx, value):
        self._set(_key_of(self, idx), value)

    def __len__(self):
        return self._size

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def __iadd__(self, values):
        return self.extend(values)

    def __dir__(self):
        return [k for k in super().__dir__() if not k.isdigit()]

    def append(self, value):
        self._size += 1
        self._set(str(self._size - 1), value)
        return self

    def extend(self, values):
        if isinstance(values, Tensor) or not hasattr(values, "__iter__"):
            raise TypeError("ParameterList.extend should be called with an iterable, but got "
                            f"{type(values).__name__}")
        for v in values:
            self.append(v)
        return self

    def extra_repr(self):
        return "\n".join(f"({i}): {_param_repr(p)}" for i, p in enumerate(self))

    def __call__(self, *args, **kwargs):
        raise RuntimeError("ParameterList should not be called.")


class ParameterDict(Module):
    """Parameters by name (tensors are wrapped as Parameters), in insertion order."""

    def __init__(self, parameters=None):
        super().__init__()
        self._keys = {}
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key):
        return getattr(self, key)

    def __setitem__(self, key, value):
        if not isinstance(key, str):
            raise TypeError(f"ParameterDict keys must be strings, got {type(key).__name__}")
        self._keys[key] = None
        value = _as_parameter(value)
        if isinstance(value, Parameter):
            self.register_parameter(key, value)
        else:
            self._parameters.pop(key, None)
            setattr(self, key, value)

    def __delitem__(self, key):
        del self._keys[key]
        delattr(self, key)

    def __len__(self):
        return len(self._keys)

    def __iter__(self):
        return iter(self._keys)

    def __contains__(self, key):
        return key in self._keys

    def keys(self):
        return self._keys.keys()

    def items(self):
        return ((k, self[k]) for k in self._keys)

    def values(self):
        return (self[k] for k in self._keys)

    def get(self, key, default=None):
        return self[key] if key in self else default

    def pop(self, key):
        v = self[key]
        del self[key]
        return v

    def setdefault(self, key, default=None):
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self):
        for k in list(self._keys):
            del self[k]

    def copy(self):
        return ParameterDict(OrderedDict((k, self[k]) for k in self._keys))

    def update(self, values):
        """Add from a mapping or from (name, value) pairs."""
        if isinstance(values, Tensor) or not hasattr(values, "__iter__"):
            raise TypeError("ParametersDict.update should be called with an iterable of "
                            f"key/value pairs, but got {type(values).__name__}")
        pairs = values.items() if hasattr(values, "items") else values
        for j, pair in enumerate(pairs):
            _check_pair("ParameterDict", j, pair)
            self[pair[0]] = pair[1]

    def extra_repr(self):
        return "\n".join(f"({k}): {_param_repr(p)}" for k, p in self.items())

    def __call__(self, input):
        raise RuntimeError("ParameterDict should not be called.")


def _check_pair(owner, j, pair):
    if not isinstance(pair, (tuple, list)):
        raise TypeError(f"{owner} update sequence element #{j} should be Iterable; is "
                        f"{type(pair).__name__}")
    if len(pair) != 2:
        raise ValueError(f"{owner} update sequence element #{j} has length {len(pair)}; 2 is "
                         "required")


def _key_of(container, idx):
    idx = operator.index(idx)
    n = len(container)
    if not -n <= idx < n:
        raise IndexError(f"index {idx} is out of range")
    return str(idx % n)
