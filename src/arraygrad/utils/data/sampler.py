"""Samplers (torch.utils.data.sampler): which indices a DataLoader visits, in which order."""
import numbers

import numpy as np

from ... import _tensor as _t
from ..._generator import Generator, draw_seed


class Sampler:
    """Base class: subclasses give `__iter__` over indices (and usually `__len__`)."""

    def __init__(self, data_source=None):
        pass

    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__} must implement __iter__")


def _own_generator(generator):
    """The sampler's stream: the given generator, or a fresh one seeded from the global
    stream (so `manual_seed` makes unseeded shuffles reproducible, as in torch)."""
    return generator if generator is not None else Generator().manual_seed(draw_seed())


class SequentialSampler(Sampler):
    """0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler):
    """A random permutation (or `num_samples` draws with replacement), from `generator`."""

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source, self.replacement = data_source, replacement
        self._num_samples, self.generator = num_samples, generator
        if not isinstance(replacement, bool):
            raise TypeError("replacement should be a boolean value, but got "
                            f"replacement={replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError("num_samples should be a positive integer value, but got "
                             f"num_samples={self.num_samples}")

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n, g = len(self.data_source), _own_generator(self.generator)
        if self.replacement:
            yield from g._rng.integers(0, n, self.num_samples).tolist()
            return
        for _ in range(self.num_samples // n):
            yield from g._permutation(n).tolist()
        yield from g._permutation(n)[:self.num_samples % n].tolist()

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices in a random order."""

    def __init__(self, indices, generator=None):
        self.indices, self.generator = indices, generator

    def __iter__(self):
        g = _own_generator(self.generator)
        for i in g._permutation(len(self.indices)).tolist():
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """`num_samples` indices drawn with probabilities proportional to `weights`."""

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        if (not isinstance(num_samples, numbers.Integral) or isinstance(num_samples, bool)
                or num_samples <= 0):
            raise ValueError("num_samples should be a positive integer value, but got "
                             f"num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError("replacement should be a boolean value, but got "
                             f"replacement={replacement}")
        w = np.asarray(weights.numpy() if isinstance(weights, _t.Tensor) else weights,
                       dtype=np.float64)
        if w.ndim != 1:
            raise ValueError("weights should be a 1d sequence but given weights have shape "
                             f"{tuple(w.shape)}")
        if not np.all(np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
            raise RuntimeError("WeightedRandomSampler: weights must be finite, non-negative "
                               "and not all zero")
        if not replacement and num_samples > np.count_nonzero(w):
            raise RuntimeError("WeightedRandomSampler: cannot sample n_sample > prob_dist.size(-1)"
                               " samples without replacement")
        self.weights = _t.make(w)
        self.num_samples, self.replacement, self.generator = num_samples, replacement, generator

    def __iter__(self):
        w = self.weights.numpy()
        g = _own_generator(self.generator)
        yield from g._rng.choice(len(w), self.num_samples, replace=self.replacement,
                                 p=w / w.sum()).tolist()

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler):
    """Lists of `batch_size` indices from `sampler` (the last one shorter unless drop_last)."""

    def __init__(self, sampler, batch_size, drop_last):
        if (not isinstance(batch_size, numbers.Integral) or isinstance(batch_size, bool)
                or batch_size <= 0):
            raise ValueError("batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler, self.batch_size, self.drop_last = sampler, batch_size, drop_last

    def __iter__(self):
        batch = []
        for idx in self.sampler:
            batch.append(idx)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
