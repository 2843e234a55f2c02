"""save / load: checkpoints in a format that holds data only, so loading never runs code.

    torch.save({"model": model.state_dict(), "opt": opt.state_dict()}, "ckpt.pt")
    state = torch.load("ckpt.pt")               # weights_only=True is the only mode

# NOTE [checkpoint format]
A file is: the magic line b"ARRAYGRAD-CHECKPOINT\\n", a format version (4 bytes),
the length of a JSON header (8 bytes, little-endian), the UTF-8 JSON header,
then the raw little-endian bytes of every tensor one after another. The
header describes the saved object as a tree of tagged nodes (dicts keep their
key types and order, tuples stay tuples, a tensor saved twice is stored once
and loads as one object) and, per tensor, its dtype, shape, offset and flags.
Loading parses JSON and copies bytes: there is no pickle anywhere, so a file
can carry no code. Anything that does not check out (magic, version, JSON,
tags, dtypes, sizes, offsets) raises `RuntimeError` naming the problem.
"""
import json
import os
import struct
from collections import OrderedDict

import numpy as np

from . import _tensor as _t
from . import dtypes as _dt
from .nn.parameter import Parameter

_MAGIC = b"ARRAYGRAD-CHECKPOINT\n"
_VERSION = 1
_HEADER = struct.Struct("<IQ")          # version, JSON length
_NUMPY_KINDS = "biufc"                  # plain numeric arrays; never object or structured


# --------------------------------------------------------------------- save
def save(obj, f, pickle_module=None, pickle_protocol=None, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False):
    """Write `obj` (tensors, NumPy arrays, numbers, strings, None, dtypes and dicts, lists,
    tuples of them) to the path or binary file `f`."""
    writer = _Writer()
    header = json.dumps({"root": writer.encode(obj), "tensors": writer.records}).encode()
    payload = b"".join([_MAGIC, _HEADER.pack(_VERSION, len(header)), header] + writer.buffers)
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as fh:
            fh.write(payload)
    elif hasattr(f, "write"):
        f.write(payload)
    else:
        raise TypeError(f"save: expected a file path or a writable binary file, got "
                        f"{type(f).__name__}")


class _Writer:
    def __init__(self):
        self.records, self.buffers, self._ids, self._offset = [], [], {}, 0
        self._keep = []             # keeps encoded arrays alive so their ids stay unique
        self._open = set()          # containers being encoded: a repeat is a cycle

    def encode(self, obj):
        if obj is None or isinstance(obj, (bool, str)):
            return obj
        if isinstance(obj, int):
            return {"int": str(obj)}            # exact at any size
        if isinstance(obj, float):
            return {"float": obj.hex()}         # exact, nan and inf included
        if isinstance(obj, _dt.dtype):
            return {"dtype": obj.name}
        if isinstance(obj, _t.Size):
            return {"size": [int(s) for s in obj]}
        if isinstance(obj, _t.Tensor):
            return {"tensor": self._array(obj, "tensor")}
        if isinstance(obj, np.ndarray):
            return {"ndarray": self._array(obj, "ndarray")}
        if isinstance(obj, np.generic) and obj.dtype.kind in _NUMPY_KINDS:
            return {"npscalar": self._array(np.asarray(obj), "ndarray")}
        if isinstance(obj, (dict, list)) or type(obj) is tuple:
            if id(obj) in self._open:
                raise ValueError("save: the object contains itself (a reference cycle), which "
                                 "arraygrad's format cannot represent")
            self._open.add(id(obj))
            try:
                if isinstance(obj, dict):
                    kind = "odict" if isinstance(obj, OrderedDict) else "dict"
                    return {kind: [[self.encode(k), self.encode(v)] for k, v in obj.items()]}
                return {"list" if isinstance(obj, list) else "tuple":
                        [self.encode(v) for v in obj]}
            finally:
                self._open.discard(id(obj))
        raise TypeError(f"save: cannot save an object of type {type(obj).__name__}; arraygrad "
                        "saves tensors, NumPy arrays, numbers, strings, None, dtypes and "
                        "dicts/lists/tuples of them (the format stores no code)")

    def _array(self, obj, kind):
        key = id(obj)
        if key in self._ids:
            return self._ids[key]
        if kind == "tensor":
            if obj._lvl is not None:
                raise RuntimeError("save: cannot save a tensor inside a torch.func transform")
            arr = np.asarray(obj.detach().cpu().numpy())
            rec = {"dtype": obj.dtype.name, "requires_grad": bool(obj.requires_grad),
                   "parameter": isinstance(obj, Parameter)}
        else:
            arr = obj
            if arr.dtype.kind not in _NUMPY_KINDS or arr.dtype.fields is not None:
                raise TypeError(f"save: cannot save a NumPy array of dtype {arr.dtype} (only "
                                "numeric arrays: object arrays would need pickle)")
            rec = {"npdtype": arr.dtype.newbyteorder("<").str}
        data = np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder("<")).tobytes()
        rec.update(shape=list(arr.shape), offset=self._offset, nbytes=len(data))
        self._offset += len(data)
        self.buffers.append(data)
        self.records.append(rec)
        self._ids[key] = len(self.records) - 1
        self._keep.append(obj)
        return self._ids[key]


# --------------------------------------------------------------------- load
def load(f, map_location=None, pickle_module=None, *, weights_only=True, mmap=None,
         **pickle_load_args):
    """Read what `save` wrote. Only data is read: `weights_only=False` (unpickling arbitrary
    objects, which can run code) is not supported. `map_location` may be None, "cpu", a
    cpu device, a dict of locations to "cpu", or a function applied to each tensor."""
    if weights_only is False:
        raise ValueError("load: weights_only=False is not supported: arraygrad files hold data "
                         "only and are never unpickled (which could run code)")
    _check_location(map_location)
    raw = _read_all(f)
    if not raw:
        raise RuntimeError("load: the file is empty")
    if _MAGIC.startswith(raw):
        raise RuntimeError("load: the checkpoint is truncated (incomplete magic bytes)")
    if not raw.startswith(_MAGIC):
        if raw[:1] == b"\x80" or raw[:4] == b"PK\x03\x04":
            raise RuntimeError("load: this is a pickle or PyTorch zip file, not an arraygrad "
                               "checkpoint; arraygrad never unpickles files (unpickling can run "
                               "code). Convert it with torch to a state dict of tensors and save "
                               "that with safetensors or numpy, or re-save it with arraygrad.save")
        raise RuntimeError("load: not an arraygrad checkpoint (the file does not start with "
                           "arraygrad's magic bytes)")
    start = len(_MAGIC) + _HEADER.size
    if len(raw) < start:
        raise RuntimeError("load: the checkpoint is truncated (incomplete header)")
    version, hlen = _HEADER.unpack_from(raw, len(_MAGIC))
    if version != _VERSION:
        raise RuntimeError(f"load: unsupported checkpoint format version {version} (this "
                           f"arraygrad reads version {_VERSION})")
    if len(raw) < start + hlen:
        raise RuntimeError("load: the checkpoint is truncated (incomplete header)")
    try:
        header = json.loads(raw[start:start + hlen].decode())
        root, records = header["root"], header["tensors"]
    except (ValueError, UnicodeDecodeError, KeyError, TypeError, RecursionError) as e:
        raise RuntimeError(f"load: the checkpoint header is corrupt ({e})") from None
    reader = _Reader(memoryview(raw)[start + hlen:], records, map_location)
    try:
        return reader.decode(root)
    except RecursionError:
        raise RuntimeError("load: the checkpoint is corrupt (nested too deeply)") from None


def _read_all(f):
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            return fh.read()
    if isinstance(f, (bytes, bytearray)):
        raise TypeError("load: expected a file path or a readable binary file, got bytes "
                        "(wrap them in io.BytesIO)")
    if not hasattr(f, "read"):
        raise TypeError(f"load: expected a file path or a readable binary file, got "
                        f"{type(f).__name__}")
    data = f.read()
    if isinstance(data, str):
        raise TypeError("load: the file is open in text mode; open it with 'rb'")
    return bytes(data)


def _check_location(loc):
    if loc is None or callable(loc):
        return
    if isinstance(loc, dict):
        for v in loc.values():
            _check_location(v)
        return
    if str(loc) != "cpu":
        raise RuntimeError(f"load: map_location={loc!r} is not available; arraygrad tensors "
                           "live on the cpu")


class _Reader:
    def __init__(self, blob, records, map_location):
        self.blob, self.records, self.map_location = blob, records, map_location
        self.loaded = {}

    def _bad(self, what):
        return RuntimeError(f"load: the checkpoint is corrupt ({what})")

    def decode(self, node):
        if node is None or isinstance(node, (bool, str)):
            return node
        if not isinstance(node, dict) or len(node) != 1:
            raise self._bad(f"unexpected node {str(node)[:60]!r}")
        (tag, v), = node.items()
        try:
            if tag == "int":
                return int(v)
            if tag == "float":
                return float.fromhex(v)
            if tag == "dtype":
                return _dt._NAMES[v]
            if tag == "size":
                return _t.Size(int(s) for s in v)
            if tag in ("tensor", "ndarray", "npscalar"):
                out = self._array(v)
                if tag == "npscalar":
                    return out[()]
                return out
            if tag in ("dict", "odict"):
                pairs = [(self.decode(k), self.decode(x)) for k, x in v]
                return OrderedDict(pairs) if tag == "odict" else dict(pairs)
            if tag == "list":
                return [self.decode(x) for x in v]
            if tag == "tuple":
                return tuple(self.decode(x) for x in v)
        except RuntimeError:
            raise
        except (ValueError, TypeError, KeyError, OverflowError) as e:
            raise self._bad(f"bad {tag!r} node: {e}") from None
        raise self._bad(f"unknown node tag {tag!r}")

    def _array(self, index):
        if not isinstance(index, int) or isinstance(index, bool) or \
                not 0 <= index < len(self.records):
            raise self._bad(f"tensor index {index!r} out of range")
        if index in self.loaded:
            return self.loaded[index]
        rec = self.records[index]
        is_tensor = "dtype" in rec
        if is_tensor:
            dt = _dt._NAMES.get(rec["dtype"])
            if dt is None:
                raise self._bad(f"unknown dtype {rec['dtype']!r}")
            np_dtype = dt.np.newbyteorder("<")
        else:
            np_dtype = np.dtype(str(rec["npdtype"]))
            if np_dtype.kind not in _NUMPY_KINDS or np_dtype.fields is not None:
                raise self._bad(f"array dtype {np_dtype} is not numeric")
        shape = tuple(int(s) for s in rec["shape"])
        offset, nbytes = int(rec["offset"]), int(rec["nbytes"])
        if any(s < 0 for s in shape) or offset < 0:
            raise self._bad("negative shape or offset")
        count = 1
        for s in shape:
            count *= s
        if nbytes != count * np_dtype.itemsize:
            raise self._bad(f"tensor {index} has {nbytes} bytes for shape {shape}")
        if offset + nbytes > len(self.blob):
            raise RuntimeError("load: the checkpoint is truncated (tensor data ends early)")
        arr = np.frombuffer(self.blob[offset:offset + nbytes], dtype=np_dtype).reshape(shape)
        arr = arr.astype(np_dtype.newbyteorder("="), copy=True)
        if not is_tensor:
            out = arr
        else:
            out = _t.make(arr)
            if rec.get("parameter"):
                out = Parameter(out, requires_grad=bool(rec.get("requires_grad")))
            elif rec.get("requires_grad"):
                out.requires_grad_(True)
            out = self._relocate(out)
        self.loaded[index] = out
        return out

    def _relocate(self, t):
        loc = self.map_location
        if callable(loc) and not isinstance(loc, dict):
            moved = loc(t, "cpu")
            if not isinstance(moved, _t.Tensor):
                raise TypeError(f"load: map_location returned {type(moved).__name__}, expected "
                                "a Tensor")
            return moved
        return t

