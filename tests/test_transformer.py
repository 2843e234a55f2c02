"""nn.TransformerEncoderLayer/DecoderLayer/Encoder/Decoder/Transformer vs torch (float64, same
weights, dropout 0): outputs, input and parameter gradients, masks, norm_first, activations,
batch_first, state_dict keys, init, errors, and per-sample gradients under vmap(grad)."""
import warnings

import numpy as np
import pytest

import arraygrad as ag
from conftest import assert_close, to_numpy

rng = np.random.default_rng(1515)
E, H, FF = 8, 2, 16


def _load(am, tm):
    assert list(am.state_dict()) == list(tm.state_dict())
    for (k, va), vt in zip(am.state_dict().items(), tm.state_dict().values()):
        assert tuple(va.shape) == tuple(vt.shape), k
    am.load_state_dict({k: ag.tensor(to_numpy(v)) for k, v in tm.state_dict().items()})
    return am, tm


def _layers(torch, name, **kwargs):
    kwargs = dict(dim_feedforward=FF, dropout=0.0, **kwargs)
    act = kwargs.pop("activation", "relu")
    acts = {"tanh": (torch.tanh, ag.tanh), "module": (torch.nn.GELU(), ag.nn.GELU())}
    act_t, act_a = acts.get(act, (act, act))
    tm = getattr(torch.nn, name)(E, H, activation=act_t, **kwargs).double()
    am = getattr(ag.nn, name)(E, H, activation=act_a, **kwargs).double()
    return _load(am, tm)


def _check(torch, am, tm, arrays, kwargs_a=None, kwargs_t=None):
    xa = [ag.tensor(a, requires_grad=True) for a in arrays]
    xt = [torch.tensor(a, requires_grad=True) for a in arrays]
    ya, yt = am(*xa, **(kwargs_a or {})), tm(*xt, **(kwargs_t or {}))
    assert_close(ya, yt, what="output: ")
    cot = rng.standard_normal(tuple(yt.shape))
    (ya * ag.tensor(cot)).sum().backward()
    (yt * torch.tensor(cot)).sum().backward()
    for (n, pa), pt in zip(am.named_parameters(), tm.parameters()):
        assert_close(pa.grad, pt.grad, rtol=1e-9, atol=1e-11, what=f"grad of {n}: ")
    for a, t in zip(xa, xt):
        assert_close(a.grad, t.grad, rtol=1e-9, atol=1e-11, what="input grad: ")


def _masks(torch, lq, lk, n, kind):
    """(arraygrad, torch) attn mask and key padding mask of the given kind."""
    if kind == "none":
        return (None, None), (None, None)
    if kind == "bool":
        attn = np.triu(np.ones((lq, lk), bool), 1)
        pad = np.zeros((n, lk), bool)
        pad[0, -2:] = True
    else:
        attn = rng.standard_normal((lq, lk))
        pad = np.where(rng.random((n, lk)) < 0.3, -np.inf, 0.0)
        pad[:, 0] = 0.0
    return (ag.tensor(attn), ag.tensor(pad)), (torch.tensor(attn), torch.tensor(pad))


ENC_CASES = [dict(), dict(norm_first=True), dict(activation="gelu", batch_first=True),
             dict(activation="tanh", norm_first=True, batch_first=True),
             dict(activation="module", bias=False, layer_norm_eps=1e-3)]


@pytest.mark.parametrize("kwargs", ENC_CASES, ids=str)
@pytest.mark.parametrize("masks", ["none", "bool", "float"])
def test_encoder_layer_matches_torch(torch, kwargs, masks):
    am, tm = _layers(torch, "TransformerEncoderLayer", **kwargs)
    shape = (3, 5, E) if kwargs.get("batch_first") else (5, 3, E)
    (ma, pa), (mt, pt) = _masks(torch, 5, 5, 3, masks)
    _check(torch, am, tm, [rng.standard_normal(shape)],
           dict(src_mask=ma, src_key_padding_mask=pa), dict(src_mask=mt, src_key_padding_mask=pt))


@pytest.mark.parametrize("kwargs", ENC_CASES, ids=str)
@pytest.mark.parametrize("masks", ["none", "bool", "float"])
def test_decoder_layer_matches_torch(torch, kwargs, masks):
    am, tm = _layers(torch, "TransformerDecoderLayer", **kwargs)
    bf = kwargs.get("batch_first")
    tgt, mem = ((3, 4, E), (3, 6, E)) if bf else ((4, 3, E), (6, 3, E))
    (ma, pa), (mt, pt) = _masks(torch, 4, 4, 3, masks)
    (mma, mpa), (mmt, mpt) = _masks(torch, 4, 6, 3, masks)
    _check(torch, am, tm, [rng.standard_normal(tgt), rng.standard_normal(mem)],
           dict(tgt_mask=ma, tgt_key_padding_mask=pa, memory_mask=mma,
                memory_key_padding_mask=mpa),
           dict(tgt_mask=mt, tgt_key_padding_mask=pt, memory_mask=mmt,
                memory_key_padding_mask=mpt))


def test_unbatched_layers_match_torch(torch):
    am, tm = _layers(torch, "TransformerEncoderLayer", norm_first=True)
    _check(torch, am, tm, [rng.standard_normal((5, E))])
    am, tm = _layers(torch, "TransformerDecoderLayer")
    _check(torch, am, tm, [rng.standard_normal((4, E)), rng.standard_normal((6, E))])


@pytest.mark.parametrize("batch_first", [False, True])
def test_transformer_matches_torch(torch, batch_first):
    kw = dict(d_model=E, nhead=H, num_encoder_layers=2, num_decoder_layers=2,
              dim_feedforward=FF, dropout=0.0, batch_first=batch_first)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "enable_nested_tensor is True")
        tm = torch.nn.Transformer(**kw).double()
    am, tm = _load(ag.nn.Transformer(**kw).double(), tm)
    src, tgt = ((2, 5, E), (2, 4, E)) if batch_first else ((5, 2, E), (4, 2, E))
    causal_a = ag.nn.Transformer.generate_square_subsequent_mask(4, dtype=ag.float64)
    causal_t = torch.nn.Transformer.generate_square_subsequent_mask(4, dtype=torch.float64)
    assert_close(causal_a, causal_t)
    pad = np.zeros((2, 5), bool)
    pad[1, -1] = True
    _check(torch, am, tm, [rng.standard_normal(src), rng.standard_normal(tgt)],
           dict(tgt_mask=causal_a, src_key_padding_mask=ag.tensor(pad),
                memory_key_padding_mask=ag.tensor(pad)),
           dict(tgt_mask=causal_t, src_key_padding_mask=torch.tensor(pad),
                memory_key_padding_mask=torch.tensor(pad)))


def test_stacks_are_independent_copies_and_init(torch):
    layer = ag.nn.TransformerEncoderLayer(E, H, dim_feedforward=FF)
    enc = ag.nn.TransformerEncoder(layer, 3, norm=ag.nn.LayerNorm(E))
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "enable_nested_tensor is True")
        tenc = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(E, H, FF), 3,
                                           norm=torch.nn.LayerNorm(E))
    assert list(enc.state_dict()) == list(tenc.state_dict())
    w0, w1 = (to_numpy(enc.layers[k].linear1.weight) for k in (0, 1))
    np.testing.assert_array_equal(w0, w1)       # deep copies of one layer, as torch
    assert enc.layers[0].linear1.weight is not enc.layers[1].linear1.weight
    dec = ag.nn.TransformerDecoder(ag.nn.TransformerDecoderLayer(E, H, FF), 2)
    tdec = torch.nn.TransformerDecoder(torch.nn.TransformerDecoderLayer(E, H, FF), 2)
    assert list(dec.state_dict()) == list(tdec.state_dict())
    t = ag.nn.Transformer(d_model=16, nhead=4, num_encoder_layers=1, num_decoder_layers=1,
                          dim_feedforward=64)
    w = to_numpy(t.encoder.layers[0].linear1.weight)
    bound = np.sqrt(6 / (16 + 64))                # xavier_uniform_ over every matrix
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.8 * bound
    assert t.encoder.layers[0].activation is ag.nn.functional.relu


def test_encoder_detects_causal_mask(torch):
    layer = ag.nn.TransformerEncoderLayer(E, H, FF, dropout=0.0).double()
    enc = ag.nn.TransformerEncoder(layer, 2)
    x = ag.tensor(rng.standard_normal((4, 2, E)))
    causal = ag.nn.Transformer.generate_square_subsequent_mask(4, dtype=ag.float64)
    y = enc(x, mask=causal)
    assert_close(y, enc(x, mask=causal, is_causal=True))
    assert not np.allclose(to_numpy(y), to_numpy(enc(x)))


def test_errors(torch):
    for lib in (torch, ag):
        with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
            lib.nn.TransformerEncoderLayer(E, H, activation="tanh")
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "enable_nested_tensor is True")
            m = lib.nn.Transformer(d_model=E, nhead=H, num_encoder_layers=1,
                                   num_decoder_layers=1, dim_feedforward=FF)
        with pytest.raises(RuntimeError, match="the batch number of src and tgt must be equal"):
            m(lib.zeros(5, 2, E), lib.zeros(4, 3, E))
        with pytest.raises(RuntimeError, match="the feature number of src and tgt"):
            m(lib.zeros(5, 2, E), lib.zeros(4, 2, E + 1))


def test_per_sample_grads_under_vmap_match_torch_func(torch):
    am, tm = _layers(torch, "TransformerEncoderLayer", norm_first=True, activation="gelu")
    xs = rng.standard_normal((3, 5, E))
    results = []
    for lib, model in ((torch, tm), (ag, am)):
        params = {k: v.detach() for k, v in model.named_parameters()}

        def loss(params, seq):
            return (lib.func.functional_call(model, params, (seq,)) ** 2).sum()

        with warnings.catch_warnings():     # torch's note that it loops over its SDPA kernel
            warnings.filterwarnings("ignore", "There is a performance drop")
            results.append(lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0))(
                params, lib.tensor(xs)))
    theirs, ours = results
    for k in theirs:
        assert_close(ours[k], theirs[k], rtol=1e-9, atol=1e-11, what=k)


@pytest.mark.parametrize("pad_kind", ["bool", "float", "not left aligned"])
def test_inference_zeroes_padded_positions_as_torch(torch, pad_kind):
    """torch's nested-tensor path (eval, no grad, batch_first, a padding mask that pads at the
    end) gives 0 at padded positions before the final norm; the grad path keeps the values."""
    am, tm = _layers(torch, "TransformerEncoderLayer", batch_first=True, activation="gelu")
    tenc = torch.nn.TransformerEncoder(tm, 2, norm=torch.nn.LayerNorm(E).double()).eval()
    aenc = ag.nn.TransformerEncoder(am, 2, norm=ag.nn.LayerNorm(E).double()).eval()
    _load(aenc, tenc)
    x = rng.standard_normal((3, 5, E))
    pad = np.zeros((3, 5), bool)
    pad[0, -2:] = pad[2, -1] = True
    if pad_kind == "not left aligned":
        pad[1, 0] = True
    if pad_kind == "float":
        pad = np.where(pad, -np.inf, 0.0)
    with torch.no_grad(), warnings.catch_warnings():
        warnings.filterwarnings("ignore", "The PyTorch API of nested tensors")
        yt = tenc(torch.tensor(x), src_key_padding_mask=torch.tensor(pad))
    with ag.no_grad():
        ya = aenc(ag.tensor(x), src_key_padding_mask=ag.tensor(pad))
    assert_close(ya, yt)
    ya_grad = aenc(ag.tensor(x, requires_grad=True), src_key_padding_mask=ag.tensor(pad))
    changed = ~np.isclose(to_numpy(ya_grad), to_numpy(yt)).all(-1)
    assert changed.any() == (pad_kind != "not left aligned")
