"""Grad modes: no_grad, enable_grad, set_grad_enabled, inference_mode; thread-local."""
import threading

import pytest

import arraygrad as ag


def _records():
    x = ag.tensor([1.0], requires_grad=True)
    y = x * 2
    return y.requires_grad and y.grad_fn is not None


def test_default_is_enabled():
    assert ag.is_grad_enabled() and _records()
    assert ag.autograd.is_grad_enabled is ag.is_grad_enabled


def test_no_grad_context_and_nesting():
    with ag.no_grad():
        assert not ag.is_grad_enabled() and not _records()
        with ag.enable_grad():
            assert ag.is_grad_enabled() and _records()
        assert not ag.is_grad_enabled()
        with ag.no_grad():
            assert not ag.is_grad_enabled()
        assert not ag.is_grad_enabled()
    assert ag.is_grad_enabled()


def test_no_grad_result_is_a_leaf_without_grad():
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    with ag.no_grad():
        y = x * 2
    assert not y.requires_grad and y.is_leaf and y.grad_fn is None
    assert x.requires_grad


def test_decorators_with_and_without_parentheses():
    @ag.no_grad()
    def f():
        return ag.is_grad_enabled()

    @ag.no_grad
    def g():
        return ag.is_grad_enabled()

    @ag.enable_grad()
    def h():
        return ag.is_grad_enabled()

    @ag.set_grad_enabled(False)
    def k():
        return ag.is_grad_enabled()

    @ag.inference_mode()
    def m():
        return ag.is_grad_enabled(), ag.is_inference_mode_enabled()

    @ag.inference_mode
    def n():
        return ag.is_inference_mode_enabled()

    assert f() is False and g() is False and k() is False
    assert m() == (False, True) and n() is True
    with ag.no_grad():
        assert h() is True
        assert ag.is_grad_enabled() is False
    assert ag.is_grad_enabled() and not ag.is_inference_mode_enabled()
    assert f.__name__ == "f" and h.__name__ == "h"


def test_decorator_restores_on_exception():
    @ag.no_grad()
    def boom():
        raise ValueError("x")

    with pytest.raises(ValueError):
        boom()
    assert ag.is_grad_enabled()
    with pytest.raises(KeyError):
        with ag.no_grad():
            raise KeyError
    assert ag.is_grad_enabled()


def test_set_grad_enabled_as_function_and_context():
    with ag.set_grad_enabled(False):
        assert not ag.is_grad_enabled()
        with ag.set_grad_enabled(True):
            assert _records()
        assert not ag.is_grad_enabled()
    assert ag.is_grad_enabled()
    ag.set_grad_enabled(False)
    try:
        assert not ag.is_grad_enabled() and not _records()
    finally:
        ag.set_grad_enabled(True)
    assert ag.is_grad_enabled()


def test_inference_mode():
    x = ag.tensor([1.0], requires_grad=True)
    with ag.inference_mode():
        assert not ag.is_grad_enabled() and ag.is_inference_mode_enabled()
        y = x * 2
        with ag.inference_mode(False):
            assert not ag.is_inference_mode_enabled()
    assert not y.requires_grad
    assert ag.is_grad_enabled() and not ag.is_inference_mode_enabled()
    with ag.inference_mode(mode=False):
        assert ag.is_grad_enabled() and _records()


def test_grad_mode_is_thread_local():
    seen = {}
    started = threading.Event()
    release = threading.Event()

    def worker():
        seen["worker_default"] = ag.is_grad_enabled()
        with ag.no_grad():
            started.set()
            release.wait(5)
            seen["worker_inside"] = ag.is_grad_enabled()

    t = threading.Thread(target=worker)
    t.start()
    started.wait(5)
    seen["main_while_worker_no_grad"] = ag.is_grad_enabled() and _records()
    with ag.no_grad():
        release.set()
        t.join(5)
    assert seen == {"worker_default": True, "worker_inside": False,
                    "main_while_worker_no_grad": True}
    assert ag.is_grad_enabled()


def test_backward_inside_no_grad_still_computes_grads():
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    with ag.no_grad():
        y.backward()
    assert x.grad.tolist() == [2.0, 4.0]


def test_in_place_allowed_on_leaf_under_no_grad():
    w = ag.tensor([1.0, 2.0], requires_grad=True)
    with ag.no_grad():
        w -= 0.5 * ag.tensor([2.0, 2.0])
    assert w.tolist() == [0.0, 1.0] and w.is_leaf and w.requires_grad
