"""Module: the base of layers and models, as torch.nn.Module.

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 2)      # a submodule: its parameters are ours
        def forward(self, x):
            return self.fc(x).relu()

Parameters, buffers and submodules live in three ordered dicts and are found
by `__getattr__`, exactly as in torch, so code that walks `_parameters` or
`_modules` directly (functional_call, state-dict tools) works unchanged.
"""
import functools
import inspect
import itertools
import warnings
from collections import OrderedDict, namedtuple

from ... import _device
from ... import _tensor as _t
from ... import dtypes as _dt
from ...autograd.function import Function
from ...core.grad_mode import is_grad_enabled, no_grad
from ..parameter import Parameter

Tensor = _t.Tensor


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()


class RemovableHandle:
    """Returned by `register_*_hook`; `remove()` unregisters the hook."""

    _ids = itertools.count()

    def __init__(self, hooks):
        self.hooks = hooks
        self.id = next(RemovableHandle._ids)

    def remove(self):
        self.hooks.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


class Module:
    """Base class for all neural network modules."""

    training = True

    def __init__(self, *args, **kwargs):
        if args or kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got unexpected arguments; "
                            "Module.__init__ takes none")
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = {}
        d["_buffers"] = {}
        d["_non_persistent_buffers_set"] = set()
        d["_modules"] = {}
        d["_forward_pre_hooks"] = OrderedDict()
        d["_forward_hooks"] = OrderedDict()
        d["_backward_pre_hooks"] = OrderedDict()
        d["_backward_hooks"] = OrderedDict()

    # NOTE [device= of modules]
    # Layers take torch's `device=` and build their parameters on the cpu (the same values as
    # there for a seed); a constructor with a `device` parameter is wrapped once, here, to move
    # what it built to that device, instead of every layer threading it through.
    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        init = cls.__dict__.get("__init__")
        if init is None or "device" not in inspect.signature(init).parameters:
            return
        signature = inspect.signature(init)

        @functools.wraps(init)
        def placed(self, *args, **kw):
            init(self, *args, **kw)
            device = signature.bind(self, *args, **kw).arguments.get("device")
            if device is not None:
                self.to(device)
        cls.__init__ = placed

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required '
                                  '"forward" function')

    def __call__(self, *args, **kwargs):
        d = self.__dict__
        if not (d["_forward_pre_hooks"] or d["_forward_hooks"] or d["_backward_hooks"]
                or d["_backward_pre_hooks"]):
            return self.forward(*args, **kwargs)
        return self._call_with_hooks(args, kwargs)

    def _call_with_hooks(self, args, kwargs):
        for hook, with_kwargs in tuple(self._forward_pre_hooks.values()):
            if with_kwargs:
                new = hook(self, args, kwargs)
                if new is not None:
                    if not (isinstance(new, tuple) and len(new) == 2):
                        raise RuntimeError("forward pre-hook must return None or a tuple of "
                                           f"(new_args, new_kwargs), but got {new}.")
                    args, kwargs = new
            else:
                new = hook(self, args)
                if new is not None:
                    args = new if isinstance(new, tuple) else (new,)
        backward = None
        if self._backward_hooks or self._backward_pre_hooks:
            backward = _BackwardHooks(self)
            args = backward.wrap_inputs(args)
        try:
            out = self.forward(*args, **kwargs)
        except Exception:
            for hook, with_kwargs, always_call in tuple(self._forward_hooks.values()):
                if always_call:
                    hook(self, args, kwargs, None) if with_kwargs else hook(self, args, None)
            raise
        for hook, with_kwargs, _ in tuple(self._forward_hooks.values()):
            new = hook(self, args, kwargs, out) if with_kwargs else hook(self, args, out)
            if new is not None:
                out = new
        if backward is not None:
            out = backward.wrap_outputs(out)
        return out

    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """`hook(module, args)` runs before forward and may return new args
        (`hook(module, args, kwargs)` -> (args, kwargs) with `with_kwargs=True`)."""
        return _add_hook(self._forward_pre_hooks, (hook, with_kwargs), prepend)

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False,
                              always_call=False):
        """`hook(module, args, output)` runs after forward and may return a new output."""
        return _add_hook(self._forward_hooks, (hook, with_kwargs, always_call), prepend)

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """`hook(module, grad_output)` runs when the gradients of the outputs are known; it
        may return new ones."""
        return _add_hook(self._backward_pre_hooks, hook, prepend)

    def register_full_backward_hook(self, hook, prepend=False):
        """`hook(module, grad_input, grad_output)` runs when the gradients of the tensor
        arguments are computed; it may return new ones (None for arguments without grad)."""
        return _add_hook(self._backward_hooks, hook, prepend)

    # ----------------------------------------------------------- registration
    def __setattr__(self, name, value):
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            _remove_from(name, d, d["_buffers"], d["_modules"], d["_non_persistent_buffers_set"])
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            params[name] = None
        elif isinstance(value, Module):
            if params is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            _remove_from(name, d, params, d["_buffers"], d["_non_persistent_buffers_set"])
            d["_modules"][name] = value
        elif params is not None and name in d["_modules"]:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as child module '{name}' "
                                "(torch.nn.Module or None expected)")
            d["_modules"][name] = None
        elif params is not None and name in d["_buffers"]:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' "
                                "(torch.Tensor or None expected)")
            d["_buffers"][name] = value
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        d = self.__dict__
        for registry in ("_parameters", "_buffers", "_modules"):
            r = d.get(registry)
            if r is not None and name in r:
                return r[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        d = self.__dict__
        for registry in ("_parameters", "_buffers", "_modules"):
            if name in d[registry]:
                del d[registry][name]
                d["_non_persistent_buffers_set"].discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        return sorted(set(object.__dir__(self)) | set(self._parameters) | set(self._buffers)
                      | set(self._modules))

    def register_parameter(self, name, param):
        """Add `param` (a Parameter or None) under `name`."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        _check_name(self, name, "parameter", self._parameters)
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                            "(torch.nn.Parameter or None required)")
        self._parameters[name] = param

    def register_buffer(self, name, tensor, persistent=True):
        """Add a tensor that is state but not a parameter (saved in state_dict if persistent)."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        _check_name(self, name, "buffer", self._buffers)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name, module):
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        _check_name(self, name, "module", self._modules)
        self._modules[name] = module

    register_module = add_module

    def get_submodule(self, target):
        mod = self
        for item in target.split(".") if target else ():
            if item not in mod._modules:
                raise AttributeError(f"{type(mod).__name__} has no attribute `{item}`")
            mod = mod._modules[item]
        return mod

    def get_parameter(self, target):
        path, _, name = target.rpartition(".")
        mod = self.get_submodule(path)
        if name not in mod._parameters:
            raise AttributeError(f"{type(mod).__name__} has no parameter `{name}`")
        return mod._parameters[name]

    def get_buffer(self, target):
        path, _, name = target.rpartition(".")
        mod = self.get_submodule(path)
        if name not in mod._buffers:
            raise AttributeError(f"{type(mod).__name__} has no buffer `{name}`")
        return mod._buffers[name]

    # ----------------------------------------------------------- traversal
    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        if memo is None:
            memo = set()
        if remove_duplicate:
            if self in memo:
                return
            memo.add(self)
        yield prefix, self
        for name, m in self._modules.items():
            if m is not None:
                yield from m.named_modules(memo, prefix + ("." if prefix else "") + name,
                                           remove_duplicate)

    def modules(self):
        for _, m in self.named_modules():
            yield m

    def named_children(self):
        seen = set()
        for name, m in self._modules.items():
            if m is not None and m not in seen:
                seen.add(m)
                yield name, m

    def children(self):
        for _, m in self.named_children():
            yield m

    def _named_members(self, registry, prefix, recurse, remove_duplicate):
        mods = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse \
            else [(prefix, self)]
        seen = set()
        for mprefix, m in mods:
            for name, v in m.__dict__[registry].items():
                if v is None:
                    continue
                if remove_duplicate:
                    if id(v) in seen:
                        continue
                    seen.add(id(v))
                yield mprefix + ("." if mprefix else "") + name, v

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        return self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse=True):
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        return self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse=True):
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def __hash__(self):
        return id(self)

    # ----------------------------------------------------------- state
    def state_dict(self, *, destination=None, prefix="", keep_vars=False):
        """Parameters and persistent buffers by dotted name (detached unless keep_vars)."""
        if destination is None:
            destination = OrderedDict()
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = b if keep_vars else b.detach()
        for name, m in self._modules.items():
            if m is not None:
                m.state_dict(destination=destination, prefix=prefix + name + ".",
                             keep_vars=keep_vars)
        return destination

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copy tensors from `state_dict` into this module's parameters and buffers."""
        if not hasattr(state_dict, "keys"):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing, errors = [], []
        expected = set()
        with no_grad():
            for mprefix, m in self.named_modules():
                local = [(n, p) for n, p in m._parameters.items() if p is not None]
                local += [(n, b) for n, b in m._buffers.items()
                          if b is not None and n not in m._non_persistent_buffers_set]
                for name, mine in local:
                    key = mprefix + ("." if mprefix else "") + name
                    expected.add(key)
                    if key not in state_dict:
                        missing.append(key)
                        continue
                    src = state_dict[key]
                    if not isinstance(src, Tensor):
                        errors.append(f'While copying the parameter named "{key}", expected '
                                      f"torch.Tensor or Tensor-like object from checkpoint but "
                                      f"received {type(src)}")
                        continue
                    if src.shape != mine.shape:
                        errors.append(f"size mismatch for {key}: copying a param with shape "
                                      f"{_size(src.shape)} from checkpoint, the shape in current "
                                      f"model is {_size(mine.shape)}.")
                        continue
                    if assign:
                        _assign(m, name, mine, src)
                    else:
                        mine.copy_(src)
        unexpected = [k for k in state_dict.keys() if k not in expected]
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: "
                              + ", ".join(f'"{k}"' for k in unexpected) + ". ")
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: "
                              + ", ".join(f'"{k}"' for k in missing) + ". ")
        if errors:
            raise RuntimeError(f"Error(s) in loading state_dict for {type(self).__name__}:\n\t"
                               + "\n\t".join(errors))
        return _IncompatibleKeys(missing, unexpected)

    # ----------------------------------------------------------- modes and grads
    def train(self, mode=True):
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        for m in self.modules():
            m.__dict__["training"] = mode
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        for p in self.parameters():
            _zero_grad(p, set_to_none)

    def apply(self, fn):
        """Call `fn` on every submodule (children first) and on self; returns self."""
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    # ----------------------------------------------------------- dtype and device
    def _apply(self, fn):
        """Replace every parameter's and buffer's data by `fn(data)`, keeping the objects."""
        for m in self.modules():
            for p in m._parameters.values():
                if p is None:
                    continue
                with no_grad():
                    new = fn(p)
                if new is not p:
                    p.data = new
                    if p.grad is not None:
                        p.grad = fn(p.grad)
            for name, b in m._buffers.items():
                if b is not None:
                    m._buffers[name] = fn(b)
        return self

    def to(self, *args, **kwargs):
        """`to(dtype)`, `to(device)`, `to(device, dtype)`, `to(tensor)`.

        Only floating-point tensors change dtype; parameters stay the same objects (their data
        and gradients move, so an optimizer made before or after keeps working on them).
        """
        dtype, device = kwargs.get("dtype"), kwargs.get("device")
        for a in args:
            if isinstance(a, _dt.dtype):
                dtype = a
            elif isinstance(a, Tensor):
                dtype, device = a.dtype, a.device
            elif isinstance(a, (str, _device.device)):
                device = a
        if dtype is not None and not dtype.is_floating_point:
            raise TypeError(f"nn.Module.to only accepts floating point dtypes, but got desired "
                            f"dtype={dtype}")
        if device is not None:
            device = _device.check(device)
        if dtype is None and device is None:
            return self
        return self._apply(lambda t: t.to(device=device,
                                          dtype=dtype if t.is_floating_point() else None))

    def cuda(self, device=None):
        """Every parameter and buffer on GPU `device` (an index, "cuda:N", or the current GPU)."""
        return self.to(_device.check("cuda" if device is None else
                                     f"cuda:{device}" if isinstance(device, int) else device))

    def cpu(self):
        return self.to("cpu")

    def double(self):
        return self.to(_dt.float64)

    def float(self):
        return self.to(_dt.float32)

    def half(self):
        return self.to(_dt.float16)

    def bfloat16(self):
        return self.to(_dt.bfloat16)

    def type(self, dst_type):
        return self.to(dst_type)

    # ----------------------------------------------------------- printing
    def extra_repr(self):
        return ""

    def _get_name(self):
        return type(self).__name__

    def __repr__(self):
        extra = [line for line in self.extra_repr().split("\n") if line]
        children = [f"({name}): " + repr(m).replace("\n", "\n  ")
                    for name, m in self._modules.items()]
        if len(extra) == 1 and not children:
            return f"{self._get_name()}({extra[0]})"
        if not extra and not children:
            return f"{self._get_name()}()"
        return self._get_name() + "(\n  " + "\n  ".join(extra + children) + "\n)"


def _add_hook(hooks, entry, prepend):
    handle = RemovableHandle(hooks)
    hooks[handle.id] = entry
    if prepend:
        hooks.move_to_end(handle.id, last=False)
    return handle


# NOTE [module backward hooks]
# As torch's BackwardHook: the tensor arguments go through an identity Function
# before forward and the outputs through another after it. The outputs' node runs
# first in backward (it sees grad_output: backward pre-hooks run there); the
# inputs' node then sees grad_input and calls the full backward hooks, whose
# results replace the gradients that flow on to the inputs.
class BackwardHookFunction(Function):
    @staticmethod
    def forward(hooks, kind, *tensors):
        return tuple(t.view_as(t) for t in tensors)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.hooks, ctx.kind = inputs[0], inputs[1]

    @staticmethod
    def backward(ctx, *grads):
        grads = tuple(g if need else None for g, need in zip(grads, ctx.needs_input_grad[2:]))
        return (None, None) + tuple(ctx.hooks.on_grads(ctx.kind, grads))


class _BackwardHooks:
    """One forward call's link between its outputs' and its inputs' gradients."""

    def __init__(self, module):
        self.module, self.grad_output, self.inputs_wrapped, self.n_inputs = module, None, False, 0

    def wrap_inputs(self, args):
        where = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        self.n_inputs = len(where)
        if not (is_grad_enabled() and any(args[i].requires_grad for i in where)):
            return args
        self.inputs_wrapped = True
        new = list(args)
        for i, t in zip(where, BackwardHookFunction.apply(self, "input", *[args[i] for i in where])):
            new[i] = t
        return tuple(new)

    def wrap_outputs(self, out):
        single = isinstance(out, Tensor)
        outs = (out,) if single else out
        if not isinstance(outs, (tuple, list)) or not is_grad_enabled():
            return out
        where = [i for i, o in enumerate(outs) if isinstance(o, Tensor) and o.requires_grad]
        if not where:
            return out
        wrapped = list(outs)
        for i, t in zip(where, BackwardHookFunction.apply(self, "output", *[outs[i] for i in where])):
            wrapped[i] = t
        return wrapped[0] if single else type(outs)(wrapped)

    def on_grads(self, kind, grads):
        module = self.module
        if kind == "output":
            for hook in tuple(module._backward_pre_hooks.values()):
                new = hook(module, grads)
                if new is not None:
                    grads = _checked(new, grads, "grad_output")
            self.grad_output = grads
            if not self.inputs_wrapped:
                # no input needs grad: the hooks see Nones now, as torch (which warns)
                warnings.warn("Full backward hook is firing when gradients are computed with "
                              "respect to module outputs since no inputs require gradients. See "
                              "https://docs.pytorch.org/docs/main/generated/torch.nn.Module.html"
                              "#torch.nn.Module.register_full_backward_hook for more details.",
                              UserWarning, stacklevel=2)
                for hook in tuple(module._backward_hooks.values()):
                    res = hook(module, (None,) * self.n_inputs, grads)
                    if res is not None and not (isinstance(res, tuple) and
                                                all(r is None for r in res)):
                        raise RuntimeError("Backward hook for Modules where no input requires "
                                           "gradient should always return None or None for all "
                                           "gradients.")
            return grads
        for hook in tuple(module._backward_hooks.values()):
            new = hook(module, grads, self.grad_output)
            if new is not None:
                grads = _checked(new, grads, "grad_input")
        return grads


def _checked(new, old, what):
    new = tuple(new) if isinstance(new, (tuple, list)) else (new,)
    if len(new) != len(old):
        raise RuntimeError(f"Backward hook returned an invalid number of {what}, got "
                           f"{len(new)}, but expected {len(old)}")
    return new


def _remove_from(name, *registries):
    for r in registries:
        if name in r:
            r.discard(name) if isinstance(r, set) else r.pop(name)


def _check_name(module, name, what, registry):
    if not isinstance(name, str):
        raise TypeError(f"{what} name should be a string. Got {_typename(name)}")
    if "." in name:
        raise KeyError(f'{what} name can\'t contain "."')
    if name == "":
        raise KeyError(f'{what} name can\'t be empty string ""')
    if name not in registry and hasattr(module, name):
        raise KeyError(f"attribute '{name}' already exists")


def _typename(v):
    if isinstance(v, Tensor):
        return {"float32": "torch.FloatTensor", "float64": "torch.DoubleTensor",
                "float16": "torch.HalfTensor", "bfloat16": "torch.BFloat16Tensor", "int64": "torch.LongTensor",
                "int32": "torch.IntTensor", "bool": "torch.BoolTensor"}.get(v.dtype.name,
                                                                            "torch.Tensor")
    return type(v).__name__


def _size(shape):
    return f"torch.Size({list(shape)})"


def _assign(module, name, mine, src):
    if name in module._parameters:
        module._parameters[name] = Parameter(src, requires_grad=mine.requires_grad)
    else:
        module._buffers[name] = src


def _zero_grad(p, set_to_none):
    if p.grad is None:
        return
    if set_to_none:
        p.grad = None
        return
    g = p.grad
    if g.grad_fn is not None:
        g.detach_()
    else:
        g.requires_grad_(False)
    g.zero_()
