"""Grad mode: whether eager ops record graph nodes. Thread-local, like torch."""
import functools
import threading


class _State(threading.local):
    def __init__(self):
        self.grad_enabled = True
        self.inference = False


state = _State()


def is_grad_enabled():
    return state.grad_enabled


def is_inference_mode_enabled():
    return state.inference


class _Mode:
    """Base for grad-mode context managers that also work as decorators."""

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__(*self._args):
                return fn(*args, **kwargs)
        return wrapper

    _args = ()


class set_grad_enabled(_Mode):
    """Context manager, decorator or plain call setting grad mode."""

    def __init__(self, mode):
        self._args = (mode,)
        self.prev = state.grad_enabled
        state.grad_enabled = bool(mode)

    def __call__(self, fn):
        # as a decorator it only applies inside `fn`: undo the switch made by __init__
        state.grad_enabled = self.prev
        return super().__call__(fn)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        state.grad_enabled = self.prev


class no_grad(_Mode):
    def __new__(cls, func=None):
        self = super().__new__(cls)
        if callable(func):
            return self(func)
        return self

    def __init__(self, func=None):
        pass

    def __enter__(self):
        self.prev = state.grad_enabled
        state.grad_enabled = False

    def __exit__(self, *exc):
        state.grad_enabled = self.prev


class enable_grad(no_grad):
    def __enter__(self):
        self.prev = state.grad_enabled
        state.grad_enabled = True


class inference_mode(_Mode):
    def __new__(cls, mode=True):
        self = super().__new__(cls)
        if callable(mode):
            self.__init__(True)
            return self(mode)
        return self

    def __init__(self, mode=True):
        self._args = (mode,)
        self.mode = bool(mode)

    def __enter__(self):
        self.prev = (state.grad_enabled, state.inference)
        if self.mode:
            state.grad_enabled, state.inference = False, True
        else:
            state.inference = False

    def __exit__(self, *exc):
        state.grad_enabled, state.inference = self.prev
