"""The primitive registry: one declaration per primitive, every rule present, the coverage page
current, and missing rules named in the errors."""
import os
import sys

import pytest

import arraygrad as ag
from arraygrad import coverage
from arraygrad.core.dispatch import Primitive
from arraygrad.func import jvp, vmap
from arraygrad.ops import registry
from arraygrad.ops.registry import PRIMITIVES, primitive

DOC = os.path.join(os.path.dirname(__file__), os.pardir, "docs", "coverage.md")

# data-dependent output shapes (or, for searchsorted, a per-row boundary search): vmap runs
# them only through the per-example loop fallback
NO_BATCH_RULE = {"unique", "unique_consecutive"}


def test_coverage_page_is_current():
    with open(DOC, encoding="utf-8") as f:
        assert f.read() == coverage.markdown(), \
            "docs/coverage.md is stale: run `python -m arraygrad.coverage --write docs/coverage.md`"


def test_every_primitive_of_the_package_is_registered():
    """A primitive made with `Primitive(...)` in a module would escape the coverage tests."""
    loose = set()
    for name, mod in list(sys.modules.items()):
        if name.split(".")[0] != "arraygrad":
            continue
        for v in vars(mod).values():
            p = v if isinstance(v, Primitive) else getattr(v, "prim", None)
            if type(p) is Primitive and PRIMITIVES.get(p.name) is not p:
                loose.add(f"{name}: {p.name}")
    assert not loose, f"declare these with ops.registry.primitive(...): {sorted(loose)}"


# results require grad, derivatives raise: torch's NotImplemented grad_fn (test_ops checks it)
NO_DERIVATIVE = {"floor_divide", "heaviside"}


def test_every_differentiable_primitive_has_vjp_and_jvp_rules():
    missing = {n for n, p in PRIMITIVES.items()
               if p.differentiable and (p.vjp is None or p.jvp is None)}
    assert missing == NO_DERIVATIVE, f"primitives without a vjp or jvp rule: {sorted(missing)}"


def test_primitives_without_a_batching_rule_are_the_known_ones():
    assert {n for n, p in PRIMITIVES.items() if p.batch is None} == NO_BATCH_RULE


def test_a_name_is_declared_once(monkeypatch):
    monkeypatch.setattr(registry, "PRIMITIVES", dict(PRIMITIVES))
    with pytest.raises(ValueError, match="'exp' is already declared"):
        primitive("exp", lambda xp, x: x)


def test_isclose_all_any_use_their_declared_primitives():
    before = dict(PRIMITIVES)
    x = ag.tensor([1.0, 2.0, float("nan")])
    assert ag.isclose(x, x + 1e-9, equal_nan=True).tolist() == [True, True, True]
    assert not ag.isclose(x, x + 1e-9).all() and ag.isclose(x, x).any()
    assert ag.isclose(x, x + 0.5, rtol=0.0, atol=1.0).tolist() == [True, True, False]
    assert PRIMITIVES == before


def test_flags_give_the_rules():
    double = Primitive("double", lambda xp, x: 2 * x, vjp=(lambda ctx, g: 2 * g,), linear=True)
    _, t = jvp(double, (ag.tensor([1.0, 2.0]),), (ag.tensor([3.0, 4.0]),))
    assert t.tolist() == [6.0, 8.0]
    step = Primitive("step", lambda xp, x: xp.floor(x), zero_derivative=True)
    x = ag.tensor([0.5, 1.5], requires_grad=True)
    step(x).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0]
    assert jvp(step, (x.detach(),), (ag.ones(2),))[1].tolist() == [0.0, 0.0]


@pytest.mark.parametrize("kw", [dict(linear=True, jvp=(None,)),
                                dict(zero_derivative=True, vjp=(None,)),
                                dict(linear=True, zero_derivative=True)])
def test_flags_and_rules_do_not_mix(kw):
    with pytest.raises(TypeError, match="primitive 'p'"):
        Primitive("p", lambda xp, x: x, **kw)


def test_a_batching_rule_gets_the_primitive():
    seen = []

    def rule(prim, args, bdims, **params):
        seen.append(prim)
        return prim(args[0].movedim(bdims[0], 0), **params), 0

    p = Primitive("p", lambda xp, x, k: x * k, batch=rule)
    assert vmap(lambda x: p(x, k=3.0), in_dims=1)(ag.ones(2, 3)).tolist() == [[3.0] * 2] * 3
    assert seen == [p]


def test_missing_rules_name_the_primitive_and_the_rule():
    bare = Primitive("bare_op", lambda xp, x: x * 2)
    x = ag.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="'bare_op' has no vjp rule"):
        bare(x).sum().backward()
    with pytest.raises(NotImplementedError, match="forward AD with bare_op .* no jvp rule"):
        jvp(bare, (ag.ones(2),), (ag.ones(2),))
    with pytest.raises(NotImplementedError, match="primitive 'bare_op' has no batching rule"):
        vmap(bare)(ag.ones(3, 2))
