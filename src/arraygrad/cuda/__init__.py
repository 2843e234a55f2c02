"""torch.cuda on an installation without a GPU backend: questions answer "no" (as torch's CPU
build does), and anything that needs a GPU raises torch's error. Seeding is accepted and ignored,
which torch documents as safe where CUDA is absent."""
from .. import _device

__all__ = ["is_available", "device_count", "is_initialized", "manual_seed", "manual_seed_all",
           "current_device", "synchronize", "get_device_name", "empty_cache"]


def is_available():
    return False


def device_count():
    return 0


def is_initialized():
    return False


def manual_seed(seed):
    """Seed the GPU streams: silently ignored without CUDA, as torch."""


def manual_seed_all(seed):
    """Seed every GPU's stream: silently ignored without CUDA, as torch."""


def empty_cache():
    """Release cached GPU memory: nothing is cached without CUDA, as torch."""


def _needs_gpu():
    _device.check("cuda")


def current_device():
    _needs_gpu()


def synchronize(device=None):
    _needs_gpu()


def get_device_name(device=None):
    _needs_gpu()


from . import amp  # noqa: E402,F401  (torch.cuda.amp: deprecated aliases of torch.amp)
