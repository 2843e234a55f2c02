"""Scatter-add (and scatter-reduce) into a chunked Dask array, task by task.

# NOTE [Dask scatter]
Dask has no scatter-add. `scatter(target, index, values, reduce)` reads the index the way NumPy
does (ints, slices, None, Ellipsis, integer and boolean arrays; the index arrays computed first:
which chunks they reach decides the graph) and writes one task per chunk of the target that an
index reaches; the other chunks are the target's own. Each chunk of `values` (broadcast to the
shape of target[index]) carries the coordinates it lands on as an open mesh (a range per sliced
dim, the index arrays' part for the advanced dims): small, computed from the index, never the
size of the values. A values chunk that lands in several target chunks is first cut into its
pieces (one sort by target chunk), so each entry is read once. A target chunk's task takes the
pieces that land in it and applies NumPy's `ufunc.at` (repeated indices accumulate); where more
than `_FAN` pieces land in one target chunk, a sum runs as a tree of partial sums, other
reductions as a chain, so no task holds more than `_FAN` pieces. The graph is built
directly (no dask.delayed, whose calls materialise and optimise the whole input graph each
time), so its size grows with the chunks, not with the history of the arrays. (Delayed calls
also merged graphs optimised apart, whose fused keys Dask shortens to 115 characters and a
16-bit hash that changes per process, dask/dask#9964: two different tasks could meet under
one key, so a deep gradient was sometimes wrong.)
"""
import itertools
import math
import operator

import numpy as np
import dask.array as da
from dask.base import tokenize
from dask.highlevelgraph import HighLevelGraph

_UFUNCS = {"sum": np.add, "prod": np.multiply, "amax": np.maximum, "amin": np.minimum}
_FAN = 8


def scatter(target, index, values, reduce="sum"):
    """target with target[index] = reduce(target[index], values), repeated indices included
    (NumPy's `ufunc.at`), as a Dask array with the target's chunks."""
    shape, where = _plan(target.shape, index)
    values = da.asarray(values)
    try:
        if np.broadcast_shapes(values.shape, shape) != shape:
            raise ValueError
    except ValueError:
        raise ValueError(f"shape mismatch: value array of shape {values.shape} could not be "
                         f"broadcast to indexing result of shape {shape}") from None
    if math.prod(shape) == 0:
        return target
    values = da.broadcast_to(values, shape)
    if any(math.isnan(c) for cs in values.chunks for c in cs):
        values = values.compute_chunk_sizes()
    token = tokenize(target, values, reduce, index)
    name, part = f"scatter-{reduce}-{token}", f"scatter-part-{token}"
    coords_name, split = f"scatter-coords-{token}", f"scatter-split-{token}"
    ends = [np.cumsum(c) for c in target.chunks]
    starts = tuple(e - np.asarray(c) for e, c in zip(ends, target.chunks))
    pieces = {}                         # target block -> the pieces of values landing there
    dsk = {}
    offsets = [np.concatenate([[0], np.cumsum(c)]).astype(int) for c in values.chunks]
    for vblock in itertools.product(*[range(len(c)) for c in values.chunks]):
        box = tuple(slice(int(o[i]), int(o[i + 1])) for o, i in zip(offsets, vblock))
        if any(b.start == b.stop for b in box):
            continue
        coords = tuple(w(box) for w in where)
        vkey, ckey = (values.name,) + vblock, (coords_name,) + vblock
        dsk[ckey] = (tuple, list(coords))
        hit = list(_blocks_hit(coords, where, ends))
        if len(hit) == 1:               # the whole chunk lands in one target chunk
            lo = tuple(int(s[i]) for s, i in zip(starts, hit[0]))
            pieces.setdefault(hit[0], []).append((_local, vkey, ckey, lo))
            continue
        skey = (split,) + vblock
        dsk[skey] = (_split, vkey, ckey, ends, starts)
        for tblock in hit:
            dsk[skey + tblock] = (operator.getitem, skey, tblock)
            pieces.setdefault(tblock, []).append(skey + tblock)
    ufunc = _UFUNCS[reduce]
    for tblock in itertools.product(*[range(len(c)) for c in target.chunks]):
        base = (target.name,) + tblock
        mine = pieces.get(tblock)
        if not mine:
            dsk[(name,) + tblock] = base
            continue
        size = tuple(c[i] for c, i in zip(target.chunks, tblock))
        groups = [tuple(mine[k:k + _FAN]) for k in range(0, len(mine), _FAN)]
        if len(groups) == 1 or reduce != "sum":     # a chain: each task applies one group
            key = base
            for g, group in enumerate(groups):
                key, prev = ((name,) + tblock if g == len(groups) - 1 else
                             (part,) + tblock + (g,)), key
                dsk[key] = (_apply, ufunc, prev, None, None) + group
            continue
        level = []                      # a sum: partial sums from zeros, then a tree
        for g, group in enumerate(groups):
            key = (part,) + tblock + (0, g)
            dsk[key] = (_apply, ufunc, None, size, target.dtype) + group
            level.append(key)
        depth = 1
        while len(level) > _FAN:
            level, keys = [], level
            for g in range(0, len(keys), _FAN):
                key = (part,) + tblock + (depth, g)
                dsk[key] = (_sum,) + tuple(keys[g:g + _FAN])
                level.append(key)
            depth += 1
        dsk[(name,) + tblock] = (_sum, base) + tuple(level)
    graph = HighLevelGraph.from_collections(name, dsk, dependencies=[target, values])
    return da.Array(graph, name, target.chunks, dtype=target.dtype, meta=target._meta)


def _apply(ufunc, base, size, dtype, *pieces):
    """`base` (or zeros of `size`) with `ufunc.at` applied for each piece: (coordinates in this
    block, values)."""
    out = np.zeros(size, dtype) if base is None else np.array(base, copy=True)
    for local, v in pieces:
        if out.ndim:
            ufunc.at(out, local, v)
        else:                   # every entry lands on the one element
            ufunc.at(out.reshape(1), np.zeros(v.shape, dtype=np.intp), v)
    return out


def _local(v, coords, lo):
    """The piece of a values chunk that lands whole in the target chunk starting at `lo`."""
    return tuple(np.broadcast_to(c - a, v.shape) for c, a in zip(coords, lo)), v


def _split(v, coords, ends, starts):
    """A values chunk cut into its pieces by the target chunk each entry lands in: {target
    block: (coordinates in that block, values)}, one stable sort of the entries by block (a
    radix sort: few blocks)."""
    counts, shape = [len(e) for e in ends], v.shape
    ids = [np.broadcast_to(np.searchsorted(e, c, side="right"), shape)
           for e, c in zip(ends, coords)]
    linear = np.ravel_multi_index(ids, counts).ravel()
    if math.prod(counts) <= 1 << 16:
        linear = linear.astype(np.uint16)
    order = np.argsort(linear, kind="stable")
    bounds = np.cumsum(np.bincount(linear, minlength=math.prod(counts)))
    v = v.ravel()[order]
    full = [np.broadcast_to(c, shape).ravel()[order] for c in coords]
    out, a = {}, 0
    for block in np.flatnonzero(np.diff(bounds, prepend=0)):
        b = bounds[block]
        tblock = tuple(int(i) for i in np.unravel_index(block, counts))
        out[tblock] = (tuple(c[a:b] - s[i] for c, s, i in zip(full, starts, tblock)), v[a:b])
        a = b
    return out


def _sum(*parts):
    out = parts[0].copy()
    for p in parts[1:]:
        out += p
    return out


def _blocks_hit(coords, where, ends):
    """The target blocks that the entries of one values chunk reach: per sliced or int dim the
    chunks its coordinates fall in, jointly for the dims of the index arrays (they broadcast
    together), and every combination of those."""
    ids = [np.searchsorted(e, c, side="right") for e, c in zip(ends, coords)]
    groups, dims = [], []
    adv = [d for d, w in enumerate(where) if w.advanced]
    for d, w in enumerate(where):
        if not w.advanced:
            groups.append([(int(i),) for i in np.unique(ids[d])])
            dims.append((d,))
    if adv:
        counts = [len(ends[d]) for d in adv]
        linear = np.ravel_multi_index(np.broadcast_arrays(*[ids[d] for d in adv]), counts)
        groups.append([tuple(int(i) for i in t) for t in
                       zip(*np.unravel_index(np.unique(linear), counts))])
        dims.append(tuple(adv))
    order = [d for ds in dims for d in ds]
    for combo in itertools.product(*groups):
        flat = [i for part in combo for i in part]
        block = [0] * len(where)
        for d, i in zip(order, flat):
            block[d] = i
        yield tuple(block)


class _Sliced:
    """Target dim reached through a slice (or an int): coordinate start + step * position along
    result axis `axis` (no axis for an int)."""
    advanced = False

    def __init__(self, ndim, axis, start, step):
        self.ndim, self.axis, self.start, self.step = ndim, axis, start, step

    def __call__(self, box):
        if self.axis is None:
            return np.asarray(self.start, dtype=np.intp)
        b = box[self.axis]
        c = self.start + self.step * np.arange(b.start, b.stop, dtype=np.intp)
        return c.reshape([-1 if j == self.axis else 1 for j in range(self.ndim)])


class _Advanced:
    """Target dim reached through an index array, broadcast over the result axes
    first..first + array.ndim (the broadcast shape of all index arrays)."""
    advanced = True

    def __init__(self, ndim, first, array, nb):
        self.ndim, self.first = ndim, first
        self.array = array.reshape((1,) * (nb - array.ndim) + array.shape)

    def __call__(self, box):
        a = self.array
        part = a[tuple(b if n > 1 else slice(None) for b, n in
                       zip(box[self.first:self.first + a.ndim], a.shape))]
        return part.reshape((1,) * self.first + part.shape +
                            (1,) * (self.ndim - self.first - a.ndim))


def _plan(shape, index):
    """NumPy's meaning of `index` into an array of `shape`: the shape of target[index] and, per
    target dim, how its coordinate follows from a position in that result (`_Sliced` or
    `_Advanced`)."""
    if not isinstance(index, tuple):
        index = (index,)
    index = tuple(np.asarray(i) if isinstance(i, (list, np.ndarray, np.bool_)) else i
                  for i in index)
    has_arrays = any(isinstance(i, (np.ndarray, bool)) for i in index)
    consumed = sum(_consumes(i) for i in index)
    if consumed > len(shape):
        raise IndexError(f"too many indices for array: array is {len(shape)}-dimensional, but "
                         f"{consumed} were indexed")
    items, dim, adv_items, adv = [], 0, [], []     # items: (kind, dim, value)
    for pos, i in enumerate(index):
        if i is Ellipsis:
            for _ in range(len(shape) - consumed):
                items.append(("slice", dim, slice(None)))
                dim += 1
        elif i is None:
            items.append(("new", None, None))
        elif isinstance(i, slice):
            items.append(("slice", dim, i))
            dim += 1
        elif not has_arrays:
            items.append(("int", dim, _in_bounds(operator.index(i), dim, shape)))
            dim += 1
        else:
            adv_items.append(len(items))
            items.append(("adv", None, None))
            if not isinstance(i, (bool, np.ndarray)):     # an int among index arrays
                i = np.asarray(operator.index(i))
            if isinstance(i, bool) or i.dtype == bool and i.ndim == 0:
                adv.append((None, np.zeros(int(i), dtype=np.intp)))
            elif i.dtype == bool:
                if i.shape != tuple(shape[dim:dim + i.ndim]):
                    raise IndexError(f"boolean index did not match indexed array along axis "
                                     f"{dim}; size of axis is {shape[dim]} but size of "
                                     f"corresponding boolean axis is {i.shape[0]}")
                for k, a in enumerate(np.nonzero(i)):
                    adv.append((dim + k, a))
                dim += i.ndim
            elif i.dtype.kind in "iu":
                adv.append((dim, _in_bounds(i.astype(np.intp), dim, shape)))
                dim += 1
            else:
                raise IndexError("arrays used as indices must be of integer (or boolean) type")
    items += [("slice", d, slice(None)) for d in range(dim, len(shape))]
    try:
        b_shape = np.broadcast_shapes(*[a.shape for _, a in adv])
    except ValueError:
        raise IndexError("shape mismatch: indexing arrays could not be broadcast together with "
                         f"shapes {' '.join(str(a.shape) for _, a in adv)}") from None
    adjacent = not adv_items or adv_items[-1] - adv_items[0] + 1 == len(adv_items)
    out, first, where = [], 0, [None] * len(shape)
    for pos, (kind, d, v) in enumerate(items):
        if kind == "adv":
            if pos == adv_items[0]:
                first = len(out) if adjacent else 0
            continue
        if kind == "slice":
            start, stop, step = v.indices(shape[d])
            where[d] = (len(out), start, step)
            out.append(len(range(start, stop, step)))
        elif kind == "new":
            out.append(1)
        else:
            where[d] = (None, v, 0)
    out[first:first] = b_shape
    ndim, nb = len(out), len(b_shape)
    for d, w in enumerate(where):
        if w is not None:
            axis = w[0] if w[0] is None or w[0] < first else w[0] + nb
            where[d] = _Sliced(ndim, axis, w[1], w[2])
    for d, a in adv:
        if d is not None:
            where[d] = _Advanced(ndim, first, a, nb)
    return tuple(out), where


def _consumes(i):
    if i is None or i is Ellipsis or isinstance(i, bool):
        return 0
    if isinstance(i, np.ndarray) and i.dtype == bool:
        return i.ndim
    return 1


def _in_bounds(i, dim, shape):
    n = shape[dim]
    bad = (i < -n) | (i >= n)
    if np.any(bad):
        raise IndexError(f"index {np.asarray(i)[bad].flat[0]} is out of bounds for axis {dim} "
                         f"with size {n}")
    return np.where(i < 0, i + n, i) if np.ndim(i) else (i + n if i < 0 else i)
