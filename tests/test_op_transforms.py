"""Transforms composed over every op of the catalogue, checked without torch.

jacrev is vmap of the vjp and jacfwd is vmap of the jvp, so their agreement checks each op's vjp
and jvp rules against each other and the batching rules of the ops those rules use. jvp of
vmap(f) against a loop of jvp runs the forward rules through the op's batching rules (and so the
batched-index primitives). One sample per op keeps this fast.
"""
import numpy as np
import pytest

import arraygrad as ag
from arraygrad.func import jacfwd, jacrev, jvp, vmap
from arraygrad.func.batch_level import BatchInterpreter
from arraygrad.func.jvp_level import JvpInterpreter
from arraygrad.ops.registry import PRIMITIVES
from op_db import OPS, as_function, cases, first_cases, float_arrays, has_float_output

B = 3
RNG = np.random.default_rng(5)


CASES = first_cases([op for op in OPS if op.grad],
                    lambda op, s: s.smooth and has_float_output(op, s))


def _close(a, e, what):
    np.testing.assert_allclose(np.asarray(a.detach().numpy()), np.asarray(e.detach().numpy()),
                               rtol=1e-8, atol=1e-10, equal_nan=True, err_msg=what)


@pytest.mark.parametrize("op,sample", CASES)
def test_jacrev_matches_jacfwd(op, sample):
    f = as_function(ag, op, sample)
    xs = [ag.tensor(a) for a in float_arrays(sample)]
    argnums = tuple(range(len(xs)))
    rev = jacrev(f, argnums=argnums)(*xs)
    fwd = jacfwd(f, argnums=argnums)(*xs)
    for i, (r_out, f_out) in enumerate(zip(rev, fwd)):
        for j, (r, w) in enumerate(zip(r_out, f_out)):
            assert tuple(r.shape) == tuple(w.shape)
            _close(r, w, f"{op.name}: d output {i} / d input {j}")


def _batched(sample, rng):
    """B examples of each float input, stacked in front: shuffled entries shrunk towards 0
    (the domain kept), as the vmap tests build them."""
    out = []
    for a in float_arrays(sample):
        flat = a.reshape(-1)
        out.append(np.stack([(rng.permutation(flat) if b else flat).reshape(a.shape)
                             * (1 - 0.2 * b) for b in range(B)]))
    return out


def _jvp_of_vmap(op, sample):
    f = as_function(ag, op, sample)
    rng = np.random.default_rng(3)
    xs = _batched(sample, rng)
    ts = [rng.standard_normal(x.shape) for x in xs]
    _, got = jvp(vmap(f), tuple(ag.tensor(x) for x in xs), tuple(ag.tensor(t) for t in ts))
    return f, xs, ts, got


@pytest.mark.parametrize("op,sample", CASES)
def test_jvp_of_vmap_matches_loop(op, sample):
    f, xs, ts, got = _jvp_of_vmap(op, sample)
    for b in range(B):
        _, want = jvp(f, tuple(ag.tensor(x[b]) for x in xs), tuple(ag.tensor(t[b]) for t in ts))
        for i, (g, w) in enumerate(zip(got, want)):
            _close(g[b], w, f"{op.name}: tangent of output {i}, example {b}")


def _spy(monkeypatch, interpreter):
    """The names of the primitives that `interpreter` levels process from now on."""
    used = set()
    original = interpreter.process

    def spy(self, prim, *a):
        used.add(prim.name)
        return original(self, prim, *a)
    monkeypatch.setattr(interpreter, "process", spy)
    return used


def _later_samples(pred):
    """(op, sample) of every sample after each op's first (for primitives that only some
    samples reach, such as a norm's order or a solver's side)."""
    firsts = {id(p.values[1]) for p in first_cases(OPS)}
    for param in cases(OPS, pred):
        op, sample = param.values
        arrays = float_arrays(sample)
        if id(sample) not in firsts and arrays and min(a.size for a in arrays) > 0:
            yield op, sample


# an identity whose derivatives raise (torch's DelayedError), put in the rules of
# scatter_reduce's products: test_tensor_ops checks it; ops torch records without a
# derivative (its NotImplemented grad_fn): test_ops checks them
RAISING = {"once_differentiable", "floor_divide", "heaviside"}


def test_catalogue_runs_every_differentiable_primitive_under_jvp(monkeypatch):
    used = _spy(monkeypatch, JvpInterpreter)
    wanted = {n for n, p in PRIMITIVES.items() if p.differentiable} - RAISING
    for param in CASES:
        op, sample = param.values
        _jvp_of_vmap(op, sample)
    for op, sample in _later_samples(lambda op: op.grad):
        if wanted <= used:
            break
        if has_float_output(op, sample):
            xs = tuple(ag.tensor(a) for a in float_arrays(sample))
            jvp(as_function(ag, op, sample), xs, tuple(ag.ones_like(x) for x in xs))
    missing = sorted(wanted - used)
    assert not missing, f"add ops that use these primitives to tests/op_db.py: {missing}"


# values-only LAPACK routines: ops take them only outside transforms (inside vmap the input is
# a tensor of the level, so svdvals/eigvalsh go through svd/eigh)
OUTSIDE_TRANSFORMS_ONLY = {"linalg_eigvalsh", "linalg_svdvals"}


def test_catalogue_runs_every_batching_rule(monkeypatch):
    used = _spy(monkeypatch, BatchInterpreter)
    wanted = {n for n, p in PRIMITIVES.items() if p.batch is not None}
    wanted -= OUTSIDE_TRANSFORMS_ONLY | RAISING
    for param in first_cases(OPS):
        op, sample = param.values
        vmap(as_function(ag, op, sample))(*(ag.tensor(x) for x in _batched(sample, RNG)))
    for op, sample in _later_samples(lambda op: True):
        if wanted <= used:
            break
        vmap(as_function(ag, op, sample))(*(ag.tensor(x) for x in _batched(sample, RNG)))
    missing = sorted(wanted - used)
    assert not missing, f"add ops that use these primitives to tests/op_db.py: {missing}"
