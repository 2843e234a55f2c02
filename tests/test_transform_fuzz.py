"""The differential fuzzer of transform compositions (tests/transform_fuzz.py) as tests.

Runs the first `ARRAYGRAD_FUZZ_CASES` seeded cases (default 200) against torch and finite
differences; a failure prints the case as a runnable program with both results. Cases of
mismatch families still open are `xfail(strict=True)`, so that their fix flips them.
"""
import os
import warnings

import numpy as np
import pytest

import arraygrad as ag
import transform_fuzz as tf

N_CASES = int(os.environ.get("ARRAYGRAD_FUZZ_CASES", "200"))

# case index -> why it still mismatches; a fix flips it (none open in the suite's range)
XFAIL = {}


def _param(i):
    marks = [pytest.mark.xfail(strict=True, reason=XFAIL[i])] if i in XFAIL else []
    return pytest.param(i, id=f"case{i:04d}", marks=marks)


@pytest.mark.parametrize("index", [_param(i) for i in range(N_CASES)])
def test_transform_composition_matches_torch(torch, index):
    case = tf.generate(index)
    verdict = tf.run_case(case, ag, torch)
    assert not verdict.mismatch, tf.report(case, verdict)


# ----------------------------------------------------------------- the fuzzer itself
def test_cases_are_deterministic():
    assert [tf.generate(i).source() for i in range(20)] == \
        [tf.generate(i).source() for i in range(20)]
    kinds = {k for i in range(300) for k, _ in tf.generate(i).transforms}
    assert kinds == set(tf.TRANSFORMS)


def test_repro_runs_standalone_with_both_libraries(torch):
    """The printed repro is the whole program: it runs as is and gives torch's value."""
    case = next(c for c in map(tf.generate, range(100))
                if tf.run_case(c, ag, torch).kind == "ok" and len(c.transforms) >= 2)
    outs = {}
    for lib in ("torch", "arraygrad"):
        ns = {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore" if lib == "torch" else "error")
            exec(case.source(lib).replace("print(out)", ""), ns)
        outs[lib] = ns["out"].detach().numpy()
    np.testing.assert_allclose(outs["arraygrad"], outs["torch"], rtol=1e-9)


# cases where torch's value is not the derivative: finite differences at two step sizes and
# arraygrad agree with each other, not with torch
TORCH_DISAGREES = {2: "vjp of a dual level over jacrev of linalg.det after an index write: "
                      "torch -3.09605, finite differences and arraygrad -2.91942"}


def test_finite_differences_agree_with_torch(torch):
    """The oracle used where torch refuses is itself checked against torch (with vmap as a
    loop: torch's vmap misplaces outputs that do not depend on the batched inputs)."""
    checked = 0
    for i in range(60):
        case = tf.generate(i)
        theirs = tf.isolated(lambda: tf._torch_outcome(case, torch, loop=True))
        if theirs.error or tf.torch_known_wrong(case) or tf._stops_gradients(case) or \
                i in TORCH_DISAGREES:
            continue
        fd = tf.execute(case, torch, numeric=True)
        if fd.error and "too costly" in fd.error:
            continue
        assert fd.error is None, (case.name, fd.error)
        assert tf._fd_close(theirs.value, fd.value, tf.fd_order(case)), \
            tf.report(case, tf.Verdict("fd", "", fd=fd, theirs=theirs))
        checked += 1
    assert checked >= 30


def test_a_planted_bug_is_caught_and_minimized(torch, monkeypatch):
    """A wrong derivative of `*` in arraygrad is found as a value mismatch and shrunk."""
    cases = [c for c in map(tf.generate, range(40))
             if len(c.transforms) == 1 and c.transforms[0][0] in ("grad", "jacrev", "vjp")]
    cases = [c for c in cases if tf.run_case(c, ag, torch).kind == "ok"]
    real_mul = ag.Tensor.__mul__
    monkeypatch.setattr(ag.Tensor, "__mul__",
                        lambda self, o: real_mul(self, o) + (self - self.detach()) / 100)
    found = [c for c in cases if tf.run_case(c, ag, torch).kind == "values"]
    assert found
    small = tf.minimize(found[0], ag, torch, "values")
    assert len(small.steps) <= len(found[0].steps) and small.render() is not None
    assert "# torch:" in tf.report(small, tf.run_case(small, ag, torch))


# Cases of the first generator's sweep where torch is wrong or finite differences are no
# oracle, pinned so that the verdicts keep telling them from arraygrad's bugs
_PINNED = {
    "vmap_out_dims_of_an_unbatched_output": (tf.Case(
        2398, (), (), [tf.Step(["{o} = (-y * y).exp()"], ())], [("vmap", 973441079)],
        x_grad=True), "torch_wrong"),
    "vmap_out_dims_of_a_broadcast_output": (tf.Case(
        3525, (2,), (2,), [tf.Step(["{o} = Cube.apply(y)"], (2,)),
                           tf.Step(["{o} = T.ones((2,), dtype=f64)", "{o}.mul_(v0)"], (2,)),
                           tf.Step(["with T.no_grad():", "    {o} = v0.sin() * y"], (2,))],
        [("vmap", 1130934918)]), "torch_wrong"),
    "linearize_of_inplace_under_vmap": (tf.Case(
        242, (), (2, 3), [tf.Step(["{o} = y.clone()", "{o}.mul_(y)"], (2, 3)),
                          tf.Step(["{o} = v0 * 1.0", "{o}[...].add_(v0.mean())"], (2, 3)),
                          tf.Step(["{o} = Cube.apply(v1)"], (2, 3))],
        [("vmap", 666792087), ("linearize", 148965866)]), "ok"),
    "third_derivative_of_a_quadratic": (tf.Case(
        987, (3,), (3,), [tf.Step(["{o} = y * y"], (3,)),
                          tf.Step(["{o} = x.clone()", "{o}.div_(v0 * v0 + 1)"], (3,))],
        [("hessian", 940610588), ("jvp", 23982531), ("dual", 854516150)]), "torch_refuses"),
    "finite_differences_across_a_jump": (tf.Case(
        2738, (3,), (2, 3), [tf.Step(["{o} = x.abs()"], (3,)),
                             tf.Step(["{o} = v0.masked_fill(v0 > 0.3, 0.0)"], (3,)),
                             tf.Step(["{o} = T.cat([v0, v1], -1)"], (6,))],
        [("dual", 587119249), ("linearize", 1715417274)]), "unchecked"),
}


@pytest.mark.parametrize("name", list(_PINNED))
def test_known_torch_bugs_and_oracle_limits_are_not_mismatches(torch, name):
    case, kind = _PINNED[name]
    verdict = tf.run_case(case, ag, torch)
    assert verdict.kind == kind, tf.report(case, verdict)
