"""utils.data: datasets, samplers, collation and DataLoader (batch order, dtypes, workers).

Random streams differ from torch's for the same seed, so shuffled orders are checked for our
own determinism and semantics; deterministic orders and dtypes are compared with torch.
"""
import collections

import numpy as np
import pytest

import arraygrad as ag
from arraygrad.utils import data
from arraygrad.utils.data import (BatchSampler, ConcatDataset, DataLoader, IterableDataset,
                                  RandomSampler, SequentialSampler, Subset, TensorDataset,
                                  WeightedRandomSampler, default_collate, get_worker_info,
                                  random_split)


def _dataset(lib, n=10):
    return lib.utils.data.TensorDataset(lib.arange(float(n)).reshape(n, 1), lib.arange(n))


def _ids(loader):
    return [b[1].tolist() for b in loader]


@pytest.mark.parametrize("kw", [dict(), dict(batch_size=3), dict(batch_size=3, drop_last=True),
                                dict(batch_size=None), dict(batch_size=4, sampler=[9, 1, 5, 5, 0]),
                                dict(batch_sampler=[[3, 1], [0], [9, 8, 7]])])
def test_unshuffled_batches_match_torch(torch, kw):
    ours = DataLoader(_dataset(ag), **kw)
    theirs = torch.utils.data.DataLoader(_dataset(torch), **kw)
    assert len(ours) == len(theirs)
    got, want = list(ours), list(theirs)
    assert len(got) == len(want)
    for (x, y), (tx, ty) in zip(got, want):
        assert x.tolist() == tx.tolist() and y.tolist() == ty.tolist()
        assert str(x.dtype).split(".")[-1] == str(tx.dtype).split(".")[-1]
        assert str(y.dtype).split(".")[-1] == str(ty.dtype).split(".")[-1]


Point = collections.namedtuple("Point", "x y")


def _samples():
    return [
        [1.5, 2.5], [1, 2], [True, False], [np.float32(1), np.float32(2)],
        [np.int16(3), np.int16(4)],
        [np.ones((2, 2), np.float32), np.zeros((2, 2), np.float32)], ["a", "b"],
        [{"a": 1.0, "b": (1, 2.0)}, {"a": 2.0, "b": (3, 4.0)}],
        [Point(1, 2.0), Point(3, 4.0)], [[1, 2.0], [3, 4.0]],
    ]


def _flat(x):
    """Nested collate output as comparable (kind, dtype name, values) leaves."""
    if hasattr(x, "tolist") and hasattr(x, "dtype"):
        return ("tensor", str(x.dtype).split(".")[-1], x.tolist())
    if isinstance(x, dict):
        return {k: _flat(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, [_flat(v) for v in x])
    return x


def test_default_collate_dtypes_and_structure_match_torch(torch):
    from torch.utils.data import default_collate as tcollate
    for batch in _samples():
        assert _flat(default_collate(batch)) == _flat(tcollate(batch)), batch
    for bad in ([object(), object()], [np.array(["x"]), np.array(["y"])]):
        with pytest.raises(TypeError, match="default_collate: batch must contain"):
            default_collate(bad)
    with pytest.raises(RuntimeError, match="each element in list of batch should be of equal"):
        default_collate([[1, 2], [3]])


def test_default_convert_without_batching(torch):
    ours = list(DataLoader([np.float32(1), (np.arange(2), "s")], batch_size=None))
    theirs = list(torch.utils.data.DataLoader([np.float32(1), (np.arange(2), "s")],
                                              batch_size=None))
    assert _flat(ours) == _flat(theirs)


def test_shuffle_with_a_seeded_generator_is_deterministic():
    def epochs(seed, workers=0):
        loader = DataLoader(_dataset(ag, 20), batch_size=6, shuffle=True, num_workers=workers,
                            generator=ag.Generator().manual_seed(seed))
        return [_ids(loader) for _ in range(2)]
    a = epochs(0)
    assert a == epochs(0)
    assert a != epochs(1)
    assert a[0] != a[1]                                   # a new order each epoch
    for e in a:
        assert [len(b) for b in e] == [6, 6, 6, 2]
        assert sorted(sum(e, [])) == list(range(20))      # a permutation
    assert epochs(0, workers=2) == a                      # workers keep the order
    ag.manual_seed(5)
    b = _ids(DataLoader(_dataset(ag, 20), batch_size=6, shuffle=True))
    ag.manual_seed(5)
    assert _ids(DataLoader(_dataset(ag, 20), batch_size=6, shuffle=True)) == b


def test_random_sampler_with_replacement_and_num_samples():
    g = ag.Generator().manual_seed(3)
    s = list(RandomSampler(range(5), num_samples=12, generator=g))
    assert len(s) == 12 and sorted(s[:5]) == list(range(5)) and sorted(s[5:10]) == list(range(5))
    r = list(RandomSampler(range(5), replacement=True, num_samples=200, generator=g))
    assert len(r) == 200 and set(r) == set(range(5))
    with pytest.raises(ValueError, match="num_samples should be a positive integer"):
        RandomSampler(range(5), num_samples=0)


def test_weighted_random_sampler():
    g = ag.Generator().manual_seed(0)
    draws = list(WeightedRandomSampler([1.0, 0.0, 3.0], 4000, generator=g))
    counts = np.bincount(draws, minlength=3)
    assert counts[1] == 0 and abs(counts[2] / counts[0] - 3) < 0.4
    unique = list(WeightedRandomSampler(ag.tensor([1.0, 2.0, 3.0, 4.0]), 4, replacement=False,
                                        generator=g))
    assert sorted(unique) == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="num_samples should be a positive integer"):
        WeightedRandomSampler([1.0], 0)
    with pytest.raises(RuntimeError, match="without replacement"):
        WeightedRandomSampler([1.0, 0.0], 2, replacement=False)


def test_samplers_and_batch_sampler_match_torch(torch):
    T = torch.utils.data
    assert list(SequentialSampler(range(4))) == list(T.SequentialSampler(range(4)))
    for bs, drop in ((3, False), (3, True), (5, False)):
        ours, theirs = BatchSampler(range(10), bs, drop), T.BatchSampler(range(10), bs, drop)
        assert list(ours) == list(theirs) and len(ours) == len(theirs)
    for args in ((range(3), 0, False), (range(3), 2, None)):
        for lib in (data, T):
            with pytest.raises(ValueError, match="should be a"):
                lib.BatchSampler(*args)


def test_concat_subset_and_random_split(torch):
    T = torch.utils.data
    ours = ConcatDataset([list(range(3)), list(range(10, 15))]) + [99]
    theirs = T.ConcatDataset([list(range(3)), list(range(10, 15))]) + [99]
    assert len(ours) == len(theirs) == 9
    assert [ours[i] for i in range(-9, 9)] == [theirs[i] for i in range(-9, 9)]
    with pytest.raises(ValueError, match="absolute value of index"):
        ours[-10]
    assert Subset(list("abcde"), [4, 0])[1] == "a"
    parts = random_split(range(10), [0.5, 0.3, 0.2], generator=ag.Generator().manual_seed(1))
    tparts = T.random_split(range(10), [0.5, 0.3, 0.2])
    assert [len(p) for p in parts] == [len(p) for p in tparts] == [5, 3, 2]
    assert sorted(sum((list(p) for p in parts), [])) == list(range(10))
    again = random_split(range(10), [5, 3, 2], generator=ag.Generator().manual_seed(1))
    assert [list(p) for p in again] == [list(p) for p in parts]
    assert [len(p) for p in random_split(range(11), [0.5, 0.5])] == \
        [len(p) for p in T.random_split(range(11), [0.5, 0.5])]
    for lib in (data, T):
        with pytest.raises(ValueError, match="Sum of input lengths does not equal"):
            lib.random_split(range(10), [3, 3])
    with pytest.raises(ValueError, match="Size mismatch between tensors"):
        TensorDataset(ag.ones(3), ag.ones(4))


class _Range(IterableDataset):
    """Worker k yields k, k + n, k + 2n, ... (the usual split by get_worker_info)."""

    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = get_worker_info()
        start, step = (0, 1) if info is None else (info.id, info.num_workers)
        return iter(range(start, self.n, step))

    def __len__(self):
        return self.n


def test_iterable_dataset_batches_interleave_as_torch():
    assert [b.tolist() for b in DataLoader(_Range(11), batch_size=2)] == \
        [[0, 1], [2, 3], [4, 5], [6, 7], [8, 9], [10]]
    # torch's order for this program (deterministic: round-robin over workers)
    assert [b.tolist() for b in DataLoader(_Range(11), batch_size=2, num_workers=2)] == \
        [[0, 2], [1, 3], [4, 6], [5, 7], [8, 10], [9]]
    assert len(DataLoader(_Range(11), batch_size=2, drop_last=True)) == 5
    with pytest.raises(ValueError, match="expected unspecified shuffle option"):
        DataLoader(_Range(3), shuffle=True)


class _Seeds(data.Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        info = get_worker_info()
        if i == 3 and info is not None and getattr(self, "fail", False):
            raise KeyError("bad sample 3")
        return info.id, info.seed, float(ag.rand(1))


def test_workers_seed_and_reraise():
    loader = DataLoader(_Seeds(), batch_size=1, num_workers=2,
                        generator=ag.Generator().manual_seed(7))
    rows = [tuple(v.item() for v in b) for b in loader]
    assert [r[0] for r in rows] == [0, 1, 0, 1]           # round-robin over workers
    assert rows[0][1] + 1 == rows[1][1]                    # seeds base + worker id
    assert rows == [tuple(v.item() for v in b) for b in DataLoader(
        _Seeds(), batch_size=1, num_workers=2, generator=ag.Generator().manual_seed(7))]
    failing = _Seeds()
    failing.fail = True
    with pytest.raises(KeyError, match="Caught KeyError in DataLoader worker process 1"):
        list(DataLoader(failing, num_workers=2))
    with pytest.raises(ZeroDivisionError, match="in DataLoader worker process 0"):
        list(DataLoader(_Seeds(), num_workers=1, worker_init_fn=lambda wid: 1 / wid))
    assert get_worker_info() is None


def test_loader_option_errors_match_torch(torch):
    cases = [
        (dict(shuffle=True, sampler=[0]), "sampler option is mutually exclusive with shuffle"),
        (dict(batch_sampler=[[0]], batch_size=2), "batch_sampler option is mutually exclusive"),
        (dict(batch_size=None, drop_last=True), "batch_size=None option disables auto-batching"),
        (dict(num_workers=-1), "num_workers option should be non-negative"),
        (dict(timeout=-1), "timeout option should be non-negative"),
        (dict(prefetch_factor=2), "prefetch_factor option could only be specified"),
        (dict(persistent_workers=True), "persistent_workers option needs num_workers > 0"),
    ]
    for kw, msg in cases:
        for lib in (ag, torch):
            with pytest.raises(ValueError, match=msg):
                lib.utils.data.DataLoader(_dataset(lib), **kw)


class _Pid(data.Dataset):
    def __len__(self):
        return 6

    def __getitem__(self, i):
        import os
        return i, os.getpid()


def test_persistent_workers_serve_every_epoch():
    loader = DataLoader(_Pid(), batch_size=2, num_workers=2, persistent_workers=True,
                        shuffle=True, generator=ag.Generator().manual_seed(3))
    epochs = [[(b[0].tolist(), set(b[1].tolist())) for b in loader] for _ in range(3)]
    pids = [set().union(*(p for _, p in e)) for e in epochs]
    assert pids[0] == pids[1] == pids[2] and len(pids[0]) == 2     # the same two processes
    for e in epochs:
        assert sorted(sum((i for i, _ in e), [])) == list(range(6))
    first = next(iter(loader))                      # an unfinished epoch, then a full one
    assert len(first[0]) == 2
    assert sorted(sum((b[0].tolist() for b in loader), [])) == list(range(6))
    streams = DataLoader(_Range(7), batch_size=2, num_workers=2, persistent_workers=True)
    assert [[b.tolist() for b in streams] for _ in range(2)] == \
        [[[0, 2], [1, 3], [4, 6], [5]]] * 2       # iterable datasets restart each epoch


class _Dies(data.Dataset):
    def __init__(self, how):
        self.how = how

    def __len__(self):
        return 2

    def __getitem__(self, i):
        import os
        import time
        if self.how == "exit":
            os._exit(3)
        time.sleep(3)
        return i


def test_dead_or_stuck_workers_raise_instead_of_hanging():
    with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid\(s\) \d+.*exited unexpectedly"):
        list(DataLoader(_Dies("exit"), num_workers=1))
    with pytest.raises(RuntimeError, match="DataLoader timed out after 1 seconds"):
        list(DataLoader(_Dies("sleep"), num_workers=1, timeout=1))
