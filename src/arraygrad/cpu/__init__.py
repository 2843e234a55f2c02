"""torch.cpu: the device every tensor lives on here; `torch.cpu.amp` holds the deprecated
autocast alias."""
from . import amp  # noqa: F401

__all__ = ["is_available", "device_count", "current_device", "synchronize"]


def is_available():
    return True


def device_count():
    return 1


def current_device():
    return "cpu"


def synchronize(device=None):
    """Wait for CPU work to finish: every op here runs synchronously."""
