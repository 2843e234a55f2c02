"""Generator: a seeded random stream (torch.Generator), and `default_generator`, the global one.

    g = torch.Generator().manual_seed(0)
    torch.rand(3, generator=g)                    # drawn from g, not the global stream
    DataLoader(ds, shuffle=True, generator=g)     # the same order on every run

Its stream is NumPy's PCG64, so the numbers differ from torch's for the same
seed; what carries over is determinism: same seed, same sequence.
`default_generator` wraps the backend's global stream object (never replaced,
only reseeded in place), so `manual_seed`, `get_rng_state` and every random
function without `generator=` act on that one stream.
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
        self._seed = _DEFAULT_SEED
        self._rng = np.random.default_rng(_DEFAULT_SEED)

    def __repr__(self):
        return f"<arraygrad.Generator object at {id(self):#x}>"

    def manual_seed(self, seed):
        """Restart the stream from `seed` (an int); returns self."""
        seed = int(seed)
        if seed < -(2 ** 63) or seed >= 2 ** 64:
            raise RuntimeError(f"Overflow when unpacking long long: seed {seed} does not fit in "
                               "64 bits")
        self._seed = seed % 2 ** 64
        # in place: whoever holds the stream object (the backend) sees the new seed
        self._rng.bit_generator.state = np.random.PCG64(self._seed).state
        return self

    def initial_seed(self):
        return self._seed

    def seed(self):
        """Reseed from fresh OS entropy; returns the new seed."""
        s = int(np.random.SeedSequence().entropy % 2 ** 64)
        self.manual_seed(s)
        return s

    def get_state(self):
        """The stream's full state as a uint8 tensor (for `set_state`)."""
        blob = json.dumps({"seed": self._seed, "state": self._rng.bit_generator.state})
        return _t.make(np.frombuffer(blob.encode(), dtype=np.uint8).copy())

    def set_state(self, new_state):
        return self._restore(new_state, "Generator.set_state", "Generator.get_state()")

    def _restore(self, new_state, what, source):
        """Set the stream from a state tensor; validated before the live stream is touched."""
        if not isinstance(new_state, _t.Tensor) or new_state.dtype != _dt.uint8:
            raise TypeError(f"{what}: expected a torch.ByteTensor from {source}, got "
                            f"{type(new_state).__name__} of dtype "
                            f"{getattr(new_state, 'dtype', None)}")
        try:
            saved = json.loads(bytes(new_state.numpy().tobytes()).decode())
            probe = np.random.PCG64()
            probe.state = saved["state"]
            seed = int(saved["seed"])
        except (ValueError, KeyError, TypeError, UnicodeDecodeError) as e:
            raise RuntimeError(f"{what}: the state is not one from {source} ({e})") from None
        self._rng.bit_generator.state = probe.state
        self._seed = seed
        return self

    def _permutation(self, n):
        return self._rng.permutation(n)


def _global():
    """The Generator over the backend's global stream object, seeded from OS entropy (as
    torch's default generator is at startup)."""
    g = Generator.__new__(Generator)
    g.device, g._rng = _device.CPU, default_backend().random()
    g.seed()
    return g


default_generator = _global()


def stream(generator, what):
    """The NumPy stream a random op draws from: `generator`'s, or the global one when None."""
    if generator is None:
        return default_generator._rng
    if not isinstance(generator, Generator):
        raise TypeError(f"{what}(): argument 'generator' must be torch.Generator, not "
                        f"{type(generator).__name__}")
    return generator._rng


def draw_seed(generator=None):
    """A 63-bit seed from `generator`, or from the global stream when None (torch's way of
    giving each sampler its own generator)."""
    return int(stream(generator, "draw_seed").integers(2 ** 63))
