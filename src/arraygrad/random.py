"""torch.random: the global random stream's functions, and `fork_rng`.

    with torch.random.fork_rng():       # draws inside do not move the stream outside
        torch.manual_seed(0)
        noise = torch.randn(3)
"""
import contextlib

from ._generator import Generator, default_generator  # noqa: F401
from .ops.creation import (manual_seed, seed, initial_seed, get_rng_state,  # noqa: F401
                           set_rng_state)


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices",
             device_type=None):
    """Save the global stream's state on entry and restore it on exit. Only the cpu stream
    exists here: `devices` (GPU indices) must be empty or None, `device_type` cpu or None."""
    if devices:
        raise RuntimeError(f"{_caller}: {_devices_kw}={list(devices)} names GPU devices; no GPU "
                           "backend is available here")
    if device_type not in (None, "cpu", "cuda"):
        raise RuntimeError(f"{_caller}: device_type '{device_type}' is not available")
    if not enabled:
        yield
        return
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)
