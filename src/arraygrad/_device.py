"""torch.device, the registry of device types, and the one check every `device=` goes through.

Tensors live where their backend keeps its arrays: "cpu" for NumPy (and Dask), "cuda:N" for
CuPy. Each device type other than the cpu is served by a *device type* object registered here
(CuPy's for "cuda" is imported the first time "cuda" is asked for), which answers how many
devices there are and gives the backend placing data on each. A device this installation cannot
place data on raises torch's error for it (CUDA: "not compiled with CUDA enabled") instead of
being ignored, so a script never runs on the wrong device without saying so.
"""
import builtins
import importlib
import re

from . import backends

# torch's device types, in the order its error message lists them
_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga",
          "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone")
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

# device type -> its object (see register); types imported on first use -> their module
_TYPES_ON = {}
_MODULES = {"cuda": "cupy_backend"}
_BY_NAME = {}        # a backend's device string -> device (Tensor.device)


def register(type, devices):
    """Serve device type `type` ("cuda", "privateuseone", ...) with `devices`, an object with
    `device_count()`, `backend(index)` (the backend placing data on device `index`),
    `current_device()`, `synchronize(index)` and `get_device_name(index)` (and `close()`, called
    when it is replaced, where it has one); returns the object it replaces (None), so that
    `register(type, previous)` undoes it.

        register("cuda", ArrayApiDevices(array_api_strict, ...))   # a stand-in GPU in tests
    """
    if type == "cpu" or type not in _TYPES:
        raise ValueError(f"register(): '{type}' is not a device type other than cpu; expected "
                         f"one of {', '.join(_TYPES[1:])}")
    previous = devices_of(type)
    if previous is not None and previous is not devices and hasattr(previous, "close"):
        previous.close()
    if devices is None:
        _TYPES_ON.pop(type, None)
    else:
        _TYPES_ON[type] = devices
    return previous


def devices_of(type):
    """The object serving device type `type`, or None where nothing here can place data."""
    if type in _TYPES_ON:
        return _TYPES_ON[type]
    module = _MODULES.get(type)
    found = None
    if module is not None:
        found = importlib.import_module(f"{backends.__name__}.{module}").devices()
    _TYPES_ON[type] = found
    return found


def count(type):
    """How many devices of `type` there are (0 where none can be used)."""
    if type == "cpu":
        return 1
    devices = devices_of(type)
    return 0 if devices is None else devices.device_count()


def check(dev):
    """`dev` (None, a string or a device) as a device data can be placed on (with its index,
    where the type has several), else torch's error."""
    if dev is None:
        return _default
    d = dev if isinstance(dev, device) else device(dev)
    if d.type == "cpu":
        return d
    devices = devices_of(d.type)
    if devices is None:
        if d.type == "cuda":
            raise AssertionError("Torch not compiled with CUDA enabled (arraygrad: CuPy is not "
                                 "installed; pip install 'arraygrad[cupy]')")
        raise NotImplementedError(f"arraygrad: no backend places data on device '{d}'; only "
                                  f"cpu{''.join(', ' + t for t in _TYPES_ON if _TYPES_ON[t])} "
                                  "is available")
    n = devices.device_count()
    if n == 0:
        raise RuntimeError("No CUDA GPUs are available" if d.type == "cuda" else
                           f"arraygrad: no '{d.type}' device is available")
    index = devices.current_device() if d.index is None else d.index
    if index >= n:
        raise RuntimeError(f"{d.type.upper()} error: invalid device ordinal (device {index} of "
                           f"{n} {d.type} devices)")
    return d if d.index is not None else device(d.type, index)


def backend(dev):
    """The backend placing data on the checked device `dev`."""
    if dev.type == "cpu":
        return backends.default_backend()
    return devices_of(dev.type).backend(dev.index)


def place(array, dev):
    """`array` on the checked device `dev`: itself where it is there already (an array of any
    library on the cpu stays, so a Dask array stays lazy), else moved by `backends.move`."""
    if dev is None or backends.backend_of(array).device == _name(dev):
        return array
    return backends.move(array, backend(dev))


def _name(dev):
    return "cpu" if dev.type == "cpu" else str(dev)


def of(name):
    """The device of a backend's device string ("cpu", "cuda:0")."""
    d = _BY_NAME.get(name)
    if d is None:
        d = _BY_NAME[name] = device(name)
    return d


def set_default_device(dev):
    """Where creation functions put tensors when no `device=` is given."""
    global _default
    _default = CPU if dev is None else check(dev)


def get_default_device():
    return _default
