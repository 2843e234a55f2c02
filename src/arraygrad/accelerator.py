"""torch.accelerator: which accelerator scripts should use: "cuda" where a device type serves
it with at least one device (CuPy and a GPU), else none (arraygrad runs on the cpu)."""
from . import _device

__all__ = ["is_available", "current_accelerator", "device_count"]


def is_available():
    return _device.count("cuda") > 0


def current_accelerator(check_available=False):
    return _device.device("cuda") if is_available() else None


def device_count():
    return _device.count("cuda")
