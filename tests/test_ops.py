"""Every op of the catalogue against torch: values, dtypes, gradients, second derivatives,
forward AD (func.jvp, dual levels, jvp of vjp and of jvp)."""
import numpy as np
import pytest

import arraygrad as ag
from arraygrad.autograd import forward_ad as fwAD
from conftest import assert_close, reference_torch, to_numpy
from op_db import (OPS, NN_FUNCTIONAL, CONV_POOL_NAMED_DIFFERENTLY, ELEM14_NAMED_DIFFERENTLY,
                   TENSOR_OPS_NAMED_DIFFERENTLY, LINALG_SOLVE_NAMED_DIFFERENTLY,
                   SPECTRAL_NAMED_DIFFERENTLY, MORE_MATH_NAMED_DIFFERENTLY, cases as _cases,
                   run as _run, as_function,
                   first_cases, float_arrays, has_float_output)
from op_db import ARRAY_FUNCTIONS_NAMED_DIFFERENTLY

torch = reference_torch()

# torch.func.jvp loads torch's jvp decompositions, which warn about torch.jit.script
pytestmark = pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated")


def _grad(lib, outs, inputs, cots, create_graph):
    pairs = [(o, c) for o, c in zip(outs, cots) if o.requires_grad]
    if not pairs:
        return [None] * len(inputs)
    return list(lib.autograd.grad([o for o, _ in pairs], inputs, [c for _, c in pairs],
                                  allow_unused=True, create_graph=create_graph))


def _zeros_if_none(lib, g, like):
    return lib.zeros_like(like) if g is None else g


ALL = _cases(OPS)
DIFF = _cases(OPS, lambda op: op.grad)
GRADGRAD = _cases(OPS, lambda op: op.grad and op.gradgrad)


@pytest.mark.parametrize("op,sample", ALL)
def test_forward_float64(op, sample):
    _, a_outs = _run(ag, op, sample)
    _, t_outs = _run(torch, op, sample)
    assert len(a_outs) == len(t_outs)
    for i, (a, t) in enumerate(zip(a_outs, t_outs)):
        assert isinstance(a, ag.Tensor), f"output {i} is a {type(a).__name__}"
        assert_close(a, t, op.rtol, op.atol, what=f"{op.name}{sample} output {i}: ")
        assert a.requires_grad == t.requires_grad, f"output {i} requires_grad"
        assert a.is_leaf == t.is_leaf


@pytest.mark.parametrize("op,sample", ALL)
def test_forward_float32_dtype(op, sample):
    """float32 inputs stay float32 (and int/bool results keep torch's dtypes)."""
    _, a_outs = _run(ag, op, sample, np.float32)
    _, t_outs = _run(torch, op, sample, np.float32)
    for i, (a, t) in enumerate(zip(a_outs, t_outs)):
        assert_close(a, t, 2e-5, 1e-5, what=f"{op.name}{sample} float32 output {i}: ")


@pytest.mark.parametrize("op,sample", DIFF)
def test_grad(op, sample):
    a_in, a_outs = _run(ag, op, sample)
    t_in, t_outs = _run(torch, op, sample)
    rng = np.random.default_rng(1)
    cots = [rng.standard_normal(tuple(t.shape)) if t.requires_grad else None for t in t_outs]
    for a, t in zip(a_outs, t_outs):
        assert a.requires_grad == t.requires_grad
    a_g = _grad(ag, a_outs, a_in, [None if c is None else ag.tensor(c) for c in cots], False)
    t_g = _grad(torch, t_outs, t_in, [None if c is None else torch.tensor(c) for c in cots], False)
    for i, (a, t, x) in enumerate(zip(a_g, t_g, t_in)):
        if a is not None:
            assert not a.requires_grad, "a gradient computed without create_graph has history"
        assert_close(_zeros_if_none(ag, a, a_in[i]), _zeros_if_none(torch, t, x), op.rtol, op.atol,
                     what=f"{op.name}{sample} grad of input {i}: ")


@pytest.mark.parametrize("op,sample", DIFF)
def test_grad_float32(op, sample):
    """Gradients of float32 inputs are float32 (and close to torch's)."""
    a_in, a_outs = _run(ag, op, sample, np.float32)
    t_in, t_outs = _run(torch, op, sample, np.float32)
    cots = [np.ones(tuple(t.shape), np.float32) if t.requires_grad else None for t in t_outs]
    a_g = _grad(ag, a_outs, a_in, [None if c is None else ag.tensor(c) for c in cots], False)
    t_g = _grad(torch, t_outs, t_in, [None if c is None else torch.tensor(c) for c in cots], False)
    for i, (a, t) in enumerate(zip(a_g, t_g)):
        assert_close(_zeros_if_none(ag, a, a_in[i]), _zeros_if_none(torch, t, t_in[i]), 1e-4, 1e-4,
                     what=f"{op.name}{sample} float32 grad of input {i}: ")


@pytest.mark.parametrize("op,sample", GRADGRAD)
def test_gradgrad(op, sample):
    """Second derivatives through create_graph, w.r.t. the inputs and the cotangents."""
    a_in, a_outs = _run(ag, op, sample)
    t_in, t_outs = _run(torch, op, sample)
    rng = np.random.default_rng(2)
    cots = [rng.standard_normal(tuple(t.shape)) if t.requires_grad else None for t in t_outs]
    a_cots = [None if c is None else ag.tensor(c, requires_grad=True) for c in cots]
    t_cots = [None if c is None else torch.tensor(c, requires_grad=True) for c in cots]
    a_g = _grad(ag, a_outs, a_in, a_cots, True)
    t_g = _grad(torch, t_outs, t_in, t_cots, True)
    ws = [rng.standard_normal(tuple(x.shape)) for x in t_in]

    def second(lib, grads, inputs, cts):
        terms = [(g * lib.tensor(w)).sum() for g, w in zip(grads, ws)
                 if g is not None and g.requires_grad]
        wrt = inputs + [c for c in cts if c is not None]
        if not terms:
            return [None] * len(wrt), wrt
        return list(lib.autograd.grad(sum(terms), wrt, allow_unused=True)), wrt

    a_gg, a_wrt = second(ag, a_g, a_in, a_cots)
    t_gg, t_wrt = second(torch, t_g, t_in, t_cots)
    for i, (a, t) in enumerate(zip(a_gg, t_gg)):
        assert_close(_zeros_if_none(ag, a, a_wrt[i]), _zeros_if_none(torch, t, t_wrt[i]),
                     op.rtol, op.atol, what=f"{op.name}{sample} second derivative {i}: ")


# composites and overloads whose top node torch names differently (the grads still match)
NAMED_DIFFERENTLY = set("""
    square reciprocal remainder op_rsub op_rtruediv clamp_tensor clamp_min clamp_max sum sum_method
    mean softmax log_softmax norm cumsum matmul op_matmul bmm dot
    addmm einsum t squeeze expand stack roll split chunk unbind repeat tile trace diag
    contiguous getitem_mixed index_select masked_fill masked_select take scatter_add
    addcdiv addcmul hypot index_add index_fill lerp logaddexp logit meshgrid_ij scatter_src
    clamp_min_at_bound scatter_value sort std_mean sum_to_size topk tril triu var_mean xlogy tensordot kron cross
    diff cumprod i0 sinc special.i1 special.ndtr special.entr special.expit
    special.xlog1py index_add_zeros""".split()) | {op.name for op in NN_FUNCTIONAL}   # compositions
NAMED_DIFFERENTLY.add("setitem")    # torch: CopySlices (the in-place write into a view); ours: IndexPut
NAMED_DIFFERENTLY |= CONV_POOL_NAMED_DIFFERENTLY | ELEM14_NAMED_DIFFERENTLY
NAMED_DIFFERENTLY |= TENSOR_OPS_NAMED_DIFFERENTLY
NAMED_DIFFERENTLY |= LINALG_SOLVE_NAMED_DIFFERENTLY
NAMED_DIFFERENTLY |= SPECTRAL_NAMED_DIFFERENTLY
NAMED_DIFFERENTLY |= MORE_MATH_NAMED_DIFFERENTLY
NAMED_DIFFERENTLY |= ARRAY_FUNCTIONS_NAMED_DIFFERENTLY


@pytest.mark.parametrize("op,sample", _cases(OPS, lambda op: op.grad and
                                             op.name not in NAMED_DIFFERENTLY))
def test_grad_fn_names_match_torch(op, sample):
    _, a_outs = _run(ag, op, sample)
    _, t_outs = _run(torch, op, sample)
    for a, t in zip(a_outs, t_outs):
        expected = None if t.grad_fn is None else type(t.grad_fn).__name__
        assert (a.grad_fn and a.grad_fn.name()) == expected


def test_catalogue_covers_the_issue_ops():
    names = {op.name for op in OPS}
    wanted = ("add sub mul div neg pow exp log sqrt abs sign tanh sigmoid relu clamp clamp_min "
              "clamp_max maximum minimum where eq ne lt le gt ge sum mean max_dim max_all min_dim "
              "min_all amax amin matmul op_matmul mm reshape view transpose permute unsqueeze "
              "squeeze expand movedim flatten cat stack getitem getitem_bool getitem_int_tensor "
              "logsumexp softmax log_softmax").split()
    assert not [n for n in wanted if n not in names]


# ----------------------------------------------------------------- forward AD
def _jvp(lib, F, op, sample, tangents):
    primals = tuple(lib.tensor(a) for a in float_arrays(sample))
    return F.jvp(as_function(lib, op, sample), primals, tuple(lib.tensor(t) for t in tangents))


@pytest.mark.parametrize("op,sample", DIFF)
def test_jvp(op, sample):
    if "jvp" in op.torch_not_oracle:
        pytest.skip(op.torch_not_oracle["jvp"])
    arrays = float_arrays(sample)
    if not arrays or not has_float_output(op, sample):
        pytest.skip("no float input or output")
    r = np.random.default_rng(7)
    tangents = [r.standard_normal(a.shape) for a in arrays]
    outs, tans = _jvp(ag, ag.func, op, sample, tangents)
    t_outs, t_tans = _jvp(torch, torch.func, op, sample, tangents)
    assert len(outs) == len(t_outs)
    empty = min(x.size for x in arrays) == 0
    for i, (a, e) in enumerate(zip(tans, t_tans)):
        if empty and np.isnan(to_numpy(e)).any() and not np.isnan(to_numpy(a)).any():
            continue    # torch's tangent of a reduction over an empty dim is nan; ours is 0
        assert_close(a, e, max(op.rtol, 1e-9), max(op.atol, 1e-10),
                     what=f"{op.name}{sample} tangent {i}: ")


FIRST = first_cases([op for op in OPS if op.grad and op.gradgrad], has_float_output)


@pytest.mark.parametrize("op,sample", FIRST[::7])
def test_dual_level(op, sample):
    """forward_ad.make_dual/unpack_dual (a dual level, not func.jvp) against torch's."""
    if "jvp" in op.torch_not_oracle:
        pytest.skip(op.torch_not_oracle["jvp"])
    arrays = float_arrays(sample)
    r = np.random.default_rng(3)
    tangents = [r.standard_normal(a.shape) for a in arrays]
    res = []
    for L, F in ((ag, fwAD), (torch, torch.autograd.forward_ad)):
        with F.dual_level():
            duals = [F.make_dual(L.tensor(a), L.tensor(t)) for a, t in zip(arrays, tangents)]
            res.append([F.unpack_dual(o) for o in as_function(L, op, sample)(*duals)])
    for (p, t), (tp, tt) in zip(*res):
        assert_close(p, tp, op.rtol, op.atol, what=f"{op.name} primal: ")
        assert (t is None) == (tt is None), f"{op.name}: a tangent where torch has none or back"
        if t is not None:       # none for an output that does not depend on the input (lu's P)
            assert_close(t, tt, max(op.rtol, 1e-8), 1e-9, what=f"{op.name} tangent: ")


@pytest.mark.parametrize("op,sample", FIRST)
def test_forward_over_reverse_and_forward_over_forward(op, sample):
    """jvp of the vjp (the jvp rules of every vjp rule's ops) and jvp of jvp, vs torch."""
    for check in ("jvp", "forward_over"):
        if check in op.torch_not_oracle:
            pytest.skip(op.torch_not_oracle[check])
    arrays = float_arrays(sample)
    r = np.random.default_rng(11)
    tangents = [r.standard_normal(a.shape) for a in arrays]
    res, ct_arrays = [], []
    for L, F in ((ag, ag.func), (torch, torch.func)):
        f = as_function(L, op, sample)
        primals = tuple(L.tensor(a) for a in arrays)
        ts = tuple(L.tensor(t) for t in tangents)
        ct_arrays = ct_arrays or [r.standard_normal(tuple(o.shape)) for o in f(*primals)]
        cts = tuple(L.tensor(c) for c in ct_arrays)

        def vjp_of(*ps, F=F, f=f, cts=cts):
            return F.vjp(f, *ps)[1](cts)

        def jvp_of(*ps, F=F, f=f, ts=ts):
            return F.jvp(f, ps, ts)[1]
        res.append((F.jvp(vjp_of, primals, ts)[1], F.jvp(jvp_of, primals, ts)[1]))
    (a_rev, a_fwd), (e_rev, e_fwd) = res
    for a, e in zip(a_rev + a_fwd, e_rev + e_fwd):
        assert_close(a, e, max(op.rtol, 1e-8), max(op.atol, 1e-9), what=f"{op.name}: ")


@pytest.mark.parametrize("name", ["floor_divide", "floordiv_operator", "heaviside"])
def test_ops_without_derivative_record_a_node_whose_derivatives_raise(name):
    """torch records `x // y` and heaviside with a grad_fn that raises when differentiated
    (backward and forward AD); their results require grad as torch's."""
    fns = {"floor_divide": lambda M, x: M.floor_divide(x, 2),
           "floordiv_operator": lambda M, x: x // 1.5,
           "heaviside": lambda M, x: M.heaviside(x, x)}
    f = fns[name]
    for M in (ag, torch):
        if M is None:
            continue
        x = M.tensor([1.5, -2.5, 0.0], dtype=M.float64, requires_grad=True)
        y = f(M, x)
        assert y.requires_grad and y.grad_fn is not None
        with pytest.raises(RuntimeError, match="derivative for .*(floor_divide|heaviside).* not "
                                               "implemented"):
            y.sum().backward()
        with pytest.raises(NotImplementedError, match="forward AD with .*(floor_divide|heaviside)"):
            M.func.jvp(lambda a: f(M, a), (x.detach(),), (M.ones_like(x),))
