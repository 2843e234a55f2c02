"""functorch: the deprecated functorch API that scripts still import.

    import arraygrad.functorch as functorch         # for `import functorch`
    fmodel, params = functorch.make_functional(model)
    grads = functorch.grad(lambda p: fmodel(p, x).sum())(params)

torch ships this as a top-level `functorch` package; arraygrad provides it as
`arraygrad.functorch` (a top-level `functorch` module would shadow the real one).
Every name warns as torch's functorch does (FutureWarning): the transforms are `func`'s, and
`make_functional*` / `combine_state_for_ensemble` are built on their replacements,
`func.functional_call` / `func.stack_module_state`.
"""
import copy
import functools
import warnings


from . import func
from .func import functional_call, stack_module_state
from .nn import Module


def _deprecated(name, instead):
    warnings.warn(f"We've integrated functorch into PyTorch. As the final step of the "
                  f"integration, `functorch.{name}` is deprecated as of PyTorch 2.0 and will be "
                  f"deleted in a future version of PyTorch >= 2.3. Please use "
                  f"`torch.func.{instead}` instead; see the PyTorch 2.0 release notes and/or "
                  f"the `torch.func` migration guide for more details "
                  f"https://pytorch.org/docs/main/func.migrating.html", FutureWarning,
                  stacklevel=3)


def _deprecated_transform(name):
    target = getattr(func, name)

    @functools.wraps(target)
    def transform(*args, **kwargs):
        _deprecated(name, name)
        return target(*args, **kwargs)
    return transform


grad = _deprecated_transform("grad")
grad_and_value = _deprecated_transform("grad_and_value")
vjp = _deprecated_transform("vjp")
jvp = _deprecated_transform("jvp")
jacrev = _deprecated_transform("jacrev")
jacfwd = _deprecated_transform("jacfwd")
hessian = _deprecated_transform("hessian")
vmap = _deprecated_transform("vmap")


def _by_name(owner, names, values, what):
    values = tuple(values)
    if len(values) != len(names):
        raise RuntimeError(f"{owner}: expected {len(names)} {what} ({', '.join(names)}), got "
                           f"{len(values)}")
    return dict(zip(names, values))


def _extract(model, named, disable_autograd_tracking):
    items = list(named(model))
    names, tensors = tuple(n for n, _ in items), tuple(t for _, t in items)
    if disable_autograd_tracking:
        for t in tensors:
            t.requires_grad_(False)
    return tuple(names), tuple(tensors)


class FunctionalModule(Module):
    """`fmodel(params, *args)`: the model's forward with `params` in place of its parameters."""

    def __init__(self, stateless_model, param_names):
        super().__init__()
        self.stateless_model = stateless_model
        self.param_names = param_names

    @staticmethod
    def _create_from(model, disable_autograd_tracking=False):
        model_copy = copy.deepcopy(model)
        names, params = _extract(model_copy, lambda m: m.named_parameters(),
                                 disable_autograd_tracking)
        return FunctionalModule(model_copy, names), params

    def forward(self, params, *args, **kwargs):
        values = _by_name("FunctionalModule", self.param_names, params, "parameters")
        return functional_call(self.stateless_model, values, args, kwargs)


class FunctionalModuleWithBuffers(Module):
    """`fmodel(params, buffers, *args)`: the forward with both replaced (buffers updated in
    place, as a BatchNorm's running statistics are)."""

    def __init__(self, stateless_model, param_names, buffer_names):
        super().__init__()
        self.stateless_model = stateless_model
        self.param_names = param_names
        self.buffer_names = buffer_names

    @staticmethod
    def _create_from(model, disable_autograd_tracking=False):
        model_copy = copy.deepcopy(model)
        names, params = _extract(model_copy, lambda m: m.named_parameters(),
                                 disable_autograd_tracking)
        buffer_names, buffers = _extract(model_copy, lambda m: m.named_buffers(), False)
        return FunctionalModuleWithBuffers(model_copy, names, buffer_names), params, buffers

    def forward(self, params, buffers, *args, **kwargs):
        owner = "FunctionalModuleWithBuffers"
        values = (_by_name(owner, self.param_names, params, "parameters"),
                  _by_name(owner, self.buffer_names, buffers, "buffers"))
        return functional_call(self.stateless_model, values, args, kwargs)


def make_functional(model, disable_autograd_tracking=False):
    """(fmodel, params): a stateless copy of `model` and a copy of its parameters."""
    _deprecated("make_functional", "functional_call")
    if not isinstance(model, Module):
        raise RuntimeError(f"make_functional(model): expected an nn.Module, got "
                           f"{type(model).__name__}")
    if len(list(model.buffers())) > 0:
        raise RuntimeError("make_functional(model): `model` has buffers. Please use "
                           "make_functional_with_buffers(model) instead.")
    return FunctionalModule._create_from(model, disable_autograd_tracking)


def make_functional_with_buffers(model, disable_autograd_tracking=False):
    """(fmodel, params, buffers): as make_functional, for models with buffers."""
    _deprecated("make_functional_with_buffers", "functional_call")
    if not isinstance(model, Module):
        raise RuntimeError(f"make_functional_with_buffers(model): expected an nn.Module, got "
                           f"{type(model).__name__}")
    return FunctionalModuleWithBuffers._create_from(model, disable_autograd_tracking)


def combine_state_for_ensemble(models):
    """(fmodel, params, buffers): one stateless model and the models' parameters and buffers
    stacked along a new first dim (not requiring grad), for `vmap(fmodel)(params, buffers, x)`."""
    _deprecated("combine_state_for_ensemble", "stack_module_state")
    models = list(models)
    if not models:
        raise RuntimeError("combine_state_for_ensemble: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or not any(m.training for m in models)):
        raise RuntimeError("combine_state_for_ensemble: Expected all models to have the same "
                           "training/eval mode.")
    if any(type(m) is not type(models[0]) for m in models):
        raise RuntimeError("combine_state_for_ensemble: Expected all models to be of the same "
                           "class.")
    params, buffers = stack_module_state(models)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)      # warned once, above
        fmodel, _, _ = make_functional_with_buffers(models[0])
    return (fmodel, tuple(params[n].detach() for n in fmodel.param_names),
            tuple(buffers[n].detach() for n in fmodel.buffer_names))
