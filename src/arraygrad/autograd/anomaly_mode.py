"""Anomaly detection: remember where each node was created, and check backward for NaN.

# NOTE [anomaly mode]
While enabled, every graph node records the stack of the forward call that made it
(`node.metadata["traceback_"]`, as torch). When a node's backward fails, a warning
carries that stack before the error propagates; with `check_nan`, a backward that
returns NaN is such a failure ("Function 'SqrtBackward0' returned nan values in its
0th output."). The state is process-wide, as torch's. Off, it costs the engine and
node creation one flag test each.
"""
import os
import traceback
import warnings


class _State:
    enabled = False
    check_nan = True


state = _State()


def is_anomaly_enabled():
    return state.enabled


def is_anomaly_check_nan_enabled():
    return state.check_nan


_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def forward_stack():
    """The forward call's stack (formatted lines), without the frames inside arraygrad."""
    frames = [f for f in traceback.extract_stack() if not f.filename.startswith(_PKG)]
    return traceback.format_list(frames)


def set_anomaly_enabled(enabled, check_nan=True):
    state.enabled, state.check_nan = bool(enabled), bool(check_nan)


class set_detect_anomaly:
    """Turn anomaly detection on or off: a plain call, or a context manager that
    restores the previous setting on exit."""

    def __init__(self, mode, check_nan=True):
        self.prev = (state.enabled, state.check_nan)
        set_anomaly_enabled(mode, check_nan)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        set_anomaly_enabled(*self.prev)


class detect_anomaly:
    """Context manager enabling anomaly detection for its block (warns when made, as torch).

        >>> with autograd.detect_anomaly():
        ...     loss.backward()     # a NaN names the node and shows its forward line
    """

    def __init__(self, check_nan=True):
        self.check_nan = check_nan
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime "
                      "and should only be enabled for debugging.", UserWarning, stacklevel=2)

    def __enter__(self):
        self.prev = (state.enabled, state.check_nan)
        set_anomaly_enabled(True, self.check_nan)
        return self

    def __exit__(self, *exc):
        set_anomaly_enabled(*self.prev)


def apply_checked(node, apply, buf):
    """`apply(node, buf)` for the engine in anomaly mode: the forward stack on failure,
    and an error for NaN gradients when check_nan is on."""
    try:
        grads = apply(node, buf)
        if state.check_nan:
            for i, g in enumerate(grads):
                # plain gradients only: a transform's (batched) gradients have no one value
                if g is not None and g._lvl is None and bool(g.isnan().any()):
                    raise RuntimeError(f"Function '{node.name()}' returned nan values in its "
                                       f"{i}th output.")
    except Exception:
        stack = node.metadata.get("traceback_")
        if stack is not None:
            warnings.warn(f"Error detected in {node.name()}. Traceback of forward call that "
                          "caused the error:\n" + "".join(stack), UserWarning, stacklevel=2)
        raise
    return grads
