"""torch.device, and the one check every `device=` argument goes through.

Tensors live where their backend keeps its arrays: "cpu" for NumPy. A device this installation
cannot place data on raises torch's error for it (CUDA: "not compiled with CUDA enabled") instead
of being ignored, so a script never runs on the wrong device without saying so.
"""
import builtins
import re

# torch's device types, in the order its error message lists them
_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga",
          "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone")
_AVAILABLE = ("cpu",)
_SPEC = re.compile(r"^([a-z_]+)(?::(\d+))?$")


class device:
    """`device("cpu")`, `device("cuda:1")`, `device("cuda", 1)`: a type and an optional index."""

    __slots__ = ("type", "index")

    def __init__(self, type, index=None):
        if isinstance(type, device):
            type, index = type.type, type.index if index is None else index
        elif isinstance(type, int):
            raise RuntimeError("Cannot access accelerator device when none is available.")
        elif not isinstance(type, str):
            raise TypeError(f"device() received an invalid combination of arguments - got "
                            f"({builtins.type(type).__name__}), but expected one of: "
                            "(torch.device device) (str type, int index = -1)")
        else:
            m = _SPEC.match(type)
            if m is None:
                if re.match(r"[a-z_]*", type).group() not in _TYPES:
                    raise RuntimeError(_unknown(type))
                raise RuntimeError(f"Invalid device string: '{type}'")
            type, spec_index = m.group(1), m.group(2)
            if type not in _TYPES:
                raise RuntimeError(_unknown(type))
            if spec_index is not None:
                if index is not None:
                    raise RuntimeError("type (string) must not include an index because index "
                                       f"was passed explicitly: {type}:{spec_index}")
                index = int(spec_index)
        if index is not None and index < 0:
            raise RuntimeError(f"Device index must not be negative, got {index}")
        object.__setattr__(self, "type", type)
        object.__setattr__(self, "index", index)

    def __setattr__(self, name, value):
        raise AttributeError(f"attribute '{name}' of 'torch.device' objects is not writable")

    def __eq__(self, other):
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self):
        return hash((self.type, self.index))

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __reduce__(self):
        return device, (self.type, self.index)


def _unknown(spec):
    return (f"Expected one of {', '.join(_TYPES)} device type at start of device string: {spec}")


CPU = device("cpu")
_default = CPU


def check(dev):
    """`dev` (None, a string or a device) as a device data can be placed on, else torch's error."""
    if dev is None:
        return _default
    d = dev if isinstance(dev, device) else device(dev)
    if d.type in _AVAILABLE:
        return d
    if d.type == "cuda":
        raise AssertionError("Torch not compiled with CUDA enabled (arraygrad: no GPU backend is "
                             "available here)")
    raise NotImplementedError(f"arraygrad: no backend places data on device '{d}'; only "
                              f"{', '.join(_AVAILABLE)} is available")


def set_default_device(dev):
    """Where creation functions put tensors when no `device=` is given."""
    global _default
    _default = CPU if dev is None else check(dev)


def get_default_device():
    return _default
