"""Optimizer: parameter groups, per-parameter state, zero_grad, state_dict (torch.optim)."""
import copy
from collections import defaultdict

from .. import _tensor as _t
from ..backends import backend_of
from ..core.grad_mode import enable_grad, no_grad
from ..ops import creation, elementwise, shape
from ..nn.modules.module import _typename, _zero_grad

Tensor = _t.Tensor


class Optimizer:
    """Base class: subclasses implement `step` over `self.param_groups`.

    `params` is an iterable of tensors, of (name, tensor) pairs, or of dicts
    (parameter groups, each with its own options overriding `defaults`).
    """

    def __init__(self, params, defaults):
        self.defaults = defaults
        self.state = defaultdict(dict)
        self.param_groups = []
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            f"Tensors or dicts, but got {_typename(params)}")
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for g in groups:
            self.add_param_group(g)

    def add_param_group(self, param_group):
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        group = dict(param_group)
        params = group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        params = list(params)
        if params and isinstance(params[0], tuple):
            group["param_names"] = [n for n, _ in params]
            params = [p for _, p in params]
        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, but one of the params is "
                                f"{_typename(p)}")
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        group["params"] = params
        for name, default in self.defaults.items():
            group.setdefault(name, default)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(group)

    def zero_grad(self, set_to_none=True):
        for group in self.param_groups:
            for p in group["params"]:
                _zero_grad(p, set_to_none)

    def _closure_loss(self, closure):
        if closure is None:
            return None
        with enable_grad():
            return closure()

    def step(self, closure=None):
        """Evaluate `closure` (with grad) if given, then `_update` each parameter with a grad."""
        loss = self._closure_loss(closure)
        self._opt_called = True        # read by lr schedulers (NOTE in lr_scheduler.step)
        with no_grad():
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is not None:
                        self._update(p, group)
        return loss

    def _update(self, p, group):
        raise NotImplementedError(f"{type(self).__name__} does not implement step()")

    # ----------------------------------------------------------- state_dict
    def state_dict(self):
        """{'state': {index: state}, 'param_groups': [group with 'params' as indices]}."""
        index = {}
        groups = []
        for g in self.param_groups:
            packed = {k: v for k, v in g.items() if k != "params"}
            packed["params"] = []
            for p in g["params"]:
                index.setdefault(id(p), len(index))
                packed["params"].append(index[id(p)])
            groups.append(packed)
        state = {index[id(p)]: s for p, s in self.state.items() if id(p) in index}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        groups = state_dict["param_groups"]
        if len(groups) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        for mine, theirs in zip(self.param_groups, groups):
            if len(mine["params"]) != len(theirs["params"]):
                raise ValueError("loaded state dict contains a parameter group that doesn't "
                                 "match the size of optimizer's group")
        self.state = defaultdict(dict)
        for mine, theirs in zip(self.param_groups, groups):
            for p, i in zip(mine["params"], theirs["params"]):
                if i in state_dict["state"]:
                    self.state[p] = {k: _cast(p, k, v)
                                     for k, v in state_dict["state"][i].items()}
            for k, v in theirs.items():
                if k != "params":
                    mine[k] = copy.deepcopy(v)

    def __repr__(self):
        lines = [type(self).__name__ + " ("]
        for i, g in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            for k in sorted(g):
                if k != "params":
                    lines.append(f"    {k}: {g[k]}")
        lines.append(")")
        return "\n".join(lines)


# NOTE [in-place steps]
# A step updates parameters and state in place. Through Tensor methods most in-place ops
# compute out of place and copy (NOTE [in-place]; the plain arithmetic of NOTE [direct
# writes] aside): parameter-sized temporaries per op, which for an MLP step is megabytes that
# glibc hands back to the OS and faults in again every step. When a parameter and its grad are plain tensors over arrays that take in-place writes
# (NumPy's), the step runs on the arrays themselves, as torch's foreach kernels do, and bumps
# the version counters it wrote; otherwise (a transform's tensors, lazy arrays, a tensor lr)
# the same code runs on the tensors. `space(p, group)` gives the namespace and the accessor.
# On arrays, the step's temporaries (`temp`) are written into scratch buffers the optimizer
# keeps across steps, one per dtype and slot, sized for its largest parameter: a step then
# allocates nothing, and the heap stays the size it was.
def space(p, group):
    """(namespace, value): the array namespace and `t -> t's array` for a plain parameter,
    else arraygrad's elementwise ops and the identity (see NOTE [in-place steps])."""
    g = p.grad
    if p._lvl is None and g._lvl is None and type(p._data) is type(g._data) and not \
            isinstance(group["lr"], Tensor) and getattr(p._data, "flags", None) is not None \
            and p._data.flags.writeable:
        return backend_of(p._data).xp, _array
    return elementwise, _same


def _array(t):
    return t._data


def _same(t):
    return t


def written(value, *tensors):
    """Bump the version counters of `tensors` after `value`'s namespace wrote their arrays."""
    if value is _array:
        for t in tensors:
            t._vc[0] += 1


def scaled(x, factor):
    """`x * factor` computed in place: `x` is a temporary of the step."""
    x *= factor
    return x


def temp(opt, value, fn, x, *args, slot=0):
    """`fn(x, *args)`, a temporary of the step shaped and typed as `x`: on arrays written into
    `opt`'s scratch buffer `slot` (temporaries alive at once take different slots), a new
    tensor otherwise (NOTE [in-place steps])."""
    if value is not _array:
        return fn(x, *args)
    bufs = opt.__dict__.setdefault("_scratch", {})
    key = (x.dtype, slot)
    buf = bufs.get(key)
    if buf is None or buf.size < x.size:
        buf = bufs[key] = backend_of(x).xp.empty(x.size, dtype=x.dtype)
    return fn(x, *args, out=buf[:x.size].reshape(x.shape))


def state_copy(x):
    """A new state tensor holding a copy of `x` (an array or a tensor, as `space` gives)."""
    if isinstance(x, Tensor):
        return shape.clone(x)
    return _t.make(backend_of(x).xp.asarray(x, copy=True))


def check_range(what, value, low=0.0, high=None):
    """torch's constructor check: `Invalid {what}: {value}` unless low <= value (< high)."""
    if not (low <= value and (high is None or value < high)):
        raise ValueError(f"Invalid {what}: {value}")


def scalar_tensor(value):
    """A 0-d state tensor ('step', 'mu_product') in torch's scalar dtype (the default float)."""
    return creation.tensor(float(value))


def check_options(opt, differentiable):
    """torch's performance switches (foreach, fused, capturable) change no result and are
    accepted as given; `differentiable=True` (gradients through the step) is not supported."""
    if differentiable:
        raise NotImplementedError(f"{type(opt).__name__}: differentiable=True (differentiating "
                                  "through the optimizer step) is not supported")


def _cast(param, key, value):
    """A loaded state tensor as a fresh copy in the parameter's dtype ('step' stays as is)."""
    if not isinstance(value, Tensor):
        return copy.deepcopy(value)
    with no_grad():
        if key != "step" and value.is_floating_point():
            return value.to(param.dtype).clone()
        return value.clone()
