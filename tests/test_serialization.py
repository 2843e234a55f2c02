"""save/load: bit-exact round trips of tensors and nested state, and files that must not load
(corrupt, truncated, pickles with code)."""
import io
import math
import os
import pickle
import struct
from collections import OrderedDict

import numpy as np
import pytest

import arraygrad as ag
from arraygrad import nn, optim


def _round_trip(obj, **load_kw):
    buf = io.BytesIO()
    ag.save(obj, buf)
    buf.seek(0)
    return ag.load(buf, **load_kw)


def _bits(t):
    a = t.detach().numpy()
    return a.dtype, a.shape, a.tobytes()


def test_tensors_round_trip_bit_exact():
    specials = ag.tensor([math.nan, math.inf, -math.inf, -0.0, 5e-324, 1.0 / 3], dtype=ag.float64)
    weird_nan = ag.from_numpy(np.array([0x7ff8dead00000001], dtype=np.uint64).view(np.float64))
    cases = [specials, weird_nan, ag.randn(3, 4), ag.randn(2, 3).to(ag.float16),
             ag.arange(12).reshape(3, 4).t(), ag.tensor(True), ag.zeros(0, 3),
             ag.tensor([-128, 127], dtype=ag.int8), ag.tensor([255], dtype=ag.uint8),
             ag.randn(4, 6)[::2, 1::3]]
    out = _round_trip(cases)
    for a, b in zip(cases, out):
        assert _bits(a) == _bits(b)
        assert a.dtype == b.dtype and not b.requires_grad


def test_nested_structure_and_identity():
    w = ag.randn(3, requires_grad=True)
    p = nn.Parameter(ag.ones(2))
    obj = {"w": w, "again": w, "p": p, 3: ("x", None, True, 2 ** 70, -1.5e300, math.nan),
           "od": OrderedDict([("b", 1), ("a", [ag.float64, ag.Size([2, 3])])]),
           "np": np.arange(6, dtype=np.int32).reshape(2, 3), "npscalar": np.float32(0.25)}
    out = _round_trip(obj)
    assert list(out) == list(obj)
    assert out["w"] is out["again"] and out["w"].requires_grad and out["w"].is_leaf
    assert isinstance(out["p"], nn.Parameter) and out["p"].requires_grad
    assert out[3][:5] == ("x", None, True, 2 ** 70, -1.5e300) and math.isnan(out[3][5])
    assert type(out["od"]) is OrderedDict and list(out["od"]) == ["b", "a"]
    assert out["od"]["a"] == [ag.float64, ag.Size([2, 3])] and type(out["od"]["a"][1]) is ag.Size
    assert out["np"].dtype == np.int32 and out["np"].tolist() == [[0, 1, 2], [3, 4, 5]]
    assert type(out["npscalar"]) is np.float32 and out["npscalar"] == 0.25


def test_model_and_optimizer_checkpoint(tmp_path):
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    opt = optim.Adam(model.parameters(), lr=0.01, betas=(0.8, 0.9))
    x = ag.randn(5, 3)
    model(x).sum().backward()
    opt.step()
    path = tmp_path / "ckpt.pt"
    ag.save({"model": model.state_dict(), "opt": opt.state_dict(), "epoch": 3}, path)
    ck = ag.load(path, map_location="cpu")
    model2 = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    model2.load_state_dict(ck["model"])
    assert _bits(model2(x)) == _bits(model(x))
    opt2 = optim.Adam(model2.parameters(), lr=0.5)
    opt2.load_state_dict(ck["opt"])
    assert opt2.param_groups[0]["betas"] == (0.8, 0.9) and ck["epoch"] == 3
    assert sorted(ck["opt"]["state"]) == [0, 1, 2, 3]          # int keys stay ints
    for p, q in zip(model.parameters(), model2.parameters()):
        assert _bits(opt.state[p]["exp_avg"]) == _bits(opt2.state[q]["exp_avg"])


def test_map_location_forms():
    t = ag.ones(2)
    assert _round_trip(t, map_location=ag.device("cpu")).tolist() == [1.0, 1.0]
    assert _round_trip(t, map_location={"cuda:0": "cpu"}).tolist() == [1.0, 1.0]
    assert _round_trip(t, map_location=lambda s, loc: s * 2).tolist() == [2.0, 2.0]
    with pytest.raises(RuntimeError, match="map_location='cuda' is not available"):
        _round_trip(t, map_location="cuda")
    with pytest.raises(ValueError, match="weights_only=False is not supported"):
        _round_trip(t, weights_only=False)


def test_unsaveable_objects_are_refused():
    for bad in (object(), {"f": lambda: 0}, np.array([object()]), {1, 2}):
        with pytest.raises(TypeError, match="save: cannot save"):
            ag.save(bad, io.BytesIO())
    loop = [1]
    loop.append({"again": loop})
    with pytest.raises(ValueError, match="reference cycle"):
        ag.save(loop, io.BytesIO())
    shared = [1, 2]
    assert _round_trip([shared, shared]) == [[1, 2], [1, 2]]        # shared but not a cycle


def test_deeply_nested_header_is_refused():
    body = b'{"root": ' + b'{"list": [' * 5000 + b']}' * 5000 + b', "tensors": []}'
    magic = b"ARRAYGRAD-CHECKPOINT\n"
    blob = magic + struct.pack("<IQ", 1, len(body)) + body
    with pytest.raises(RuntimeError, match="corrupt"):
        ag.load(io.BytesIO(blob))


class _Payload:
    """Unpickling this would run os.system: the file below must not load."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def test_pickle_payload_never_runs(tmp_path, torch):
    marker = tmp_path / "pwned"
    evil = tmp_path / "evil.pt"
    evil.write_bytes(pickle.dumps({"weight": _Payload(marker)}))
    with pytest.raises(RuntimeError, match="pickle or PyTorch zip file"):
        ag.load(evil)
    zipped = tmp_path / "evil_zip.pt"
    torch.save({"w": torch.ones(2)}, zipped)           # a real torch checkpoint (pickle inside)
    with pytest.raises(RuntimeError, match="never unpickles"):
        ag.load(zipped)
    assert not marker.exists()


def test_corrupt_and_truncated_files_raise_clearly():
    buf = io.BytesIO()
    ag.save({"a": ag.randn(10), "b": [1, 2]}, buf)
    good = buf.getvalue()
    for cut in (5, 30, len(good) // 2, len(good) - 1):
        with pytest.raises(RuntimeError, match="truncated|corrupt"):
            ag.load(io.BytesIO(good[:cut]))
    with pytest.raises(RuntimeError, match="not an arraygrad checkpoint"):
        ag.load(io.BytesIO(b"hello world" * 10))
    header_at = good.index(b"{")
    flipped = good[:header_at] + b"[" + good[header_at + 1:]
    with pytest.raises(RuntimeError, match="header is corrupt"):
        ag.load(io.BytesIO(flipped))
    # a well-formed header that lies: an unknown dtype, an offset beyond the data, a bad tag
    for old, new in ((b'"float32"', b'"object!"'), (b'"offset": 0', b'"offset": 9'),
                     (b'"list"', b'"eval"')):
        assert old in good
        bad = good.replace(old, new, 1)
        n = len(bad) - len(good)
        version, hlen = struct.unpack_from("<IQ", bad, len(b"ARRAYGRAD-CHECKPOINT\n"))
        bad = (bad[:len(b"ARRAYGRAD-CHECKPOINT\n")] + struct.pack("<IQ", version, hlen + n)
               + bad[len(b"ARRAYGRAD-CHECKPOINT\n") + 12:])
        with pytest.raises(RuntimeError, match="corrupt|truncated"):
            ag.load(io.BytesIO(bad))
    with pytest.raises(TypeError, match="io.BytesIO"):
        ag.load(good)
