"""torch.device, cuda/accelerator queries and `device=` arguments, against torch's CPU build."""
import pickle

import pytest

import arraygrad as ag


def test_device_objects_as_torch(torch):
    for spec in ["cpu", "cpu:0", "cuda:1", "meta"]:
        a, t = ag.device(spec), torch.device(spec)
        assert (repr(a), str(a), a.type, a.index) == (repr(t), str(t), t.type, t.index)
    assert ag.device("cuda", 2) == ag.device("cuda:2")
    assert ag.device("cpu") != ag.device("cpu:0") and (ag.device("cpu") == "cpu") is False
    assert len({ag.device("cpu"), ag.device("cpu")}) == 1
    assert pickle.loads(pickle.dumps(ag.device("cuda:1"))) == ag.device("cuda:1")
    for bad in ["banana", "CPU", "cuda:x", "cpu "]:
        with pytest.raises(RuntimeError) as mine:
            ag.device(bad)
        with pytest.raises(RuntimeError) as theirs:
            torch.device(bad)
        assert str(mine.value) == str(theirs.value)
    with pytest.raises(AttributeError):
        ag.device("cpu").type = "cuda"


def test_tensors_are_on_the_cpu_and_say_so(torch):
    x = ag.ones(2)
    assert x.device == ag.device("cpu") and repr(x.device) == repr(torch.ones(2).device)
    assert not x.is_cuda and x.cpu() is x
    assert x.to("cpu") is x and x.to(ag.device("cpu"), ag.float64).dtype == ag.float64
    assert x.to(ag.zeros(1, dtype=ag.float64)).dtype == ag.float64
    y = x.to("cpu", copy=True)
    assert y is not x and ag.equal(y, x)
    assert ag.get_default_device() == ag.device("cpu")


@pytest.mark.parametrize("call", [
    lambda L: L.zeros(2, device="cuda"), lambda L: L.ones(2).to("cuda"),
    lambda L: L.ones(2).cuda(), lambda L: L.tensor([1.0], device="cuda:0"),
    lambda L: L.randn(2, device="cuda"), lambda L: L.arange(3, device=L.device("cuda")),
    lambda L: (L.set_default_device("cuda"), L.zeros(1)), lambda L: L.cuda.current_device()])
def test_cuda_without_gpu_raises_as_torch(torch, call):
    try:
        for L in (ag, torch):
            with pytest.raises(AssertionError, match="not compiled with CUDA enabled"):
                call(L)
    finally:
        torch.set_default_device(None)      # torch keeps "cuda" as its default after the raise


def test_unknown_device_strings_raise_as_torch(torch):
    for L in (ag, torch):
        with pytest.raises(RuntimeError, match="Expected one of cpu, cuda"):
            L.zeros(2, device="banana")
        with pytest.raises(RuntimeError, match="Expected one of cpu, cuda"):
            L.ones(2).to("banana")
    with pytest.raises(TypeError, match="expected a dtype, a device or a Tensor"):
        ag.ones(2).to(3.5)


def test_queries_answer_no_gpu(torch):
    for L in (ag, torch):
        assert L.cuda.is_available() is False and L.cuda.device_count() == 0
        assert L.accelerator.is_available() is False
        assert L.accelerator.current_accelerator() is None
        L.cuda.manual_seed(0)
        L.cuda.manual_seed_all(0)
