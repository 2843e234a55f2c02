"""torch.utils.checkpoint: trade compute for memory by recomputing a segment in backward.

`checkpoint(fn, *args, use_reentrant=True)` runs `fn` without recording a graph (its
intermediates are freed at once) and keeps only the inputs; backward reruns `fn` with grad
enabled, from the same random state, and backpropagates through the recomputed graph. As in
torch's reentrant variant, gradients reach the inputs and everything `fn` closes over (module
parameters), and it works with `.backward()`, not `autograd.grad` or `backward(inputs=...)`.
"""
import warnings

from .. import _tensor as _t
from ..autograd.function import Function
from ..autograd import engine
from ..core.grad_mode import enable_grad, no_grad
from ..ops.creation import get_rng_state, set_rng_state

__all__ = ["checkpoint", "checkpoint_sequential"]


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
        args = list(ctx.others)
        for i, t in zip(ctx.tensor_at, ctx.saved_tensors):
            args[i] = t.detach().requires_grad_(t.requires_grad)
        outer_state = None
        if ctx.rng_state is not None:
            outer_state = get_rng_state()
            set_rng_state(ctx.rng_state)
        try:
            with enable_grad():
                outputs = ctx.run_fn(*args)
        finally:
            if outer_state is not None:
                set_rng_state(outer_state)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grads)
                 if isinstance(o, _t.Tensor) and o.requires_grad and g is not None]
        if pairs:
            engine.backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None) + tuple(a.grad if isinstance(a, _t.Tensor) else None for a in args)


def checkpoint(function, *args, use_reentrant=None, preserve_rng_state=True, **kwargs):
    """`function(*args)`, with its intermediates recomputed in backward instead of kept."""
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint: the use_reentrant parameter should be passed "
                      "explicitly. use_reentrant=True is the behaviour used when it is not "
                      "passed.", stacklevel=2)
        use_reentrant = True
    if not use_reentrant:
        raise ValueError("checkpoint: only use_reentrant=True is supported by arraygrad; pass "
                         "use_reentrant=True")
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    return _Checkpoint.apply(function, preserve_rng_state, *args)


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
