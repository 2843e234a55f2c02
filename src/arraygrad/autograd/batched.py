"""`autograd.grad`, the public one: engine.grad, or with `is_grads_batched=True` one
backward per row of the grad_outputs, run as a single vmapped backward."""
from ..func import vmap
from . import engine


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """Gradients of `outputs` with respect to `inputs`, returned (not accumulated).

        >>> x = arraygrad.tensor([1., 2.], requires_grad=True)
        >>> arraygrad.autograd.grad((x * x).sum(), x)
        (tensor([2., 4.]),)
    """
    if not is_grads_batched:
        return engine.grad(outputs, inputs, grad_outputs, retain_graph, create_graph,
                           only_inputs, allow_unused, materialize_grads)
    if allow_unused is None:
        allow_unused = materialize_grads
    outs = engine._tensors(outputs, "grad(): outputs", allow_none=False)
    ins = engine._tensors(inputs, "grad(): inputs", allow_none=False)
    if not ins:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    gos = engine._tensors(grad_outputs, "grad(): grad_outputs")
    unused = set()      # vmap returns only tensors: unused inputs pass as zeros, then None

    def one(*g):
        res = engine.grad(outs, ins, g, True, create_graph, allow_unused=allow_unused,
                          materialize_grads=materialize_grads)
        unused.update(i for i, r in enumerate(res) if r is None)
        return tuple(x._zeros_like() if r is None else r for x, r in zip(ins, res))
    res = vmap(one, in_dims=tuple(None if g is None else 0 for g in gos))(*gos)
    return tuple(None if i in unused else r for i, r in enumerate(res))
