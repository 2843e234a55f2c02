"""torch.cuda: answered by the device type serving "cuda" (CuPy's, where CuPy is installed).
Without one the questions answer "no" (as torch's CPU build does), and anything that needs a GPU
raises torch's error. Seeding is accepted and ignored: arraygrad draws random numbers on the cpu
(and moves them), which torch documents as safe where CUDA is absent."""
from .. import _device

__all__ = ["is_available", "device_count", "is_initialized", "manual_seed", "manual_seed_all",
           "current_device", "synchronize", "get_device_name", "empty_cache"]


def is_available():
    return _device.count("cuda") > 0


def device_count():
    return _device.count("cuda")


def is_initialized():
    return is_available()


def manual_seed(seed):
    """Seed the GPU streams: random tensors are drawn on the cpu here, so nothing to seed."""


def manual_seed_all(seed):
    """Seed every GPU's stream: random tensors are drawn on the cpu here, so nothing to seed."""


def empty_cache():
    """Release cached GPU memory: the device type's `empty_cache` where it caches (CuPy's
    memory pool keeps freed blocks for reuse)."""
    release = getattr(_device.devices_of("cuda"), "empty_cache", None)
    if release is not None:
        release()


def _gpu(device):
    """(the "cuda" device type, the checked device) for `device` (None: the current GPU)."""
    dev = _device.check("cuda" if device is None else
                        f"cuda:{device}" if isinstance(device, int) else device)
    if dev.type != "cuda":
        raise ValueError(f"Expected a cuda device, but got: {dev}")
    return _device.devices_of("cuda"), dev


def current_device():
    return _gpu(None)[1].index


def synchronize(device=None):
    """Wait for the GPU's queued work (CuPy launches kernels asynchronously)."""
    devices, dev = _gpu(device)
    devices.synchronize(dev.index)


def get_device_name(device=None):
    devices, dev = _gpu(device)
    return devices.get_device_name(dev.index)


from . import amp  # noqa: E402,F401  (torch.cuda.amp: deprecated aliases of torch.amp)
