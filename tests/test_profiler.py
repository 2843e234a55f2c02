"""autograd.profiler: a per-op timing table of forward ops, backward nodes and named blocks."""
import json
import time
import warnings

import pytest

import arraygrad as ag
from arraygrad.autograd import engine
from arraygrad.autograd.profiler import profile, record_function
from arraygrad.autograd import eager
from arraygrad.core import dispatch


class Double(ag.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2


def _profiled_step(record_shapes=False):
    x = ag.randn(20, 20, requires_grad=True)
    with profile(record_shapes=record_shapes) as prof:
        with record_function("block"):
            y = Double.apply(x @ x).relu().sum()
        y.backward()
    return prof


def test_table_counts_forward_ops_backward_nodes_and_blocks():
    prof = _profiled_step()
    avg = {e.key: e for e in prof.key_averages()}
    assert avg["matmul"].count == 3                     # forward, and two in MmBackward0
    for key in ("block", "Double", "relu", "sum", "MmBackward0", "ReluBackward0",
                "SumBackward0", "DoubleBackward"):
        assert avg[key].count == 1, key
    # nesting: the Function's forward holds its mul; MmBackward0 holds its two matmuls
    events = prof.function_events
    double = next(e for e in events if e.name == "Double")
    assert [c.name for c in double.cpu_children] == ["mul"]
    mm_back = next(e for e in events if e.name == "MmBackward0")
    assert [c.name for c in mm_back.cpu_children].count("matmul") == 2
    for e in events:
        assert e.cpu_time_total >= sum(c.cpu_time_total for c in e.cpu_children) >= 0
        assert e.self_cpu_time_total >= 0
    top = [e for e in events if e.cpu_parent is None]
    assert prof.self_cpu_time_total == pytest.approx(sum(e.cpu_time_total for e in top))
    assert prof.total_average().count == len(events)


def _us(cell):
    """'1.5ms' -> 1500.0 (the table's time format)."""
    for unit, scale in (("us", 1.0), ("ms", 1e3), ("s", 1e6)):
        if cell.endswith(unit):
            return float(cell[:-len(unit)]) * scale
    raise ValueError(cell)


def test_table_layout_matches_torch(torch):
    x = torch.randn(8, 8, requires_grad=True)
    with torch.autograd.profiler.profile() as ref:
        (x @ x).sum().backward()
    want = ref.key_averages().table(sort_by="cpu_time_total").splitlines()
    got = _profiled_step().key_averages().table(sort_by="cpu_time_total").splitlines()
    assert got[1].split() == want[1].split()             # the column headers
    assert got[-1].startswith("Self CPU time total: ")
    assert want[-1].startswith("Self CPU time total: ")
    totals = [_us(r.split()[4]) for r in got[3:-2]]
    assert totals and totals == sorted(totals, reverse=True)   # by CPU total, largest first
    limited = _profiled_step().key_averages().table(sort_by="count", row_limit=2)
    assert len(limited.splitlines()) == 3 + 2 + 2
    assert limited.splitlines()[3].split()[0] == "matmul"


def test_shapes_column_when_grouped_by_input_shape():
    prof = _profiled_step(record_shapes=True)
    groups = prof.key_averages(group_by_input_shape=True)
    mm = [e for e in groups if e.key == "matmul"]
    assert sorted(str(e.input_shapes) for e in mm) == ["[[20, 20], [20, 20]]"] * len(mm)
    assert "Input Shapes" in groups.table()


def test_timings_are_measured():
    with profile() as prof:
        with record_function("sleep"):
            time.sleep(0.02)
        x = ag.ones(400, 400)
        t0 = time.perf_counter()
        x @ x
        outside = (time.perf_counter() - t0) * 1e6
    sleep = next(e for e in prof.function_events if e.name == "sleep")
    assert 20000 <= sleep.cpu_time_total < 2e6
    mm = next(e for e in prof.function_events if e.name == "matmul")
    assert 0 < mm.cpu_time_total <= outside


def test_hooks_cost_nothing_when_off():
    plain_eager, plain_apply = dispatch._eager, engine._apply
    assert plain_eager is eager.process
    with pytest.raises(ValueError):
        with profile():
            assert dispatch._eager is not plain_eager and engine._apply is not plain_apply
            raise ValueError("boom")
    assert dispatch._eager is plain_eager and engine._apply is plain_apply
    with profile(enabled=False) as prof:
        ag.ones(2) + 1
    assert dispatch._eager is plain_eager


def test_record_function_decorator_and_without_profiler():
    @record_function("helper")
    def helper(x):
        return x.exp()

    assert helper(ag.zeros(1)).item() == 1.0           # no profiler: just runs
    with profile() as prof:
        helper(ag.zeros(1))
    helper_ev = next(e for e in prof.function_events if e.name == "helper")
    assert [c.name for c in helper_ev.cpu_children] == ["exp"]


def test_profiler_errors(torch, tmp_path):
    prof = profile()
    with pytest.raises(RuntimeError, match="after the profiled block"):
        prof.key_averages()
    with profile():
        with pytest.raises(RuntimeError, match="already running"):
            with profile():
                pass
    prof = _profiled_step()
    for p in (prof, None):
        if p is None:
            with torch.autograd.profiler.profile() as p:
                torch.ones(2) + 1
        with pytest.raises(AttributeError):
            p.key_averages().table(sort_by="no_such_column")
    with pytest.warns(UserWarning, match="not available"):
        with profile(use_cuda=True):
            ag.ones(2) + 1
    with pytest.warns(UserWarning, match="profile_memory"):
        profile(profile_memory=True)
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())["traceEvents"]
    assert {e["name"] for e in trace} >= {"matmul", "MmBackward0", "block"}
    assert all(e["ph"] == "X" and e["dur"] >= 0 for e in trace)


# ----------------------------------------------------------------- torch.profiler
SCHEDULES = [dict(wait=1, warmup=1, active=2), dict(wait=0, warmup=2, active=1, repeat=2),
             dict(wait=2, warmup=1, active=3, repeat=1, skip_first=3),
             dict(wait=3, warmup=1, active=1, skip_first_wait=1)]


@pytest.mark.parametrize("kw", SCHEDULES)
def test_schedule_and_windows_match_torch_profiler(torch, kw):
    def run(L):
        traces = []
        on_ready = lambda p: traces.append(
            [e.name for e in p.events() if e.name.startswith("step")])
        with L.profiler.profile(activities=[L.profiler.ProfilerActivity.CPU],
                                schedule=L.profiler.schedule(**kw),
                                on_trace_ready=on_ready) as prof:
            for i in range(12):
                with L.profiler.record_function(f"step{i}"):
                    L.ones(3) + 1
                prof.step()
        actions = [L.profiler.schedule(**kw)(i).name for i in range(15)]
        return traces, actions
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")         # torch's note on clearing events per cycle
        want = run(torch)
    got = run(ag)
    assert got == want and got[0]


def test_torch_profiler_without_schedule_records_the_block():
    from arraygrad.profiler import ProfilerActivity, profile as tprofile
    with tprofile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        ag.ones(4, 4) @ ag.ones(4, 4)
    avg = {e.key: e for e in prof.key_averages(group_by_input_shape=True)}
    assert avg["matmul"].count == 1 and avg["matmul"].input_shapes == [[4, 4], [4, 4]]
    with pytest.warns(UserWarning, match="CUDA is not available"):
        tprofile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
    with pytest.raises(RuntimeError, match="no recorded window"):
        tprofile().key_averages()
    assert dispatch._eager is eager.process


def test_tensorboard_trace_handler_writes_one_trace_per_window(tmp_path):
    from arraygrad.profiler import profile as tprofile, schedule, tensorboard_trace_handler
    with tprofile(schedule=schedule(wait=0, warmup=1, active=1),
                  on_trace_ready=tensorboard_trace_handler(str(tmp_path), "w0")) as prof:
        for _ in range(4):
            ag.ones(2) * 2
            prof.step()
    files = sorted(tmp_path.iterdir())
    assert len(files) == 2 and all(f.name.startswith("w0.") and f.name.endswith(
        ".pt.trace.json") for f in files)
    names = [e["name"] for e in json.loads(files[0].read_text())["traceEvents"]]
    assert names == ["mul"]
