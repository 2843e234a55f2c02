"""Backends for other array libraries load only when their arrays (or "cuda") are first met,
and "cuda" without a GPU answers as torch's builds do: no GPU here runs the CuPy backend
itself (test_cupy.py does where one exists), so this checks everything short of a device."""
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import arraygrad as ag

_SRC = str(Path(__file__).parent.parent / "src")


def _run(code, extra_path=None):
    path = [p for p in (extra_path, _SRC) if p]
    code = f"import sys; sys.path[:0] = {path!r}\n" + textwrap.dedent(code)
    out = subprocess.run([sys.executable, "-W", "error", "-c", code], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_import_and_cpu_work_load_no_other_library():
    _run("""
        import arraygrad as ag
        x = ag.ones(3, requires_grad=True)
        (x * 2).sum().backward()
        others = ("dask", "cupy", "array_api_strict", "arraygrad.backends.dask_backend")
        for name in others + ("arraygrad.backends.cupy_backend",
                              "arraygrad.backends.array_api_backend"):
            assert name not in sys.modules, name
        assert ag.cuda.is_available() is False and ag.cuda.device_count() == 0
        assert "arraygrad.backends.cupy_backend" in sys.modules       # asked, found no CuPy
        for name in others:
            assert name not in sys.modules, name
        """)


def test_cupy_without_a_gpu_answers_no(tmp_path):
    """A CuPy install on a machine without a driver: CuPy's runtime raises CUDARuntimeError
    when asked for devices (this stand-in does only that; it has no arrays)."""
    (tmp_path / "cupy").mkdir()
    (tmp_path / "cupy" / "__init__.py").write_text(textwrap.dedent("""
        import types
        class CUDARuntimeError(RuntimeError):
            pass
        def _no_driver():
            raise CUDARuntimeError("cudaErrorNoDevice: no CUDA-capable device is detected")
        cuda = types.SimpleNamespace(runtime=types.SimpleNamespace(
            CUDARuntimeError=CUDARuntimeError, getDeviceCount=_no_driver))
        """))
    _run("""
        import arraygrad as ag
        assert ag.cuda.is_available() is False and ag.cuda.device_count() == 0
        for make in (lambda: ag.zeros(2, device="cuda"), lambda: ag.ones(2).cuda(),
                     lambda: ag.ones(2).to("cuda:0")):
            try:
                make()
            except RuntimeError as e:
                assert "No CUDA GPUs are available" in str(e), e
            else:
                raise AssertionError("no error")
        assert ag.ones(2).cpu().device.type == "cpu"
        """, str(tmp_path))


def test_mixing_libraries_raises_torch_error_both_ways():
    xp, da = pytest.importorskip("array_api_strict"), pytest.importorskip("dask.array")
    strict, lazy = ag.tensor(xp.asarray(np.ones(3))), ag.from_dask(da.ones(3, chunks=2))
    for a, b in ((strict, lazy), (lazy, strict)):
        with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
            a + b
    # as torch's cpu scalars join a GPU op: NumPy data joins a Dask graph, a 0-dim array any op
    assert isinstance((lazy + ag.ones(3))._data, da.Array)
    assert isinstance((strict + ag.tensor(2.0))._data, type(xp.asarray(0)))
