"""torch.utils.checkpoint: trade compute for memory by recomputing a segment in backward.

    y = checkpoint(block, x, use_reentrant=False)   # block's intermediates are not kept

`use_reentrant=False` (torch's recommended variant) runs `fn` once with saved-tensor hooks
that keep only a counter per saved tensor; the first time backward needs one, `fn` is rerun
(from the same random state) with hooks that capture what it saves, and the saved tensors are
handed out from that run. The graph is the ordinary one, so it works with `autograd.grad`,
`backward(inputs=...)`, keyword arguments, nested checkpoints and outputs of any kind.

`use_reentrant=True` runs `fn` without recording a graph and keeps only the inputs; backward
reruns `fn` with grad enabled and backpropagates through the recomputed graph from inside the
engine. As in torch, it reaches the inputs and what `fn` closes over (module parameters) only
through `.backward()` without `inputs`, and raises under `autograd.grad`.
"""
import contextlib
import warnings

from .. import _tensor as _t
from ..autograd.function import Function
from ..autograd import engine
from ..autograd.graph import saved_tensors_hooks
from ..core import autocast_mode as _autocast
from ..core.grad_mode import enable_grad, is_grad_enabled, no_grad
from ..ops.creation import get_rng_state, set_rng_state

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError"]


class CheckpointError(RuntimeError):
    """The recomputation did not save what the original forward saved."""


@contextlib.contextmanager
def _autocast_replayed(state):
    """Run the recomputation under the autocast state of the forward, as torch does."""
    outer = (_autocast.state.enabled, _autocast.state.dtype)
    _autocast.state.enabled, _autocast.state.dtype = state
    try:
        yield
    finally:
        _autocast.state.enabled, _autocast.state.dtype = outer


@contextlib.contextmanager
def _rng_replayed(state):
    """Run the block from the random state `state` (None: as is), restoring the caller's."""
    if state is None:
        yield
        return
    outer = get_rng_state()
    set_rng_state(state)
    try:
        yield
    finally:
        set_rng_state(outer)


# ----------------------------------------------------------------- reentrant
_NOT_REENTRANT = ("When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or "
                  "passing an `inputs` parameter to .backward(). To resolve this error, you can "
                  "either set use_reentrant=False, or call .backward() without passing the "
                  "`inputs` argument.")


class _Checkpoint(Function):
    @staticmethod
    def forward(ctx, run_fn, preserve_rng_state, *args):
        ctx.run_fn = run_fn
        ctx.rng_state = get_rng_state() if preserve_rng_state else None
        ctx.tensor_at = [i for i, a in enumerate(args) if isinstance(a, _t.Tensor)]
        ctx.others = [None if isinstance(a, _t.Tensor) else a for a in args]
        ctx.save_for_backward(*(args[i] for i in ctx.tensor_at))
        with no_grad():
            return run_fn(*args)

    @staticmethod
    def backward(ctx, *grads):
        if not engine.is_checkpoint_valid():
            raise RuntimeError(_NOT_REENTRANT)
        args = list(ctx.others)
        for i, t in zip(ctx.tensor_at, ctx.saved_tensors):
            args[i] = t.detach().requires_grad_(t.requires_grad)
        with _rng_replayed(ctx.rng_state), enable_grad():
            outputs = ctx.run_fn(*args)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grads)
                 if isinstance(o, _t.Tensor) and o.requires_grad and g is not None]
        if pairs:
            engine.backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None) + tuple(a.grad if isinstance(a, _t.Tensor) else None for a in args)


# ----------------------------------------------------------------- non-reentrant
# NOTE [checkpoint frame]
# Every tensor the block saves in its forward is packed as its position in saving order. The
# recomputation saves the same tensors in the same order (same code, same random state), so
# position i of the rerun is what position i stood for. A nested checkpoint inside the block
# packs into its own frame in both runs, so the positions of the outer frame still agree.
class _Frame:
    def __init__(self, fn, args, kwargs, rng_state, recompute_context):
        self.fn, self.args, self.kwargs = fn, args, kwargs
        self.rng_state, self.recompute_context = rng_state, recompute_context
        self.autocast_state = (_autocast.state.enabled, _autocast.state.dtype)
        self.metadata = []          # (shape, dtype) of each tensor saved in the forward
        self.recomputed = {}        # position -> tensor, filled by a rerun, emptied by unpacks

    def pack(self, t):
        self.metadata.append((tuple(t.shape), t.dtype))
        return len(self.metadata) - 1

    def unpack(self, i):
        if i not in self.recomputed:
            self._recompute()
        return self.recomputed.pop(i)

    def _recompute(self):
        got = []

        def keep(t):
            if len(got) >= len(self.metadata):
                raise CheckpointError("torch.utils.checkpoint: trying to save more tensors "
                                      "during recomputation than during the original forward "
                                      "pass.")
            got.append(t.detach())

        def refuse(_):
            raise CheckpointError("torch.utils.checkpoint: a tensor saved during the "
                                  "recomputation was used before it finished")
        with _rng_replayed(self.rng_state), _autocast_replayed(self.autocast_state), \
                enable_grad(), self.recompute_context, saved_tensors_hooks(keep, refuse):
            self.fn(*self.args, **self.kwargs)
        if len(got) != len(self.metadata):
            raise CheckpointError(
                "torch.utils.checkpoint: A different number of tensors was saved during the "
                "original forward and recomputation.\nNumber of tensors saved during forward: "
                f"{len(self.metadata)}\nNumber of tensors saved during recomputation: "
                f"{len(got)}")
        for i, (t, (shape, dtype)) in enumerate(zip(got, self.metadata)):
            if (tuple(t.shape), t.dtype) != (shape, dtype):
                raise CheckpointError(
                    "torch.utils.checkpoint: Recomputed values for the following tensors have "
                    f"different metadata than during the forward pass.\ntensor at position {i}:"
                    f"\nsaved metadata: {{'shape': {shape}, 'dtype': {dtype}}}\nrecomputed "
                    f"metadata: {{'shape': {tuple(t.shape)}, 'dtype': {t.dtype}}}")
        self.recomputed = dict(enumerate(got))


def _no_contexts():
    return contextlib.nullcontext(), contextlib.nullcontext()


def _checkpoint_without_reentrant(fn, preserve_rng_state, context_fn, args, kwargs):
    forward_context, recompute_context = context_fn()
    if not is_grad_enabled():
        with forward_context:
            return fn(*args, **kwargs)
    rng_state = get_rng_state() if preserve_rng_state else None
    frame = _Frame(fn, args, kwargs, rng_state, recompute_context)
    with forward_context, saved_tensors_hooks(frame.pack, frame.unpack):
        return fn(*args, **kwargs)


# ----------------------------------------------------------------- public API
def checkpoint(function, *args, use_reentrant=None, context_fn=_no_contexts,
               determinism_check="default", debug=False, preserve_rng_state=True, **kwargs):
    """`function(*args, **kwargs)`, with its intermediates recomputed in backward instead of
    kept. `context_fn` returns two context managers: one for the forward, one for the
    recomputation (non-reentrant only)."""
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint: the use_reentrant parameter should be passed "
                      "explicitly. use_reentrant=True is the behaviour used when it is not "
                      "passed.", stacklevel=2)
        use_reentrant = True
    if determinism_check not in ("default", "none"):
        raise ValueError(f"determinism_check should be one of ['default', 'none'], but got "
                         f"{determinism_check}")
    if use_reentrant:
        if context_fn is not _no_contexts or debug:
            raise ValueError("Passing `context_fn` or `debug` is only supported when "
                             "use_reentrant=False.")
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
        return _Checkpoint.apply(function, preserve_rng_state, *args)
    return _checkpoint_without_reentrant(function, preserve_rng_state, context_fn, args, kwargs)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Run `functions` (a Sequential or a list) in `segments` checkpointed chunks; the last chunk
    runs normally, as torch."""
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter "
                      "should be passed explicitly.", stacklevel=2)
        use_reentrant = True
    functions = list(functions.children()) if hasattr(functions, "children") else list(functions)
    size = len(functions) // segments
    end = -1

    def run(start, stop):
        def forward(x):
            for f in functions[start:stop + 1]:
                x = f(x)
            return x
        return forward

    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run(start, end), input, use_reentrant=use_reentrant, **kwargs)
    return run(end + 1, len(functions) - 1)(input)
