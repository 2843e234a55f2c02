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
    """bench/cold.py times a row's contenders each way and prints one line for each; a row
    it does not know is refused by its argument parser."""
    import subprocess
    import sys
    cold = [sys.executable, str(RUN.with_name("cold.py"))]
    out = subprocess.run(cold + ["function_grad", "--calls", "2"], capture_output=True,
                         text=True, check=True).stdout
    lines = [ln for ln in out.splitlines() if ln.startswith("| ") and "how it was" not in ln]
    has_torch = importlib.util.find_spec("torch") is not None
    assert len(lines) == 3 + has_torch and all(float(ln.split("|")[2]) > 0 for ln in lines), out
    bad = subprocess.run(cold + ["no_such_row"], capture_output=True, text=True)
    assert bad.returncode == 2 and "invalid choice: 'no_such_row'" in bad.stderr
