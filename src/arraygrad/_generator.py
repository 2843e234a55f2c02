"""Generator: a seeded random stream of its own (torch.Generator), for samplers and splits.

    g = torch.Generator().manual_seed(0)
    DataLoader(ds, shuffle=True, generator=g)     # the same order on every run

Its stream is NumPy's PCG64, so the numbers differ from torch's for the same
seed; what carries over is determinism: same seed, same sequence.
"""
import json

import numpy as np

from . import _device
from . import _tensor as _t
from . import dtypes as _dt
from .backends import default_backend

_DEFAULT_SEED = 67280421310721      # torch's seed for a fresh Generator


class Generator:
    """An independent random stream: `manual_seed`, `initial_seed`, `seed`, `get_state`,
    `set_state`."""

    def __init__(self, device="cpu"):
        if str(device) != "cpu":
            raise RuntimeError(f"Generator: device '{device}' is not available; arraygrad "
                               "generators live on the cpu")
        self.device = _device.CPU
        self.manual_seed(_DEFAULT_SEED)

    def manual_seed(self, seed):
        """Restart the stream from `seed` (an int); returns self."""
        seed = int(seed)
        if seed < -(2 ** 63) or seed >= 2 ** 64:
            raise RuntimeError(f"Overflow when unpacking long long: seed {seed} does not fit in "
                               "64 bits")
        self._seed = seed % 2 ** 64
        self._rng = np.random.default_rng(self._seed)
        return self

    def initial_seed(self):
        return self._seed

    def seed(self):
        """Reseed from fresh OS entropy; returns the new seed."""
        s = int(np.random.SeedSequence().entropy % 2 ** 63)
        self.manual_seed(s)
        return s

    def get_state(self):
        """The stream's full state as a uint8 tensor (for `set_state`)."""
        blob = json.dumps({"seed": self._seed, "state": self._rng.bit_generator.state})
        return _t.make(np.frombuffer(blob.encode(), dtype=np.uint8).copy())

    def set_state(self, new_state):
        if not isinstance(new_state, _t.Tensor) or new_state.dtype != _dt.uint8:
            raise TypeError("Generator.set_state: expected a torch.ByteTensor from get_state(), "
                            f"got {type(new_state).__name__}")
        try:
            saved = json.loads(bytes(new_state.numpy().tobytes()).decode())
            rng = np.random.default_rng()
            rng.bit_generator.state = saved["state"]
            seed = int(saved["seed"])
        except (ValueError, KeyError, TypeError) as e:
            raise RuntimeError("Generator.set_state: the state is not one from "
                               f"Generator.get_state() ({e})") from None
        self._seed, self._rng = seed, rng
        return self

    def _integers(self, high):
        """A draw in [0, high) (the seeds samplers derive from a generator)."""
        return int(self._rng.integers(high))

    def _permutation(self, n):
        return self._rng.permutation(n)


def draw_seed(generator=None):
    """A 63-bit seed from `generator`, or from the global stream when None (torch's way of
    giving each sampler its own generator)."""
    if generator is not None:
        return generator._integers(2 ** 63)
    return int(default_backend().random().integers(2 ** 63))
