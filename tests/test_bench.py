"""bench/run.py: every row runs in quick mode and its contenders agree (not timed)."""
import importlib.util
import json
import pathlib

RUN = pathlib.Path(__file__).parent.parent / "bench" / "run.py"


def test_every_row_runs_and_agrees_in_quick_mode(tmp_path):
    spec = importlib.util.spec_from_file_location("bench_run", RUN)
    run = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(run)
    out = tmp_path / "bench.json"
    run.main(["--quick", "--libs", "arraygrad,numpy", "--json", str(out)])
    rows = json.loads(out.read_text())["rows"]
    assert [r["key"] for r in rows] == [r.key for r in run.ROWS]
    for r in rows:
        assert r["results"]["arraygrad"]["rounds"] == 1 and r["results"]["arraygrad"]["min"] > 0


def test_compiled_core_module_lists_name_existing_modules():
    """bench/compiled.py compiles modules by path: a module moved or renamed must be noticed."""
    spec = importlib.util.spec_from_file_location("bench_compiled", RUN.with_name("compiled.py"))
    compiled = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(compiled)
    src = RUN.parent.parent / "src" / "arraygrad"
    for name, modules in compiled.SETS.items():
        missing = [m for m in modules if not (src / (m + ".py")).is_file()]
        assert not missing, f"compiled.py's {name} set names missing modules {missing}"


def test_cold_cache_probe_prints_each_way_of_calling_a_row():
    """bench/cold.py runs a row's contenders its four ways and prints one line for each."""
    import subprocess
    import sys
    out = subprocess.run([sys.executable, str(RUN.with_name("cold.py")), "function_grad",
                          "--calls", "2"], capture_output=True, text=True, check=True).stdout
    lines = [ln for ln in out.splitlines() if ln.startswith("| ") and "how it was called" not in ln]
    assert len(lines) == 4 and all(float(ln.split("|")[2]) > 0 for ln in lines), out
