"""DataLoader (torch.utils.data.dataloader): batches from a dataset, in this process or in
worker processes.

    loader = DataLoader(TensorDataset(x, y), batch_size=32, shuffle=True,
                        generator=torch.Generator().manual_seed(0))
    for xb, yb in loader: ...

# NOTE [worker processes]
With `num_workers > 0` each epoch starts that many processes (the platform's
default start method; with `persistent_workers=True` the first epoch's
processes serve every epoch). Map-style datasets: the main process sends each worker
batches of indices round-robin (at most `prefetch_factor` per worker in
flight) and yields the collated results in sampler order. Iterable datasets:
every worker iterates its own copy and the batches interleave round-robin, as
torch; `get_worker_info()` lets the dataset split the stream. Worker k seeds
Python's `random`, NumPy's and arraygrad's global streams with base_seed + k,
base_seed being drawn from the loader's generator. An exception in a worker
is re-raised here with the worker's traceback; a worker that dies raises.
"""
import itertools
import multiprocessing
import queue
import random
import traceback
import warnings

import numpy as np

from ..._generator import default_generator, draw_seed
from .collate import default_collate, default_convert
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler


class WorkerInfo:
    """What `get_worker_info()` returns inside a worker: id, num_workers, seed, dataset."""

    def __init__(self, id, num_workers, seed, dataset):
        self.id, self.num_workers, self.seed, self.dataset = id, num_workers, seed, dataset

    def __repr__(self):
        return (f"WorkerInfo(id={self.id}, num_workers={self.num_workers}, seed={self.seed}, "
                f"dataset={self.dataset!r})")


_worker_info = None


def get_worker_info():
    """The current worker's WorkerInfo, or None in the main process."""
    return _worker_info


class DataLoader:
    """Iterate over `dataset` in batches (see the module docstring for workers)."""

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor=None, persistent_workers=False, pin_memory_device="",
                 in_order=True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                             "disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing."
                             "let num_workers > 0 to enable multiprocessing, otherwise set "
                             "prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        if prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            if shuffle not in (None, False):
                raise ValueError("DataLoader with IterableDataset: expected unspecified shuffle "
                                 f"option, but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified sampler "
                                 f"option, but got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified "
                                 f"batch_sampler option, but got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")
        if sampler is None and not self._iterable:
            sampler = RandomSampler(dataset, generator=generator) if shuffle \
                else SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None and not self._iterable:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        if pin_memory:
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, "
                          "then device pinned memory won't be used.", UserWarning, stacklevel=2)
        self.dataset, self.batch_size, self.drop_last = dataset, batch_size, drop_last
        self.sampler, self.batch_sampler, self.generator = sampler, batch_sampler, generator
        self.num_workers, self.prefetch_factor, self.timeout = num_workers, prefetch_factor, timeout
        self.worker_init_fn, self.pin_memory = worker_init_fn, pin_memory
        self.persistent_workers, self.in_order = persistent_workers, in_order
        self.multiprocessing_context = multiprocessing_context
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self._workers_iter = None          # kept between epochs with persistent_workers

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None or (self._iterable and self.batch_size is not None)

    def __len__(self):
        if self._iterable:
            n = len(self.dataset)
            if self.batch_size is not None:
                n = n // self.batch_size if self.drop_last else -(-n // self.batch_size)
            return n
        return len(self.batch_sampler if self.batch_sampler is not None else self.sampler)

    def __iter__(self):
        # drawn first in every epoch, as torch, so that the sampler's stream (and so the
        # order) is the same with and without workers
        if self._workers_iter is not None and not self._workers_iter._shutdown:
            self._workers_iter.reset(self)     # same workers, same seeds (torch draws none)
            return self._workers_iter
        base_seed = draw_seed(self.generator)
        if self.num_workers == 0:
            return _batches(self.dataset, self._tasks_of_main(), self._auto_collation,
                            self.collate_fn, self.batch_size, self.drop_last)
        it = _MultiProcessIter(self, base_seed)
        if self.persistent_workers:
            self._workers_iter = it
        return it

    def _tasks_of_main(self):
        if self._iterable:
            return None
        return iter(self.batch_sampler if self.batch_sampler is not None else self.sampler)


def _batches(dataset, tasks, auto_collation, collate_fn, batch_size, drop_last):
    """Batches in this process: `tasks` are index lists (or single indices) of a map-style
    dataset, or None to stream an iterable one."""
    if tasks is None:
        it = iter(dataset)
        while True:
            batch = _next_iterable_batch(it, auto_collation, collate_fn, batch_size, drop_last)
            if batch is _END:
                return
            yield batch
    for task in tasks:
        yield _fetch_map(dataset, task, auto_collation, collate_fn)


_END = object()


def _fetch_map(dataset, task, auto_collation, collate_fn):
    if not auto_collation:
        return collate_fn(dataset[task])
    getitems = getattr(dataset, "__getitems__", None)
    samples = getitems(task) if getitems is not None else [dataset[i] for i in task]
    return collate_fn(samples)


def _next_iterable_batch(it, auto_collation, collate_fn, batch_size, drop_last):
    if not auto_collation:
        for sample in it:
            return collate_fn(sample)
        return _END
    samples = list(itertools.islice(it, batch_size))
    if not samples or (drop_last and len(samples) < batch_size):
        return _END
    return collate_fn(samples)


# --------------------------------------------------------------------- workers
class _WorkerDone:
    """A worker's answer when its copy of an iterable dataset is exhausted."""


class _WorkerError:
    def __init__(self, worker_id, exc):
        self.exc_type = type(exc)
        self.message = (f"Caught {type(exc).__name__} in DataLoader worker process {worker_id}."
                        "\nOriginal " + "".join(traceback.format_exception(exc)))

    def reraise(self):
        try:
            err = self.exc_type(self.message)
        except Exception:
            err = RuntimeError(self.message)
        raise err


def _worker_loop(dataset, iterable, auto_collation, collate_fn, batch_size, drop_last,
                 index_queue, result_queue, worker_id, num_workers, seed, init_fn):
    global _worker_info
    random.seed(seed)
    np.random.seed(seed % 2 ** 32)
    default_generator.manual_seed(seed)
    _worker_info = WorkerInfo(worker_id, num_workers, seed, dataset)
    init_error = None
    try:
        if init_fn is not None:
            init_fn(worker_id)
        it = iter(dataset) if iterable else None
    except Exception as e:               # reported with the first task
        init_error = _WorkerError(worker_id, e)
    while True:
        task = index_queue.get()
        if task is None:
            return
        epoch, idx, indices = task
        if idx is None:                  # a new epoch with persistent workers
            if iterable and init_error is None:
                it = iter(dataset)
            continue
        if init_error is not None:
            result_queue.put((epoch, idx, init_error))
            continue
        try:
            if iterable:
                batch = _next_iterable_batch(it, auto_collation, collate_fn, batch_size,
                                             drop_last)
                batch = _WorkerDone() if batch is _END else batch
            else:
                batch = _fetch_map(dataset, indices, auto_collation, collate_fn)
        except Exception as e:
            batch = _WorkerError(worker_id, e)
        result_queue.put((epoch, idx, batch))


class _MultiProcessIter:
    """Epochs over worker processes (NOTE [worker processes]): one epoch, or every epoch of a
    loader with persistent_workers (see `reset`)."""

    def __init__(self, loader, base_seed):
        ctx = loader.multiprocessing_context
        if isinstance(ctx, str):
            ctx = multiprocessing.get_context(ctx)
        ctx = ctx or multiprocessing
        self._timeout = loader.timeout
        self._iterable = loader._iterable
        self._persistent = loader.persistent_workers
        n = loader.num_workers
        self._result_queue = ctx.Queue()
        self._index_queues, self._workers = [], []
        for wid in range(n):
            q = ctx.Queue()
            w = ctx.Process(target=_worker_loop, daemon=True, args=(
                loader.dataset, self._iterable, loader._auto_collation, loader.collate_fn,
                loader.batch_size, loader.drop_last, q, self._result_queue, wid, n,
                base_seed + wid, loader.worker_init_fn))
            w.start()
            self._index_queues.append(q)
            self._workers.append(w)
        self._shutdown = False
        self._epoch = -1
        self._start_epoch(loader)

    def _start_epoch(self, loader):
        self._epoch += 1
        self._tasks = loader._tasks_of_main()
        self._active = list(range(len(self._workers)))   # workers that may still produce
        self._next_worker = 0
        self._send_idx = self._rcvd_idx = 0
        self._pending = {}                 # idx -> worker, for tasks in flight
        self._results = {}
        for _ in range(loader.prefetch_factor * len(self._workers)):
            self._dispatch()

    def reset(self, loader):
        """A new epoch on the same workers; results of an unfinished epoch are dropped (their
        epoch number no longer matches) and iterable datasets restart their iterators."""
        for q in self._index_queues:
            q.put((self._epoch + 1, None, None))
        self._start_epoch(loader)

    def __iter__(self):
        return self

    def _dispatch(self):
        if not self._active:
            return
        if self._iterable:
            task = None
        else:
            task = next(self._tasks, _END)
            if task is _END:
                return
        wid = self._active[self._next_worker % len(self._active)]
        self._next_worker += 1
        self._index_queues[wid].put((self._epoch, self._send_idx, task))
        self._pending[self._send_idx] = wid
        self._send_idx += 1

    def __next__(self):
        while True:
            if self._rcvd_idx >= self._send_idx:
                self._stop()
            if self._rcvd_idx not in self._results:
                epoch, idx, data = self._get()
                if epoch == self._epoch:
                    self._results[idx] = data
                continue
            data = self._results.pop(self._rcvd_idx)
            wid = self._pending.pop(self._rcvd_idx)
            self._rcvd_idx += 1
            if isinstance(data, _WorkerDone):
                if wid in self._active:
                    self._active.remove(wid)
                self._dispatch()
                continue
            self._dispatch()
            if isinstance(data, _WorkerError):
                self._shutdown_workers()
                data.reraise()
            return data

    def _get(self):
        waited = 0.0
        while True:
            try:
                return self._result_queue.get(timeout=1.0)
            except queue.Empty:
                waited += 1.0
                dead = [w.pid for w in self._workers if not w.is_alive()]
                if dead:
                    self._shutdown_workers(force=True)
                    raise RuntimeError(f"DataLoader worker (pid(s) "
                                       f"{', '.join(map(str, dead))}) exited unexpectedly")
                if self._timeout and waited >= self._timeout:
                    self._shutdown_workers(force=True)
                    raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")

    def _stop(self):
        if not self._persistent:
            self._shutdown_workers()
        raise StopIteration

    def _shutdown_workers(self, force=False):
        """Stop the workers: ask them to exit (or, when `force`, because one is stuck or
        dead, terminate them at once)."""
        if self._shutdown:
            return
        self._shutdown = True
        for q in self._index_queues:
            q.put(None)
        for w in self._workers:
            if force:
                w.terminate()
            w.join(timeout=5)
            if w.is_alive():
                w.terminate()
        for q in self._index_queues + [self._result_queue]:
            q.cancel_join_thread()
            q.close()

    def __del__(self):
        try:
            self._shutdown_workers()
        except Exception:
            pass
