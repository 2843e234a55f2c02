"""Views: a view shares its base's memory and version counter and remembers how to redo
itself from the base, so that its history can follow in-place writes (NOTE [in-place])."""
from ..core import grad_mode


def mark_view(prim, src, params, out):
    """`out`, just computed by view primitive `prim` from `src`, shares memory (and the
    version counter) with it; record how to redo the view from the base. Every level that
    makes views of its own tensors (eager, grad, jvp) marks them here."""
    out._vc = src._vc
    if not prim.differentiable:
        return
    out._view_version = src._vc[0]
    out._base = src if src._base is None else src._base
    parent = src._view_fn
    if parent is None:
        out._view_fn = lambda b: prim(b, **params)
    else:
        out._view_fn = lambda b: prim(parent(b), **params)


def viewed(src, out):
    """Whether `out`, made by a view primitive from `src` one level down, is a view of it
    there. A batch rule's layout or NumPy's reshape can force a copy, and a copy is a view at
    no level above (torch's `view` refuses then and its `reshape` gives a copy): writes into
    it must not be taken for writes into the base."""
    return out._vc is src._vc


def base_of(view):
    """The tensor `view` is redone from: its base as it was when the view was made (NOTE
    [in-place views]). A base with a history that an in-place view op (`x.t_()`) changed is
    now a view of its former self, which kept the geometry the view was made from; a view
    made before an in-place view op changed a leaf's geometry cannot be redone (raises)."""
    base = view._base
    if base._base is not None:
        return base._base
    if view._view_version < base.__dict__.get("_reshaped_at", 0):
        raise RuntimeError(
            "a view of a tensor was made before an in-place view op (t_, transpose_, squeeze_, "
            "unsqueeze_, as_strided_) changed that tensor's shape, and its history cannot follow "
            "the tensor's since; make the view again after the in-place view op, or use the "
            "out-of-place op")
    return base


def refresh_view(view):
    """After an in-place write to its base (or a sibling view), a view's history is the view
    of the base's new history (torch regenerates it the same way)."""
    base = view._base
    if view._view_fn is None or not base._requires_grad:
        if view._view_version >= base.__dict__.get("_reshaped_at", 0):
            view._view_version = view._vc[0]
        return
    base = base_of(view)
    view._view_version = view._vc[0]
    with grad_mode.enable_grad():
        fresh = view._view_fn(base)
    view.grad_fn, view._output_nr, view._requires_grad = fresh.grad_fn, fresh._output_nr, True
