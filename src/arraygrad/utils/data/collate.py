"""default_collate / default_convert (torch.utils.data._utils.collate): samples into batches.

Tensors stack along a new first dim; NumPy arrays and scalars become tensors of
their dtype; Python floats become float64 and ints int64 (torch's dtypes);
strings stay lists; dicts, namedtuples and sequences are collated per field.
"""
import collections.abc

import numpy as np

from ... import _tensor as _t
from ... import dtypes as _dt
from ...ops import creation, shape

_ERR = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
        "found {}")


def _is_numpy_strings(a):
    return a.dtype.kind in "SaUO"


def default_collate(batch):
    """Collate a list of samples into one batch (the DataLoader's default `collate_fn`)."""
    elem = batch[0]
    if isinstance(elem, _t.Tensor):
        return shape.stack(list(batch), 0)
    if isinstance(elem, np.ndarray):
        if _is_numpy_strings(elem):
            raise TypeError(_ERR.format(elem.dtype))
        return default_collate([creation.as_tensor(b) for b in batch])
    if isinstance(elem, np.generic) and not isinstance(elem, (np.str_, np.bytes_)):
        return creation.as_tensor(np.asarray(batch))
    if isinstance(elem, float):
        return creation.tensor(batch, dtype=_dt.float64)
    if isinstance(elem, int):
        return creation.tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        out = {key: default_collate([d[key] for d in batch]) for key in elem}
        try:
            return type(elem)(out)
        except TypeError:
            return out
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return type(elem)(*(default_collate(list(s)) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        if any(len(e) != len(elem) for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        columns = [default_collate(list(s)) for s in zip(*batch)]
        if isinstance(elem, tuple):
            return columns                     # a list, as torch (backwards compatibility)
        try:
            return type(elem)(columns)
        except TypeError:
            return columns
    raise TypeError(_ERR.format(type(elem)))


def default_convert(data):
    """Turn NumPy arrays and scalars inside `data` into tensors (no batching: the
    `collate_fn` of a DataLoader with batch_size=None)."""
    if isinstance(data, _t.Tensor):
        return data
    if isinstance(data, np.ndarray):
        return data if _is_numpy_strings(data) else creation.as_tensor(data)
    if isinstance(data, np.generic) and not isinstance(data, (np.str_, np.bytes_)):
        return creation.as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        out = {k: default_convert(v) for k, v in data.items()}
        try:
            return type(data)(out)
        except TypeError:
            return out
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            return type(data)([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data
