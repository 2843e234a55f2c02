"""check_function: the project's correct Functions pass every mode they claim; a catalogue of
broken Functions is each caught by the right mode with the right diagnosis; the report's
table, picture and HTML; the command line; GradcheckError.report; graph drawing."""
import contextlib
import importlib.util
import io
import pathlib
import runpy
import shutil
import subprocess
import sys

import numpy as np
import pytest

import arraygrad as ag
from arraygrad.autograd import (Function, check_function, CheckFunctionError, GradcheckError,
                                gradcheck, once_differentiable)
from arraygrad.autograd.check import MODES
from function_db import DB, NumpyCube, ExpSavesOutput, MulScaled, SoftmaxRows, \
    SortWithIndices

ROOT = pathlib.Path(__file__).resolve().parents[1]
SEEDS = ROOT / "examples" / "seeds"


def _seed(file, name):
    with contextlib.redirect_stdout(io.StringIO()):
        return runpy.run_path(str(SEEDS / file))[name]


def _x(*shape, seed=0):
    return ag.tensor(np.random.default_rng(seed).uniform(0.5, 1.5, shape), dtype=ag.float64)


# ----------------------------------------------------------------- correct Functions pass
CATALOGUE = {
    "numpy_cube": (NumpyCube, lambda: (_x(4),)),
    "exp_saves_output": (ExpSavesOutput, lambda: (_x(2, 3),)),
    "mul_scaled": (MulScaled, lambda: (_x(3), _x(3, seed=1), 1.5)),
    "softmax_rows": (SoftmaxRows, lambda: (_x(2, 4),)),
    "sort_values": (SortWithIndices, lambda: (_x(2, 5),)),
}


def test_catalogue_covers_the_function_db():
    assert set(CATALOGUE) == set(DB)


@pytest.mark.parametrize("name", sorted(CATALOGUE))
def test_catalogue_functions_pass(name):
    fn, sample = CATALOGUE[name]
    report = check_function(fn, *sample())
    assert report.passed and report
    assert [r.mode for r in report] == list(MODES)
    # what each claims is checked, not skipped
    assert {r.mode for r in report if r.status == "passed"} >= {
        "backward", "double_backward", "gradcheck", "gradgradcheck", "grad", "vjp", "vmap",
        "vmap_grad", "grad_grad"}


def test_seed_my_cube_passes_and_reports_vmap_not_supported():
    MyCube = _seed("s004_my_cube.py", "MyCube")
    report = check_function(MyCube, ag.randn(3, 4))
    assert report.passed
    vm = report["vmap"]
    assert vm.status == "not supported"
    with pytest.raises(RuntimeError) as e:      # the exact error a user gets
        ag.vmap(lambda x: MyCube.apply(x)[0])(ag.randn(2, 3))
    assert vm.message == f"RuntimeError: {e.value}"
    assert report["grad_grad"].status == report["hessian"].status == "passed"


def test_seed_my_cube_vmap_passes_everything():
    MyCube = _seed("s004_my_cube_vmap.py", "MyCube")
    report = check_function(MyCube, ag.randn(3))
    assert all(r.status == "passed" for r in report), str(report)


def test_seed_numpy_sort():
    NumpySort = _seed("s004_numpy_sort.py", "NumpySort")
    report = check_function(NumpySort, ag.randn(2, 3), 1)
    assert report.passed, str(report)
    assert report["grad_grad"].status == report["jvp_vs_backward"].status == "passed"
    assert report["vmap"].status == report["jacrev"].status == "not supported"
    assert "NumpyTake, but it does not have vmap support" in report["jacrev"].message


def test_seed_numpy_sort_vmap_backward_bug_is_an_error():
    """The seed's vmap example keeps the original's backward, which reads names it never
    defined: every mode that runs backward reports the NameError; vmap itself passes."""
    NumpySort = _seed("s004_numpy_sort_vmap.py", "NumpySort")
    report = check_function(NumpySort, ag.randn(2, 3), 1, raise_on_failure=False)
    assert report["vmap"].status == "passed"
    for mode in ("backward", "grad", "vmap_grad", "jvp_vs_backward"):
        assert report[mode].status == "error"
        assert report[mode].message == ("NameError: name 'ind_inv' is not defined (raised at "
                                        "s004_numpy_sort_vmap.py:39 in backward)")
    assert report["jacfwd"].status == "error"      # deriving a jvp from that backward fails
    assert report["jacfwd"].message.endswith("(raised at s004_numpy_sort_vmap.py:39 in backward)")


def test_scaled_activation_forward_ctx_style_is_not_supported_under_transforms():
    Scaled = _seed("s002_scaled_activation.py", "ScaledActivation")
    for use_relu in (False, True):
        x = ag.tensor([-1.3, -0.4, 0.3, 0.9, 2.0], dtype=ag.float64)
        report = check_function(Scaled, x, 2.5, use_relu)
        assert report.passed
        assert report["backward"].status == report["gradgradcheck"].status == "passed"
        assert report["grad"].status == "not supported"
        assert "must override the setup_context staticmethod" in report["grad"].message


def test_reference_function_compared_in_values_and_gradients():
    MyCube = _seed("s004_my_cube.py", "MyCube")
    report = check_function(MyCube, _x(3), reference=lambda x: (x ** 3, 3 * x ** 2),
                            modes=["backward", "grad"])
    assert [r.mode for r in report] == ["values", "backward", "grad"] and report.passed
    report = check_function(MyCube, _x(3), reference=lambda x: (x ** 3, 2 * x ** 2),
                            modes=["backward"], raise_on_failure=False)
    assert report["values"].status == "failed"
    assert report["backward"].status == "failed"      # the dx output's Jacobian differs too


# ----------------------------------------------------------------- broken Functions are caught
class WrongFactor(Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return x ** 3

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * 2 * x ** 2           # 3 x^2


class SignFlip(WrongFactor):
    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return -3 * g * x ** 2


class Transposed(Function):
    """y = x @ w with backward g @ w (should be g @ w.T)."""
    generate_vmap_rule = True

    @staticmethod
    def forward(x, w):
        return x @ w

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(*inputs)

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        return g @ w, x.mT @ g


class MissingReduction(Function):
    """y = x * b with b broadcast over rows; backward returns b's gradient unreduced."""
    generate_vmap_rule = True

    @staticmethod
    def forward(x, b):
        return x * b

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(*inputs)

    @staticmethod
    def backward(ctx, g):
        x, b = ctx.saved_tensors
        return g * b, g * x


class WrongOutDims(Function):
    @staticmethod
    def forward(x):
        return x.sin()

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * x.cos()

    @staticmethod
    def vmap(info, in_dims, x):
        return WrongOutDims.apply(x.movedim(in_dims[0], 0)), 1     # the batch dim is at 0


class IgnoresInDims(WrongOutDims):
    @staticmethod
    def vmap(info, in_dims, x):
        return IgnoresInDims.apply(x), 0


class JvpDisagrees(Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return x.exp()

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)
        ctx.save_for_forward(output)

    @staticmethod
    def backward(ctx, g):
        y, = ctx.saved_tensors
        return g * y

    @staticmethod
    def jvp(ctx, t):
        y, = ctx.saved_tensors
        return 2 * t * y


class OnceDifferentiable(Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return x.exp()

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        y, = ctx.saved_tensors
        return g * y


class StateOnCtx(Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return x ** 2

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.x = inputs[0]

    @staticmethod
    def backward(ctx, g):
        return 2 * g * ctx.x


# name -> (Function, inputs, {mode that must fail: words its diagnosis must contain})
BROKEN = {
    "wrong_factor": (WrongFactor, lambda: (_x(3, 2),),
                     {"backward": "0.666667 * expected", "grad": "constant factor",
                      "gradcheck": "constant factor", "vjp": "constant factor"}),
    "sign_flip": (SignFlip, lambda: (_x(4),), {"backward": "-expected: a sign error"}),
    "transposed": (Transposed, lambda: (_x(3, 4), _x(4, 4, seed=1)),
                   {"backward": "transposed Jacobian", "jacrev": "transposed Jacobian"}),
    "missing_broadcast_reduction": (MissingReduction, lambda: (_x(3, 4), _x(4, seed=1)),
                                    {"backward": "missing sum over a broadcast dim",
                                     "grad": "missing sum over a broadcast dim"}),
    "wrong_out_dims": (WrongOutDims, lambda: (_x(3, 4),),
                       {"vmap": "wrong out_dims: in the vmap result, the batch dim of output 0 is "
                                "at dim 1, not at 0"}),
    "ignores_in_dims": (IgnoresInDims, lambda: (_x(3, 4),),
                        {"vmap": "its vmap staticmethod ignores in_dims: right for in_dims=(0,), "
                                 "wrong for [(1,)]"}),
    "jvp_inconsistent": (JvpDisagrees, lambda: (_x(5),),
                         {"jvp_vs_backward": "jvp and backward disagree",
                          "forward_ad": "the jvp staticmethod is wrong",
                          "jvp": "the jvp staticmethod is wrong", "jacfwd": "constant factor"}),
    "once_differentiable": (OnceDifferentiable, lambda: (_x(4),),
                            {"double_backward": "backward is marked @once_differentiable",
                             "gradgradcheck": "backward is marked @once_differentiable",
                             "grad_grad": "backward is marked @once_differentiable"}),
    "state_on_ctx": (StateOnCtx, lambda: (_x(4),),
                     {"grad": "state on ctx",
                      "backward": "(StateOnCtx: ctx.x holds an input or output)"}),
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_broken_function_is_caught(name):
    fn, sample, expected = BROKEN[name]
    report = check_function(fn, *sample(), raise_on_failure=False)
    assert not report.passed and not report
    for mode, words in expected.items():
        r = report[mode]
        assert r.status == "failed", f"{mode}: {r.status} {r.message}\n{report}"
        assert r.diagnosis and words in r.diagnosis, f"{mode}: {r.diagnosis!r}"
    text = str(report)
    assert "result: FAILED" in text and f"[{next(iter(expected))}] failed" in text
    with pytest.raises(CheckFunctionError) as e:
        check_function(fn, *sample(), modes=list(expected))
    assert isinstance(e.value, GradcheckError) and not e.value.report.passed


def test_jvp_inconsistent_names_which_side_is_wrong():
    r = check_function(JvpDisagrees, _x(3), modes="jvp_vs_backward", raise_on_failure=False)
    assert r["jvp_vs_backward"].diagnosis.endswith("backward agrees with the finite differences")
    m = r["jvp_vs_backward"].mismatches[0]
    np.testing.assert_allclose(m.got, 2 * m.expected)


def test_failure_lists_worst_entries():
    text = str(check_function(WrongFactor, _x(3, 2), modes=["backward"], raise_on_failure=False))
    assert "output 0 w.r.t. input 0: 6 of 36 entries differ" in text
    assert "input 0[" in text and "] -> output 0[" in text and "finite differences" in text


def test_modes_subset_and_bad_arguments():
    r = check_function(ExpSavesOutput, _x(2), modes=["vmap", "jacfwd"])
    assert [m.mode for m in r] == ["vmap", "jacfwd"] and r.passed
    with pytest.raises(ValueError, match="unknown mode"):
        check_function(ExpSavesOutput, _x(2), modes=["jvpp"])
    with pytest.raises(TypeError, match="autograd.Function subclass"):
        check_function(lambda x: x, _x(2))
    with pytest.raises(ValueError, match="no floating-point tensor"):
        check_function(ExpSavesOutput, ag.tensor([1, 2]))


def test_error_status_for_an_unexpected_exception():
    class Raises(ExpSavesOutput):
        @staticmethod
        def backward(ctx, g):
            raise ValueError("boom")
    r = check_function(Raises, _x(2), modes=["backward"], raise_on_failure=False)
    assert r["backward"].status == "error"
    assert r["backward"].message.startswith("ValueError: boom (raised at test_check_function.py:")


def test_no_jvp_and_no_derivation_is_not_supported():
    class NoJvp(ExpSavesOutput):
        jvp_from_backward = False
    r = check_function(NoJvp, _x(2), modes=["forward_ad", "jvp", "jacfwd", "backward"])
    assert r.passed and r["backward"].status == "passed"
    for mode in ("forward_ad", "jvp", "jacfwd"):
        assert r[mode].status == "not supported"
        assert r[mode].message == ("NotImplementedError: You must implement the jvp function "
                                   "for custom autograd.Function to use it with forward mode AD.")


# ----------------------------------------------------------------- picture and HTML
def test_report_plot_and_html(tmp_path):
    pytest.importorskip("matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    report = check_function(Transposed, _x(2, 3), _x(3, 3, seed=1), modes=["backward", "jvp"],
                            raise_on_failure=False)
    path = tmp_path / "report.png"
    fig = report.plot(path)
    assert path.exists() and path.stat().st_size > 1000
    assert len(fig.axes) >= 3
    html = report._repr_html_()
    assert "<table>" in html and "transposed Jacobian" in html and "failed" in html
    with pytest.raises(ValueError, match="nothing to draw"):
        check_function(ExpSavesOutput, _x(2), modes=["backward"]).plot()


def test_gradcheck_error_report_plot(tmp_path):
    pytest.importorskip("matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    with pytest.raises(GradcheckError) as e:
        gradcheck(WrongFactor.apply, (_x(3).requires_grad_(),))
    rep = e.value.report
    m = rep.results[0].mismatches[0]
    np.testing.assert_allclose(m.got, m.expected * 2 / 3, rtol=1e-4)
    path = tmp_path / "gc.png"
    rep.plot(path)
    assert path.stat().st_size > 1000


# ----------------------------------------------------------------- command line
def _cli(*args, cwd):
    env = {"PYTHONPATH": f"{ROOT / 'src'}:{cwd}", "PATH": "/usr/bin:/bin", "MPLBACKEND": "Agg"}
    return subprocess.run([sys.executable, "-m", "arraygrad.check", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def test_cli_exit_status_and_output(tmp_path):
    (tmp_path / "myfns.py").write_text(
        "import arraygrad as torch\n"
        "class Good(torch.autograd.Function):\n"
        "    generate_vmap_rule = True\n"
        "    @staticmethod\n"
        "    def forward(x, k):\n        return x.sin() * k\n"
        "    @staticmethod\n"
        "    def setup_context(ctx, inputs, output):\n"
        "        ctx.save_for_backward(inputs[0]); ctx.k = inputs[1]\n"
        "    @staticmethod\n"
        "    def backward(ctx, g):\n"
        "        x, = ctx.saved_tensors\n        return g * x.cos() * ctx.k, None\n"
        "class Bad(Good):\n"
        "    @staticmethod\n"
        "    def backward(ctx, g):\n"
        "        x, = ctx.saved_tensors\n        return -g * x.cos() * ctx.k, None\n"
        "def reference(x, k):\n    return x.sin() * k\n")
    ok = _cli("myfns.py:Good", "--inputs", "randn(3, 4)", "2.0", "--reference", "myfns:reference",
              cwd=tmp_path)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "check_function(Good(float32[3, 4], 2.0))" in ok.stdout
    assert "\nvalues  " in ok.stdout and "\njacfwd  " in ok.stdout
    assert "result: passed" in ok.stdout and ok.stderr == ""
    bad = _cli("myfns:Bad", "--inputs", "randn(3, 4)", "2.0", "--modes", "backward", "vmap",
               "--plot", "bad.png", cwd=tmp_path)
    assert bad.returncode == 1
    assert "sign error" in bad.stdout and "result: FAILED (1 of 2 modes)" in bad.stdout
    if importlib.util.find_spec("matplotlib") is not None:
        assert (tmp_path / "bad.png").stat().st_size > 1000
    missing = _cli("myfns:Nope", "--inputs", "randn(3)", cwd=tmp_path)
    assert missing.returncode == 2 and "module 'myfns' has no Function 'Nope'" in missing.stderr
    bad_input = _cli("myfns:Good", "--inputs", "randn(3", cwd=tmp_path)
    assert bad_input.returncode == 2 and "--inputs" in bad_input.stderr


# ----------------------------------------------------------------- graph drawing
def _model_graph():
    lin = ag.nn.Linear(3, 2).double()
    x = ag.randn(4, 3, dtype=ag.float64)
    y = ExpSavesOutput.apply(lin(x)).sum()
    return y, dict(lin.named_parameters())


def test_draw_graph_source():
    pytest.importorskip("graphviz")
    from arraygrad.utils import draw_graph
    y, params = _model_graph()
    dot = draw_graph(y, params=params, show_saved=True)
    src = dot.source
    assert "SumBackward0" in src and "ExpSavesOutputBackward" in src
    assert "(custom Function)" in src
    assert "weight\n(2, 3)" in src.replace("\\n", "\n") and "bias" in src
    assert "float64" in src                           # saved tensors: shape and dtype
    assert src.count("->") >= 5


def test_draw_graph_renders_with_dot(tmp_path):
    pytest.importorskip("graphviz")
    if shutil.which("dot") is None:
        pytest.skip("rendering needs the graphviz `dot` program")
    from arraygrad.utils import draw_graph
    y, params = _model_graph()
    out = draw_graph(y, params=params).render(str(tmp_path / "g"), format="svg")
    assert pathlib.Path(out).stat().st_size > 500


def test_print_graph():
    from arraygrad.utils import print_graph
    y, params = _model_graph()
    buf = io.StringIO()
    print_graph(y, params=params, show_saved=True, file=buf)
    lines = buf.getvalue().splitlines()
    assert lines[0].startswith("SumBackward0")
    assert any("ExpSavesOutputBackward (custom Function)" in s for s in lines)
    assert any("weight (2, 3)" in s for s in lines)
    assert any("saved 0: (4, 2) float64" in s for s in lines)
    assert sum("(shown above)" in s for s in lines) == 0     # a tree here
