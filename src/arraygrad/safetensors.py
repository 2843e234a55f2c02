"""The safetensors format, with the API of `safetensors.torch`: flat dicts of named tensors
(bfloat16 included), exchanged with torch and the model hubs, loaded without running code.

    from arraygrad.safetensors import save_file, load_file
    save_file(model.state_dict(), "model.safetensors", metadata={"step": "100"})
    model.load_state_dict(load_file("model.safetensors"))

# NOTE [safetensors layout]
An 8-byte little-endian header length N, N bytes of JSON (padded with spaces to a multiple of
8) naming each tensor's dtype code, shape and [begin, end) byte range in the buffer that
follows, plus an optional "__metadata__" map of strings. The ranges must tile the buffer
exactly; anything else is refused with an error naming the problem.
"""
import json
import os
import struct

import numpy as np

from . import _device
from . import _tensor as _t
from . import dtypes as _dt

__all__ = ["save", "load", "save_file", "load_file"]

_CODES = {"BOOL": "bool", "U8": "uint8", "I8": "int8", "I16": "int16", "I32": "int32",
          "I64": "int64", "F16": "float16", "BF16": "bfloat16", "F32": "float32",
          "F64": "float64"}
_NAMES = {v: k for k, v in _CODES.items()}
# the reference writer's dtype order (its Rust enum): buffers go from the last to the first
_RANK = {c: i for i, c in enumerate(("BOOL", "U8", "I8", "I16", "F16", "BF16", "I32", "F32",
                                     "F64", "I64"))}


def _error(what):
    return RuntimeError(f"safetensors: {what}")


def save(tensors, metadata=None):
    """The safetensors bytes of `tensors` (a dict of names to tensors)."""
    if not isinstance(tensors, dict) or not all(isinstance(k, str) and isinstance(v, _t.Tensor)
                                                for k, v in tensors.items()):
        raise ValueError("safetensors: expected a dict of str names to Tensors")
    if metadata is not None and not all(isinstance(k, str) and isinstance(v, str)
                                        for k, v in metadata.items()):
        raise ValueError("safetensors: metadata must map str to str")
    header = {} if metadata is None else {"__metadata__": dict(metadata)}
    buffers, offset = [], 0
    # as the reference writer, so that files are byte-identical: by dtype rank, then by name
    for name in sorted(tensors, key=lambda k: (-_RANK[_NAMES[tensors[k].dtype.name]], k)):
        t = tensors[name]
        data = np.ascontiguousarray(t.detach().cpu().numpy()).tobytes()
        header[name] = {"dtype": _NAMES[t.dtype.name], "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(data)]}
        buffers.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    return b"".join([struct.pack("<Q", len(text)), text] + buffers)


def load(data):
    """The dict of tensors held by safetensors bytes `data`."""
    data = bytes(data)
    if len(data) < 8:
        raise _error("the header length is missing (fewer than 8 bytes)")
    (n,) = struct.unpack("<Q", data[:8])
    if 8 + n > len(data):
        raise _error(f"the header claims {n} bytes but the data has {len(data) - 8}")
    try:
        header = json.loads(data[8:8 + n].decode())
    except (UnicodeDecodeError, ValueError) as e:
        raise _error(f"the header is not JSON ({e})") from None
    if not isinstance(header, dict):
        raise _error("the header is not a JSON object")
    header.pop("__metadata__", None)
    buffer = data[8 + n:]
    out, spans = {}, []
    for name, rec in header.items():
        try:
            dtype = getattr(_dt, _CODES[rec["dtype"]])
            shape = tuple(int(s) for s in rec["shape"])
            begin, end = (int(v) for v in rec["data_offsets"])
        except (KeyError, TypeError, ValueError):
            raise _error(f"tensor {name!r} has a bad entry {str(rec)[:80]}") from None
        count = int(np.prod(shape, dtype=np.int64))
        if min(shape, default=0) < 0 or not 0 <= begin <= end <= len(buffer) or \
                end - begin != count * dtype.itemsize:
            raise _error(f"tensor {name!r}: byte range [{begin}, {end}) does not hold shape "
                         f"{list(shape)} of {rec['dtype']} within {len(buffer)} bytes")
        arr = np.frombuffer(buffer[begin:end], dtype=dtype.np.newbyteorder("<")).reshape(shape)
        out[name] = _t.make(arr.astype(dtype.np, copy=True))
        spans.append((begin, end))
    covered = 0
    for begin, end in sorted(spans):
        if begin != covered:
            raise _error("incomplete metadata, file not fully covered (tensor ranges overlap "
                         "or leave gaps)")
        covered = end
    if covered != len(buffer):
        raise _error("incomplete metadata, file not fully covered")
    return out


def save_file(tensors, filename, metadata=None):
    with open(os.fspath(filename), "wb") as f:
        f.write(save(tensors, metadata))


def load_file(filename, device="cpu"):
    dev = _device.check(device)
    with open(os.fspath(filename), "rb") as f:
        tensors = load(f.read())
    return tensors if dev.type == "cpu" else {k: v.to(dev) for k, v in tensors.items()}
