"""Graph nodes: what a recorded op keeps for its backward, and the leaf accumulator.

# NOTE [saved tensors]
A node keeps only the inputs its vjp reads (`Primitive.save`) and, when asked,
its outputs. Each saved tensor remembers its version; reading it after an
in-place change raises torch's error instead of giving a wrong gradient. A
saved output is kept as its array and version (compactly, NOTE [node footprint],
or by a SavedTensor holding the tensor weakly), so that a tensor and its own
grad_fn form no reference cycle; it is rebuilt when needed.
"""
import itertools
import threading
import sys
from sys import getrefcount as _getrefcount
import weakref

from .. import _tensor as _t
from .._tensor import Tensor
from ..backends import backend_of, default_backend, numpy_backend
from ..dtypes import of_array, _FROM_NP
from ..core import grad_mode
from ..core.autocast_mode import state as _autocast
from ..core.dispatch import born_here, not_complex, transforms_active, _tls as _dispatch_tls
from ..core.shapes import broadcasts_to, sum_to
from .anomaly_mode import state as anomaly, forward_stack
from .views import refresh_view

_seq = itertools.count()
_LEAF_FIRST = 1 << 62
_ZEROS = {(0,) * n: (0,) * n for n in range(8)}
_new = object.__new__

FREED_MSG = ("Trying to backward through the graph a second time (or directly access saved "
             "tensors after they have already been freed). Saved intermediate values of the "
             "graph are freed when you call .backward() or autograd.grad(). Specify "
             "retain_graph=True if you need to backward through the graph a second time or if "
             "you need to access saved tensors after calling backward.")


class SavedTensor:
    """One tensor a node keeps for its backward (torch's `_raw_saved_*` objects).

    With saved-tensor hooks (`saved_tensors_hooks`, `register_hooks`) the node keeps what
    `pack` returned and `unpack` rebuilds the tensor; as in torch there is then no
    version check (the hooks own the value).
    """
    __slots__ = ("value", "version", "ref", "out_nr", "hooks", "edge", "fn", "vc")

    def __init__(self, value, owner_is_output=False, out_nr=0, hooks=None):
        self.out_nr = out_nr
        self.hooks = hooks
        self.fn = None      # the history of the compact form (see `compact`)
        if hooks is not None:
            self.ref = self.version = None
            self.edge = _history(value, owner_is_output)
            self.value = _run_pack(hooks[0], value)
            return
        self.version = value._vc[0]
        if owner_is_output:
            self.ref = weakref.ref(value)
            self.value = value._data
            self.vc = value._vc
        else:
            self.ref = self.vc = None
            self.value = value

    @classmethod
    def compact(cls, t):
        """`t`, an intermediate plain tensor, saved as its array, version counter and history
        (torch's SavedVariable keeps the same), not as the Tensor object: the form a compact
        saved value takes when `_raw_saved_*` asks for it (NOTE [node footprint]). Unpacking
        rebuilds an equal tensor with the same history."""
        s = _new(cls)
        s.value = t._data
        s.vc = t._vc
        s.version = t._vc[0]
        s.fn = t.grad_fn
        s.out_nr = t._output_nr
        s.ref = s.hooks = None
        return s

    def _expanded(self):
        """The tensor a compact SavedTensor stands for."""
        t = _t.make(self.value, True)
        t.grad_fn, t._output_nr, t._vc = self.fn, self.out_nr, self.vc
        return t

    def register_hooks(self, pack_hook, unpack_hook):
        """Pack the saved value now (detached, as torch) and unpack it on use."""
        if not (callable(pack_hook) and callable(unpack_hook)):
            raise TypeError("register_hooks: expected two callables (pack_hook, unpack_hook)")
        if self.hooks is not None:
            raise RuntimeError("Calling register_hooks on a saved tensor whose hooks have "
                               "already been set.")
        t = self.value
        if self.fn is not None:
            t = self._expanded()
            self.fn = self.vc = None
            self.edge = _history(t, False)
        elif self.ref is not None:
            t = self.ref()
            t = _t.make(self.value) if t is None else t
            self.edge = True
        else:
            self.edge = _history(t, False)
        self.value = _run_pack(pack_hook, t.detach())
        self.hooks = (pack_hook, unpack_hook)
        self.ref = self.version = None

    def unpack(self, node):
        v = self.value
        if self.hooks is not None:
            cache = getattr(node, "_unpacked", None)
            if cache is not None and self in cache:
                return cache[self]
            v = self.hooks[1](v)
            if not isinstance(v, Tensor):
                raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but "
                                f"got result of type {type(v).__name__}")
            v = self._reattach(v, node)
            if cache is not None:
                cache[self] = v
            return v
        return self._checked(v, node)

    def _reattach(self, v, node):
        """The unpacked value with the saved tensor's history (as torch: double backward
        through a hooked saved tensor reaches what the original depended on)."""
        edge = self.edge
        if edge is None or v._lvl is not None:
            return v
        t = _t.make(v._data, True)
        if edge is True:                    # a saved output: its node is `node`
            t.grad_fn, t._output_nr = node, self.out_nr
        elif isinstance(edge, AccumulateGrad):
            t._accum = weakref.ref(edge)
        else:
            t.grad_fn, t._output_nr = edge
        return t

    def _checked(self, v, node):
        if self.fn is not None:
            v = self._expanded()
        elif self.ref is not None:
            t = self.ref()
            if t is None:
                t = _t.make(v, True)
                t.grad_fn = node
                t._output_nr = self.out_nr
                t._vc = self.vc
            v = t
        if self.version is not None and v._vc[0] != self.version:
            raise _modified(v.dtype, v.shape, f"output {self.out_nr} of {node.name()}"
                            if self.ref is not None else f"an input of {node.name()}",
                            v._vc[0], self.version)
        return v


def _history(t, is_output):
    """What a hooked saved tensor must reattach on unpack: True for an output of the
    saving node, (grad_fn, output_nr), a leaf's AccumulateGrad, or None (no history)."""
    if is_output:
        return True
    if t.grad_fn is not None:
        return (t.grad_fn, t._output_nr)
    return accumulator(t) if t._requires_grad else None


# ----------------------------------------------------------------- saved-tensor hooks
class _HooksState(threading.local):
    def __init__(self):
        self.stack = []           # (pack, unpack) pairs; the innermost is used
        self.disabled = None      # the error message while disable_saved_tensors_hooks


_hooks_state = _HooksState()


def _run_pack(pack, t):
    """pack(t) with the hooks suspended: what the hook itself computes is not packed again."""
    stack = _hooks_state.stack
    _hooks_state.stack = []
    try:
        return pack(t)
    finally:
        _hooks_state.stack = stack


def current_saved_hooks():
    """The innermost (pack, unpack) pair, or None: what a node recorded now should use."""
    stack = _hooks_state.stack
    return stack[-1] if stack else None


class saved_tensors_hooks:
    """Context manager: every tensor saved for backward inside it (by built-in ops and by
    custom Functions' save_for_backward) is stored as `pack_hook(tensor)` and rebuilt by
    `unpack_hook(packed)` when backward needs it. Graphs recorded by func transforms
    (grad, vjp, jacrev) do not use them (torch refuses the hooks there).

        >>> with autograd.graph.saved_tensors_hooks(lambda t: t.numpy(), torch.from_numpy):
        ...     y = x.sin()         # keeps a NumPy array; backward rebuilds the tensor
    """

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        if _hooks_state.disabled is not None:
            raise RuntimeError(_hooks_state.disabled)
        _hooks_state.stack.append((self.pack_hook, self.unpack_hook))
        return self

    def __exit__(self, *exc):
        _hooks_state.stack.pop()


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors are kept on the CPU and moved back to their device for backward."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        def pack(t):
            return (t.device, t.cpu())

        def unpack(packed):
            device, t = packed
            return t.to(device)
        super().__init__(pack, unpack)


class disable_saved_tensors_hooks:
    """Context manager: saved-tensor hooks raise `error_message` while it is active
    (for features that cannot work with them)."""

    def __init__(self, error_message):
        self.error_message = error_message

    def __enter__(self):
        self._prev = _hooks_state.disabled
        _hooks_state.disabled = self.error_message
        if _hooks_state.stack:
            _hooks_state.disabled = self._prev
            raise RuntimeError(self.error_message)
        return self

    def __exit__(self, *exc):
        _hooks_state.disabled = self._prev


class Node:
    """Base of graph nodes (torch's `grad_fn` objects)."""

    _pre_hooks = None      # hooks on output gradients: f(grad_outputs) -> new | None
    _post_hooks = None     # hooks after apply: f(grad_inputs, grad_outputs) -> new | None
    _tensor_hooks = None   # output_nr -> list of f(grad) -> new | None
    # any of the above was set, or values were saved under saved-tensor hooks: the engine's
    # array-level paths (NOTE [lean engine], NOTE [chains]) leave the node to `_run_node`
    _watched = False
    n_outputs = 1

    def materialize(self, grads):
        """Fill in missing output gradients (None) where the node needs all of them."""
        return grads

    def __init__(self, next_functions=()):
        self.next_functions = next_functions
        self._seq = next(_seq)

    # NOTE [node footprint]: the edges are kept as the nodes (`packed_fns`) and a tuple of
    # the output numbers (shared when all are 0) rather than one tuple of pairs
    @property
    def next_functions(self):
        return tuple(zip(next_nodes(self), self._nrs))

    @next_functions.setter
    def next_functions(self, edges):
        self._fns = packed_fns([e[0] for e in edges])
        nrs = tuple(e[1] for e in edges)
        self._nrs = _ZEROS.get(nrs, nrs)
        if anomaly.enabled:
            self.metadata["traceback_"] = forward_stack()

    @property
    def metadata(self):
        d = self.__dict__.get("_metadata")
        if d is None:
            d = self._metadata = {}
        return d

    def name(self):
        return type(self).__name__

    def __repr__(self):
        return f"<{self.name()} object at {hex(id(self))}>"

    def __call__(self, *grads):
        return self.apply(grads)

    def release(self):
        """Free saved values after a backward without retain_graph."""

    def register_hook(self, hook):
        self._post_hooks = (self._post_hooks or []) + [hook]
        self._watched = True
        return _Handle(self, "_post_hooks", hook)

    def register_prehook(self, hook):
        self._pre_hooks = (self._pre_hooks or []) + [hook]
        self._watched = True
        return _Handle(self, "_pre_hooks", hook)


class _Handle:
    def __init__(self, owner, attr, hook):
        self.owner, self.attr, self.hook = weakref.ref(owner), attr, hook

    def remove(self):
        owner = self.owner()
        if owner is not None:
            hooks = getattr(owner, self.attr)
            if isinstance(hooks, dict):
                for lst in hooks.values():
                    if self.hook in lst:
                        lst.remove(self.hook)
            elif hooks and self.hook in hooks:
                setattr(owner, self.attr, [h for h in hooks if h is not self.hook])


class RuleCtx:
    """What a builtin rule sees: inputs, outputs and input metadata."""

    @property
    def x(self):
        return self.inputs[0]

    @property
    def y(self):
        return self.inputs[1]

    @property
    def out(self):
        return self.outs[0]

    def saved_strides(self, i):
        """The strides of input `i` as saved, where the node can tell them without unpacking
        it (torch's rules read an input's saved strides, which in-place writes leave as they
        are, even where they do not read its values); None where it cannot."""
        return None


class _LazySaved:
    """Saved inputs, unpacked (and version-checked) on access."""
    __slots__ = ("node",)

    def __init__(self, node):
        self.node = node

    def __getitem__(self, i):
        s = self.node._saved
        if s is None:
            raise RuntimeError(FREED_MSG)
        v = s[i]
        if v is _NOT_SAVED:
            raise RuntimeError(f"{self.node.name()}: the vjp rule read input {i}, which the "
                               "primitive does not save (fix its `save=`)")
        if type(v) is SavedTensor:
            return v.unpack(self.node)
        if type(v) is tuple and v and v[0] is _COMPACT:
            return _expand(self.node, v, False)
        return v

    def __len__(self):
        return len(self.node.shapes)

    def __iter__(self):
        return (self[i] for i in range(len(self)))


_NOT_SAVED = object()


def _expand(node, c, is_output):
    """The tensor that compact saved value `c` of `node` stands for (NOTE [node footprint]),
    checked against in-place changes since it was saved."""
    _, data, version, hist, k = c
    vc = _vc_of(node, k)
    if vc[0] != version:
        whose = f"output {hist} of {node.name()}" if is_output else f"an input of {node.name()}"
        raise _modified(of_array(data.dtype), data.shape, whose, vc[0], version)
    t = _t.make(data, hist >= 0)
    t._vc = vc
    if is_output:
        t.grad_fn, t._output_nr = node, hist
    elif hist >= 0:
        j = hist if node._edge_pos is None else node._edge_pos.index(hist)
        t.grad_fn, t._output_nr = next_nodes(node)[j], node._nrs[j]
    return t


def compact_array(v):
    """The array of `v` if it is a compact saved value of a PrimNode, else None."""
    return v[1] if type(v) is tuple and v and v[0] is _COMPACT else None


def _vc_of(node, k):
    """The version counter of compact saved value number `k` of `node`."""
    return node._vc0 if k == 0 else node._vc1 if k == 1 else node._vcs[k - 2]


def _modified(dtype, shape, whose, now, version):
    return RuntimeError(
        "one of the variables needed for gradient computation has been modified by an "
        f"inplace operation: [{dtype} {list(shape)}], which is {whose}, "
        f"is at version {now}; expected version {version} instead. Hint: clone the tensor "
        "before modifying it in place, or modify a copy.")

_COMPACT = object()    # first item of a saved value kept compactly (see below)

# NOTE [node footprint]
# Every object a node keeps alive that the cyclic collector tracks is scanned again by each
# collection of the oldest generation, which in a deep graph is most of the graph-building
# time, and each one allocated brings the next collection nearer. So a recorded op keeps one
# such object, the node, where its only edge to a node is its first (`x.sin()`, `x * c`,
# `x + 1`): `_fns` is then that node itself, not a tuple of next nodes (`packed_fns`,
# `next_nodes`); other nodes keep the tuple as well. A
# plain tensor it saves at level 0 (an intermediate, a constant, an output) is kept as the
# tuple (_COMPACT, array, version at save, history, k): history is the input's position
# among the node's edges (the edge is its grad_fn), the output's number for an output (its
# grad_fn is the node), or -1 for none; the version counter, a dict, is the node's attribute
# `_vc<k>` (`_vc_of`), since a tuple holding a dict stays tracked while one of arrays and
# numbers is untracked by the first collection that sees it. `_expand` rebuilds an equal
# tensor with the same history and version check. Tuples of input dtypes, of
# needs_input_grad flags and of input shapes, and empty params, are shared between nodes:
# a collection visits every object a tracked one refers to, and in a deep graph a shared
# object is in the cache where the node's own ones are not (sharing them halves the time
# the full collections of the 10^5-op chain take). Rules only read a node's params.
_dtype_tuples = {}
_needs_tuples = {}
_shape_tuples = {}
NO_PARAMS = {}


def packed_fns(fns):
    """A node's edge nodes (None for an edge to nothing) as it keeps them in `_fns` (NOTE
    [node footprint]): the first one itself where the others are None, else a tuple."""
    if fns and fns[0] is not None:
        for f in fns[1:]:
            if f is not None:
                return tuple(fns)
        return fns[0]
    return tuple(fns)


def next_nodes(node):
    """The nodes of `node`'s edges, None for an edge to nothing: `_fns` unpacked."""
    fns = node._fns
    return fns if type(fns) is tuple else (fns,) + (None,) * (len(node._nrs) - 1)


def shared_shapes(shapes):
    """The shared tuple equal to `shapes` (a tuple of input shapes); the table is emptied when
    it grows large, as a program whose shapes keep changing would make it."""
    if len(_shape_tuples) >= 4096:
        _shape_tuples.clear()
    return _shape_tuples.setdefault(shapes, shapes)


class PrimNode(Node, RuleCtx):
    """Node of a builtin primitive: its vjp rule applied to the saved values."""

    # what every node sets lives in slots (NOTE [node footprint]); `_saved_outs` holds the
    # outputs' saved values where the vjp reads them (save_output), `_vc0`, `_vc1` version
    # counters of compact saved values
    __slots__ = ("_seq", "prim", "params", "needs_input_grad", "_fns", "_nrs", "shapes",
                 "dtypes", "_saved", "_saved_outs", "_vc0", "_vc1")
    _edge_pos = None    # the args that are edges, where not all are (Primitive.nondiff_inputs)
    hooked = False      # saved under saved-tensor hooks
    _unpacked = None    # while a hooked node runs its vjp: SavedTensor -> unpacked value

    def __init__(self, prim, params, args, outs, edges, level_owned):
        self._seq = next(_seq)
        if anomaly.enabled:
            self.metadata["traceback_"] = forward_stack()
        self.prim = prim
        self.params = params or NO_PARAMS
        save = prim.save
        hooks = None
        if level_owned and _hooks_state.stack:
            hooks = _hooks_state.stack[-1]
            self.hooked = self._watched = True
        # NOTE [node footprint]: values are saved compactly at level 0 (not inside a
        # transform, whose levels look saved tensors up by identity)
        compact = level_owned and hooks is None and not _dispatch_tls.interpreters
        fns, nrs, needs = _split_edges(edges)
        shapes, dtypes, saved, vcs = [], [], [], []
        unread = () if prim.save_when is None else _unread(prim.save_when, needs)
        i = 0
        for a, e in zip(args, edges):
            if isinstance(a, Tensor):
                if a._lvl is None:
                    d = a._data
                    shapes.append(d.shape)
                    dtypes.append(_FROM_NP[d.dtype] if type(d) is _ndarray else of_array(d.dtype))
                    if save is not None and i not in save or i in unread:
                        saved.append(_NOT_SAVED)
                    elif compact and type(a) is Tensor and (
                            not a._requires_grad if e is None else
                            a._base is None and e[0] is a.grad_fn and i not in prim.nondiff_inputs):
                        saved.append((_COMPACT, d, a._vc[0], -1 if e is None else i, len(vcs)))
                        vcs.append(a._vc)
                    else:
                        saved.append(SavedTensor(a, hooks=hooks))
                else:
                    shapes.append(tuple(a.shape))
                    dtypes.append(a.dtype)
                    saved.append(SavedTensor(a, hooks=hooks) if (save is None or i in save)
                                 and i not in unread else _NOT_SAVED)
            else:
                shapes.append(None)
                dtypes.append(None)
                saved.append(a)
            i += 1
        if prim.nondiff_inputs or not prim.number_edges:
            keep = [i for i, a in enumerate(args) if i not in prim.nondiff_inputs
                    and (prim.number_edges or isinstance(a, Tensor))]
            if len(keep) != len(args):
                self._edge_pos = tuple(keep)
                fns = [fns[i] for i in keep]
                nrs = [nrs[i] for i in keep]
        saved_outs = None
        if prim.save_output:
            if compact and not prim.is_view:
                k = len(vcs)
                saved_outs = tuple((_COMPACT, o._data, o._vc[0], i, k + i)
                                   for i, o in enumerate(outs))
                vcs.extend(o._vc for o in outs)
            else:
                saved_outs = tuple(SavedTensor(o, level_owned, i, hooks)
                                   for i, o in enumerate(outs))
        _fill(self, needs, fns, nrs, shapes, dtypes, saved, saved_outs, vcs, outs)

    def __getattr__(self, name):
        """torch's saved-value attributes: `_saved_self`, `_saved_result`, `_saved_dim`,
        `_raw_saved_self` (the SavedTensor), `_saved_self_sym_sizes` ..."""
        raw = name.startswith("_raw_saved_")
        if not (raw or name.startswith("_saved_")):
            raise AttributeError(f"'{self.name()}' object has no attribute '{name}'")
        key = name[11 if raw else 7:]
        if key == "result" and self._saved_outs is not None and self.n_outputs == 1:
            return self._raw(0, True) if raw else self.outs[0]
        names = self.prim.arg_names
        if key in names[:len(self.shapes)]:
            i = names.index(key)
            v = self._saved[i] if self._saved is not None else None
            if raw and type(v) is tuple and v and v[0] is _COMPACT:
                return self._raw(i, False)
            if v is _NOT_SAVED and self.prim.save_when is not None and \
                    self.prim.save_when[i] is not None:
                return None     # not saved since no rule that runs reads it, as torch
            if v is not _NOT_SAVED and (not raw or type(v) is SavedTensor or v is None):
                if v is None and self._saved is None:
                    raise RuntimeError(FREED_MSG)
                return v if raw else self.inputs[i]
        if not raw:
            if key.endswith("_sym_sizes") and key[:-10] in names[:len(self.shapes)]:
                return self.shapes[names.index(key[:-10])]
            params = self.params
            if key in params or (key == "dim" and "dims" in params):
                return params[key] if key in params else params["dims"]
        raise AttributeError(f"'{self.name()}' object has no attribute '{name}'")

    def _raw(self, i, is_output):
        """Saved value `i` (an output's where `is_output`) as a SavedTensor, which it stays
        (`_raw_saved_*`: its hooks can be registered)."""
        saved = list(self._saved_outs if is_output else self._saved)
        v = saved[i]
        if type(v) is tuple:
            t = _expand(self, v, is_output)
            v = saved[i] = (SavedTensor(t, True, i) if is_output else
                            SavedTensor.compact(t) if t.grad_fn is not None else SavedTensor(t))
            if is_output:
                self._saved_outs = tuple(saved)
            else:
                self._saved = tuple(saved)
        return v

    def materialize(self, grads):
        if self.n_outputs > 1 and self.prim.materialize_grads and any(g is None for g in grads):
            grads = [zeros(s, d) if g is None else g
                     for g, (s, d) in zip(grads, self._out_meta)]
        return grads

    @property
    def inputs(self):
        return _LazySaved(self)

    @property
    def outs(self):
        s = self._saved_outs
        if s is None:
            raise RuntimeError(FREED_MSG if self._saved is None else
                               f"{self.name()}: outputs were not saved (set save_output)")
        return [_expand(self, v, True) if type(v) is tuple else v.unpack(self) for v in s]

    def name(self):
        n = self.prim.node_name
        return n if type(n) is str else n(self)   # torch's name can depend on the overload

    def saved_strides(self, i):
        v = None if self._saved is None else self._saved[i]
        if type(v) is tuple and v and v[0] is _COMPACT:
            v = v[1]
        elif type(v) is SavedTensor and v.hooks is None:
            v = v.value     # (a tensor; a saved output's array)
        else:
            return None     # not saved, freed, or what saved-tensor hooks packed
        return (v if isinstance(v, Tensor) else _t.make(v)).stride()

    def release(self):
        self._saved = None
        self._saved_outs = None

    def apply(self, grads):
        if self._unpacked is None and self.hooked:
            # NOTE [unpack once]: a rule may read a saved value several times; the user's
            # unpack hook runs once per backward of the node, as torch's
            self._unpacked = {}
            try:
                return self.apply(grads)
            finally:
                self._unpacked = None
        prim = self.prim
        if prim.array_vjp is not None and not self.hooked:
            res = _array_apply(self, grads)
            if res is not None:
                return res
        vjp = prim.vjp
        params = self.params
        if callable(vjp):
            res = vjp(self, *grads, **params)
        elif vjp is None:
            raise _no_vjp(prim, None)
        else:
            res = []
            for i, (f, need) in enumerate(zip(vjp, self.needs_input_grad)):
                if need and f is None:
                    raise _no_vjp(prim, i)
                res.append(f(self, *grads, **params) if need else None)
        res = validate_grads(self, res)
        pos = self._edge_pos
        return res if pos is None else [res[i] for i in pos]


def _array_apply(node, grads):
    """The node's cotangents (tensors) by its primitive's array-level vjp, or None where that
    does not apply: autocast is on (the composite rules' products would be cast), a graph
    may be built (create_graph, a transform's backward) and a level below would see the
    rule's ops, or `array_vjp` declines."""
    if len(grads) != 1 or _autocast.enabled:
        return None
    g = grads[0]
    ga = g._data
    if type(ga) is not _ndarray or g._lvl is not None:
        return None
    if grad_mode.state.grad_enabled or _dispatch_tls.interpreters:
        # NOTE [untracked rules]: the composite rule on plain tensors that require no grad
        # records nothing at any level, so the array rule computes all it does
        if g._requires_grad:
            return None
        res = array_vjp(node, ga, node.needs_input_grad, 0, untracked=True)
        if res is None:
            return None
        return [r if r is None or type(r) is Tensor else born_here(_t.make(r)) for r in res]
    # g: held by the engine's list of the node's gradients, `g` here and getrefcount's
    # argument; ga: by g, `ga` here, in array_vjp and in _spare, and the argument
    refs = 5 if _engine_state.donor is node and _getrefcount(g) == 3 else 0
    res = array_vjp(node, ga, node.needs_input_grad, refs)
    if res is None:
        return None
    return [r if r is None or type(r) is Tensor else _t.make(r) for r in res]


def array_vjp(node, ga, needs, refs, quiet=False, untracked=False):
    """The gradients of `node`'s edges from `ga`, its output's cotangent as a NumPy array, by
    its primitive's array-level vjp (for `needs`): NumPy arrays where they have their inputs'
    shapes and dtypes, tensors brought to them (`validate_grads`) where not. None where that
    does not apply: the gradient or a saved value is not a plain float32/float64 NumPy array
    of the gradient's dtype, or a saved value was modified in place (the composite rule
    raises torch's error if it reads that one). `refs` > 0: the node's saved values die with
    it and `ga` is spare if it has exactly `refs` references (NOTE [spare buffers]).
    `quiet`: NumPy's error state is already "ignore" (the engine's NOTE [lean engine]), so the
    rule runs without switching it. `untracked`: None also where a saved value has a
    history or requires grad (NOTE [untracked rules])."""
    dtype = ga.dtype
    if dtype is not _F64 and dtype is not _F32:
        return None
    saved = node._saved
    if saved is None:       # freed: the composite rule raises if it reads a saved value
        return None
    inputs = []
    for v in saved:
        t = type(v)
        if t is tuple and v and v[0] is _COMPACT:
            if untracked and v[3] != -1:
                return None
            a = v[1]
            if type(a) is not _ndarray or a.dtype is not dtype or \
                    (node._vc0 if v[4] == 0 else _vc_of(node, v[4]))[0] != v[2]:
                a = _compact_array(node, v, dtype)      # (above: its common case, inlined)
                if a is None:
                    return None
            v = a
        elif t is SavedTensor:
            try:
                v = _saved_array(v, node, dtype, untracked)
            except (_NotPlain, RuntimeError):
                return None
        elif v is _NOT_SAVED:
            v = None
        elif t is not float and t is not int:
            return None
        inputs.append(v)
    outs = node._saved_outs
    if outs is not None:
        arrays = []
        for o in outs:
            if type(o) is tuple:
                if untracked:       # (an output's history is the node)
                    return None
                a = o[1]
                if type(a) is not _ndarray or a.dtype is not dtype or \
                        (node._vc0 if o[4] == 0 else _vc_of(node, o[4]))[0] != o[2]:
                    a = _compact_array(node, o, dtype)
                    if a is None:
                        return None
                o = a
            else:
                try:
                    o = _saved_array(o, node, dtype, untracked)
                except (_NotPlain, RuntimeError):
                    return None
            arrays.append(o)
        outs = arrays
    v = o = a = None    # (holds no saved array while `_spare` counts references)
    spare = _spare(node, ga, refs, inputs, outs) \
        if refs and _COUNTS_KNOWN and ga.size >= SPARE_MIN else []
    rule = node.prim.array_vjp
    if quiet:
        rule = rule.plain
    params = node.params
    res = rule(_np, ga, inputs, outs, needs, node.shapes, spare) if params is NO_PARAMS else \
        rule(_np, ga, inputs, outs, needs, node.shapes, spare, **params)
    if res is None:     # the rule does not take these values
        return None
    shapes, dtypes = node.shapes, node.dtypes
    i = 0
    for r in res:
        if r is not None and (type(r) is not _ndarray or r.shape != shapes[i] or
                              r.dtype is not dtypes[i].np):
            res = _array_results(node, res)
            break
        i += 1
    pos = node._edge_pos
    return res if pos is None else [res[i] for i in pos]


def _array_results(node, res):
    """`res`, an array-level rule's results, as arrays of the inputs' shapes and dtypes (NumPy
    scalars as 0-d arrays), or tensors brought to them by `validate_grads`."""
    out = list(res)
    for i, r in enumerate(out):
        if r is not None:
            if type(r) is not _ndarray:
                r = out[i] = _np.asarray(r)
            if r.shape != node.shapes[i] or _FROM_NP.get(r.dtype) is not node.dtypes[i]:
                one = [None] * len(out)
                one[i] = _t.make(r)
                out[i] = validate_grads(node, one)[i]
    return out


# NOTE [untracked rules]
# Where a graph may be built (create_graph, the backward of a transform's level), the vjp
# rules run as composite ops so that every level below sees them. A node whose saved values
# and gradient are plain level-0 tensors that require no grad (a grad level's node over
# plain inputs: `func.grad(f)(x)` outside any other transform or tracked computation) is
# seen by no level below: its composite rule would record nothing anywhere, so its
# array-level rule runs instead and gives the same values, bit for bit (NOTE on
# `Primitive.array_vjp`). Compact saved values and outputs held weakly have a history, so
# they send a node to its composite rule.
# NOTE [spare buffers]
# Without retain_graph, a node's saved values die with it, and a gradient array the engine
# made dies once the node that receives it has run. An array-level rule may then write its
# results into those buffers (`out=`) rather than into new ones: on large arrays that saves
# the allocation and its page faults, one per op, and gives the same bits (the same
# operations in the same order). A buffer is spare only when nothing else can see it: the
# engine runs this very node without retain_graph and without node hooks that would see
# the gradients after it (`_engine_state.donor`); the array owns its memory (no base,
# writeable) and has the gradient's shape and dtype; and its reference count shows only
# the holders named in `_spare` (a tensor the caller kept, a view, a hook, or a second use
# of the value each add one). Those counts are CPython's for this module run as Python code.
SPARE_MIN = 1 << 14     # elements: below, NumPy's allocator reuses small blocks itself
# The counts are those of CPython 3.9-3.13 with the GIL; 3.14 counts borrowed stack references
# differently and free-threaded builds bias them, where a miscount would overwrite an array
# someone holds: there (and under other interpreters) no buffer is taken as spare.
_COUNTS_KNOWN = (sys.implementation.name == "cpython"
                 and (3, 9) <= sys.version_info[:2] <= (3, 13)
                 and getattr(sys, "_is_gil_enabled", lambda: True)())


class _EngineState(threading.local):
    donor = None    # the node the engine runs now, when its saved values die with it


_engine_state = _EngineState()


def _spare(node, ga, refs, inputs, outs):
    """The arrays `node`'s array-level rule may overwrite (NOTE [spare buffers]); `ga`, the
    gradient, has `refs` references where only the engine holds it."""
    spare = []
    shape, dtype = ga.shape, ga.dtype
    if _getrefcount(ga) == refs and _own(ga, shape, dtype):
        spare.append(ga)
    for v in (node._saved, node._saved_outs or ()):
        for c in v:
            if type(c) is tuple and c and c[0] is _COMPACT:
                a = c[1]
                # held by the compact tuple, inputs/outs, `a` here and the argument
                if _getrefcount(a) == 4 and _own(a, shape, dtype) and \
                        not any(a is b for b in spare):
                    spare.append(a)
    return spare


def _own(a, shape, dtype):
    return type(a) is _ndarray and a.base is None and a.shape == shape and \
        a.dtype == dtype and a.flags.writeable


# saved integer and bool arrays (class indices, masks) are given to array-level rules as
# they are: a rule indexes or selects with them, it does not compute in their dtype
_INDEX_KINDS = "iub"


def _compact_array(node, c, dtype):
    """The array of compact saved value `c` of `node` if it is unchanged since it was saved
    and a NumPy array of `dtype` (or of integers or bools), else None."""
    a = c[1]
    if _vc_of(node, c[4])[0] != c[2] or type(a) is not _ndarray or \
            (a.dtype is not dtype and a.dtype != dtype and a.dtype.kind not in _INDEX_KINDS):
        return None
    return a


def swap_array_apply(fn):
    """Make `fn(node, grads)` the array-level path of builtin nodes (None: take the composite
    rules); returns the previous one. The profiler turns it off while it runs, so that a
    backward node's events hold the ops its rule runs, as torch's do."""
    global _array_apply
    prev, _array_apply = _array_apply, fn
    return prev


class _NotPlain(Exception):
    """A saved value the array-level rules do not take."""


def _saved_array(s, node, dtype, untracked=False):
    """The array a SavedTensor holds, when it is a plain NumPy array of `dtype` and unchanged
    since it was saved (without building the tensor where the SavedTensor holds the array);
    `untracked`: and a tensor without history that requires no grad."""
    if s.hooks is None and (s.fn is not None or s.ref is not None):
        if untracked:       # (the compact form and an output held weakly have a history)
            raise _NotPlain
        if s.fn is not None:
            changed = s.vc[0] != s.version
        else:
            t = s.ref()
            changed = t is not None and t._vc[0] != s.version
        a = s.value
        if changed or type(a) is not _ndarray or a.dtype != dtype and \
                a.dtype.kind not in _INDEX_KINDS:
            raise _NotPlain
        return a
    t = s.unpack(node)
    if t._lvl is not None or type(t._data) is not _ndarray or t._data.dtype != dtype and \
            t._data.dtype.kind not in _INDEX_KINDS or untracked and t._requires_grad:
        raise _NotPlain
    return t._data


_ndarray, _result, _np = numpy_backend.array_type, numpy_backend.result, numpy_backend.xp
_F32, _F64 = _np.dtype(_np.float32), _np.dtype(_np.float64)     # tested by identity


def record(prim, params, saved_args, outs, results, edges, level_owned):
    """Record one node of `prim` and make it the history of `results`: the one recording
    path of the eager level and the grad levels. `saved_args`/`outs` are the values the vjp
    reads (for a grad level, those one level down); `edges` has, per arg, its gradient edge
    or None; `level_owned`: eager's node (saved-tensor hooks apply, outputs held weakly)."""
    return _give_history(PrimNode(prim, params, saved_args, outs, edges, level_owned), prim,
                         results)


def record_level(prim, params, inner, out, result, edges):
    """`record` for a grad level's common case, built in one frame: `prim` has one output and
    every arg is an edge position (`Primitive.one_output_node`), and anomaly mode is off.
    `inner` holds the values one level down, `out` the output there, `result` this level's
    tensor around it. Saved tensors are SavedTensors of the values below, which the levels
    look up by identity (NOTE [node footprint]: nothing is compact inside a transform)."""
    node = _new(PrimNode)
    node._seq = next(_seq)
    node.prim = prim
    node.params = params or NO_PARAMS
    save = prim.save
    fns, nrs, needs = _split_edges(edges)
    unread = () if prim.save_when is None else _unread(prim.save_when, needs)
    shapes, dtypes, saved = [], [], []
    i = 0
    for a in inner:
        if isinstance(a, Tensor):
            d = a._data
            if a._lvl is None:
                shapes.append(d.shape)
                dt = _FROM_NP.get(d.dtype) if type(d) is _ndarray else None
                dtypes.append(of_array(d.dtype) if dt is None else dt)
            else:
                shapes.append(tuple(a.shape))
                dtypes.append(a.dtype)
            saved.append(_NOT_SAVED if save is not None and i not in save or i in unread
                         else SavedTensor(a))
        else:
            shapes.append(None)
            dtypes.append(None)
            saved.append(a)
        i += 1
    _fill(node, needs, fns, nrs, shapes, dtypes, saved,
          (SavedTensor(out),) if prim.save_output else None, (), (result,))
    return _give_history(node, prim, (result,))


def _split_edges(edges):
    """(nodes, output numbers, needs_input_grad) of a node's edges, None for no edge."""
    fns, nrs, needs = [], [], []
    for e in edges:
        if e is None:
            fns.append(None)
            nrs.append(0)
            needs.append(False)
        else:
            fns.append(e[0])
            nrs.append(e[1])
            needs.append(True)
    return fns, nrs, needs


def _give_history(node, prim, results):
    """Make `node` the history of `prim`'s differentiable `results`; returns the node."""
    nondiff = prim.nondiff_outputs
    i = 0
    for r in results:
        if not (nondiff and i in nondiff):
            d = r._data
            if d is None:
                dt = r.dtype
            else:
                dt = _FROM_NP.get(d.dtype) if type(d) is _ndarray else None
                if dt is None:
                    dt = of_array(d.dtype)
            if dt.is_differentiable:
                if dt.is_complex and d is not None and not prim.complex:
                    raise not_complex(prim)
                r._requires_grad = True
                r.grad_fn = node
                r._output_nr = i
        i += 1
    return node


def _unread(save_when, needs):
    """The inputs that no rule which will run reads (`Primitive.save_when`): they are not
    saved, so the graph does not keep them alive (torch's nodes save as little)."""
    key = (save_when, tuple(needs))
    unread = _unread_sets.get(key)
    if unread is None:
        unread = _unread_sets[key] = tuple(
            i for i, readers in enumerate(save_when)
            if readers is not None and not any(needs[j] for j in readers))
    return unread


_unread_sets = {}     # (save_when, needs) -> the unread inputs: few primitives, few patterns


def _fill(node, needs, fns, nrs, shapes, dtypes, saved, saved_outs, vcs, outs):
    """Store what a PrimNode keeps, in its compact form (NOTE [node footprint]): tuples shared
    between nodes where they are equal, the version counters of compact saved values in
    slots."""
    needs = tuple(needs)
    node.needs_input_grad = _needs_tuples.setdefault(needs, needs)
    node._fns = packed_fns(fns)
    nrs = tuple(nrs)
    node._nrs = _ZEROS.get(nrs, nrs)
    shapes = tuple(shapes)
    node.shapes = _shape_tuples.get(shapes) or shared_shapes(shapes)
    dtypes = tuple(dtypes)
    node.dtypes = _dtype_tuples.setdefault(dtypes, dtypes)
    node._saved = tuple(saved)
    node._saved_outs = saved_outs
    if vcs:
        node._vc0 = vcs[0]
        if len(vcs) > 1:
            node._vc1 = vcs[1]
            if len(vcs) > 2:
                node._vcs = tuple(vcs[2:])
    if len(outs) != 1:
        node.n_outputs = len(outs)
        node._out_meta = [(o.shape, o.dtype) for o in outs]


def record_eager(prim, params, args, outs):
    """`record` for level 0, where an input requires grad: its edges found here, and in the
    common case (no transform, saved-tensor hooks or anomaly mode; every arg an edge) the
    node built in this one frame, every plain tensor saved compactly (NOTE [node
    footprint])."""
    if _dispatch_tls.interpreters or _hooks_state.stack or anomaly.enabled or \
            prim.nondiff_inputs or not prim.number_edges:
        edges = [gradient_edge(a) if isinstance(a, Tensor) and a._requires_grad else None
                 for a in args]
        return record(prim, params, args, outs, outs, edges, True)
    node = _new(PrimNode)
    node._seq = next(_seq)
    node.prim = prim
    node.params = params or NO_PARAMS
    save = prim.save
    fns, nrs, needs, shapes, dtypes, saved, vcs = [], [], [], [], [], [], []
    i = 0
    for a in args:
        if not isinstance(a, Tensor):
            fns.append(None)
            nrs.append(0)
            needs.append(False)
            shapes.append(None)
            dtypes.append(None)
            saved.append(a)
            i += 1
            continue
        d = a._data
        shapes.append(d.shape)
        dt = _FROM_NP.get(d.dtype) if type(d) is _ndarray else None     # (others' dtypes
        dtypes.append(of_array(d.dtype) if dt is None else dt)     # may hash as NumPy's)
        hist = -1
        if a._requires_grad:
            fn = a.grad_fn
            if fn is not None and a._base is None:
                fns.append(fn)
                nrs.append(a._output_nr)
                hist = i
            else:
                fn, nr = gradient_edge(a)
                fns.append(fn)
                nrs.append(nr)
                hist = -2       # a leaf or a view: saved as the Tensor
            needs.append(True)
        else:
            fns.append(None)
            nrs.append(0)
            needs.append(False)
        if save is not None and i not in save:
            saved.append(_NOT_SAVED)
        elif hist == -2 or type(a) is not Tensor:
            saved.append(SavedTensor(a))
        else:
            saved.append((_COMPACT, d, a._vc[0], hist, len(vcs)))
            vcs.append(a._vc)
        i += 1
    saved_outs = None
    if prim.save_output:
        kept = []
        for o in outs:
            if prim.is_view:        # it will share its source's version counter
                kept.append(SavedTensor(o, True, len(kept)))
            else:
                kept.append((_COMPACT, o._data, o._vc[0], len(kept), len(vcs)))
                vcs.append(o._vc)
        saved_outs = tuple(kept)
    if prim.save_when is not None:
        for i in _unread(prim.save_when, needs):
            saved[i] = _NOT_SAVED
    _fill(node, needs, fns, nrs, shapes, dtypes, saved, saved_outs, vcs, outs)
    return _give_history(node, prim, outs)


def zeros(shape, dtype):
    """A plain tensor of zeros: the gradient autograd materialises for an output that got none."""
    return born_here(_t.make(default_backend().xp.zeros(shape, dtype=dtype.np)))


def _no_vjp(prim, i):
    which = "" if i is None else f" for input {i}"
    return RuntimeError(f"the derivative for '{prim.name}' is not implemented: primitive "
                        f"'{prim.name}' has no vjp rule{which} (declare vjp= in its Primitive)")



def validate_grads(node, grads):
    """Bring each gradient to its input's shape (sum over broadcast dims) and dtype."""
    shapes, dtypes = node.shapes, node.dtypes
    if len(grads) != len(shapes):
        raise RuntimeError(f"function {node.name()} returned an incorrect number of gradients "
                           f"(expected {len(shapes)}, got {len(grads)})")
    out = list(grads)
    for i, g in enumerate(grads):
        if g is None:
            continue
        shape = shapes[i]
        if shape is None:
            out[i] = None
            continue
        if g._lvl is None:
            d = g._data
            gshape, gdtype = d.shape, of_array(d.dtype)
        else:
            gshape, gdtype = tuple(g.shape), g.dtype
        if gshape != shape:
            g = sum_to_shape(g, shape, node, i)
        if gdtype is not dtypes[i]:
            if gdtype.is_complex and not dtypes[i].is_complex:
                g = g.real      # a real input's gradient is the real part (torch's handle_r_to_c)
            g = g.to(dtypes[i])
        out[i] = g
    return out


def sum_to_shape(g, shape, node, i):
    """Gradient `g` of input `i` of `node` summed to the input's `shape`; one that cannot
    come from broadcasting that shape raises torch's error."""
    if not broadcasts_to(shape, g.shape):
        raise RuntimeError(f"Function {node.name()} returned an invalid gradient at index {i} - "
                           f"got {list(g.shape)} but expected shape compatible with {list(shape)}")
    return sum_to(g, shape)


class AccumulateGrad(Node):
    """Leaf node: adds the incoming gradient into `variable.grad`."""

    def __init__(self, variable):
        # (Node.__init__ inlined: one is made per leaf and graph, often per forward)
        self._fns = self._nrs = ()
        self._seq = next(_seq) + _LEAF_FIRST    # as torch's: it runs as soon as it is ready
        self.variable = variable

    def run_hooks(self, g):
        """The leaf's tensor hooks applied to its incoming gradient."""
        for hook in self.variable._hooks or ():
            r = hook(g)
            if r is not None:
                g = checked_hook_result(hook, g, r)
        return g

    def accumulate(self, g, create_graph, owned=False):
        """`owned`: no one but the engine holds g's array, which a leaf without hooks may
        then take as its first `.grad` instead of a copy."""
        v = self.variable
        if g._lvl is not None and v._lvl is None:
            g = _t.autograd_self(g)     # a plain .grad holds a dual gradient's primal
        if v._hooks:
            g, owned = self.run_hooks(g), False
        accumulate_grad(v, g, create_graph, in_place=True, owned=owned)
        for hook in v._post_accumulate_hooks or ():
            hook(v)


# NOTE [concurrent accumulation]
# Backward passes may run in several threads into the same leaf (torch allows it and is
# exact). `.grad += g` is a read-modify-write (NumPy releases the GIL inside it), so every
# accumulation into a `.grad` holds this lock; hooks run outside it.
_accumulate_lock = threading.Lock()


def accumulate_grad(t, g, create_graph, in_place, owned=False):
    """`t.grad += g` under the lock. Without create_graph the first grad is a fresh copy (or
    g itself where it is `owned`, the engine's alone) and a leaf's later ones are added in
    place (its version bumped: whatever saved the old grad notices); with create_graph, or
    `in_place=False`, `.grad` becomes a new tensor."""
    with _accumulate_lock:
        grad = t.grad
        if grad is None:
            t.grad = g if create_graph or owned else _fresh(g)
        elif create_graph:
            t.grad = grad + g
        elif not in_place:
            t.grad = grad + g.detach()
        else:
            try:
                grad._data += g._data if g._lvl is None else g.detach()._data
            except ValueError:      # a .grad of another shape (set before `.data` changed)
                grad.add_(g.detach())   # raises torch's error
            grad._vc[0] += 1


def checked_hook_result(hook, g, r):
    """A tensor hook's replacement gradient must look like the one it replaces."""
    if not isinstance(r, Tensor):
        raise TypeError(f"hook '{getattr(hook, '__name__', hook)}' returned a "
                        f"{type(r).__name__}, expected a Tensor or None")
    if r.shape != g.shape:
        raise RuntimeError(f"hook '{getattr(hook, '__name__', hook)}' has changed the size of "
                           "value")
    return r


def _fresh(g):
    """A history-free copy to own as `.grad` (grads may alias each other or user tensors)."""
    if g._lvl is not None:
        return g.detach()
    data = g._data
    if type(data) is not numpy_backend.array_type and not hasattr(data, "copy"):
        return _t.make(backend_of(data).xp.asarray(data, copy=True))   # the standard's copy
    return _t.make(data.copy())


def accumulator(t):
    """The (cached) AccumulateGrad node of leaf `t`."""
    ref = t._accum
    node = ref() if ref is not None else None
    if node is None:
        node = AccumulateGrad(t)
        t._accum = weakref.ref(node)
    return node


def gradient_edge(t):
    if t._lvl is not None:
        t = _t.autograd_self(t)
    if t._base is not None and t._vc[0] != t._view_version:
        refresh_view(t)
    if t.grad_fn is not None:
        return (t.grad_fn, t._output_nr)
    if t._requires_grad:
        return (accumulator(t), 0)
    return None


def register_tensor_hook(t, hook):
    if not t._requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if t.grad_fn is None:
        t._hooks = (t._hooks or []) + [hook]
        return _TensorHookHandle(t, hook, None)
    node = t.grad_fn
    hooks = _tensor_hooks(node, t._output_nr)
    # user hooks run before the retain_grad hook, whatever the order they were added in
    at = len(hooks) - (bool(hooks) and getattr(hooks[-1], "_retains", None) is not None)
    hooks.insert(at, hook)
    return _TensorHookHandle(t, hook, node)


def retain_grad_hook(t):
    """Keep the gradient reaching non-leaf `t` in `t.grad`, accumulated as a leaf's."""
    ref = weakref.ref(t)

    def hook(g):
        t = ref()
        if t is None or t.grad_fn is None:
            return
        # the engine runs in create_graph mode; a retained grad is replaced, as torch's
        accumulate_grad(t, g, grad_mode.state.grad_enabled, in_place=False)
    hook._retains = ref
    _tensor_hooks(t.grad_fn, t._output_nr).append(hook)


def _tensor_hooks(node, nr):
    """The list of hooks on `node`'s output `nr`, made where there is none."""
    if node._tensor_hooks is None:
        node._tensor_hooks = {}
        node._watched = True
    return node._tensor_hooks.setdefault(nr, [])


def move_retain_hook(t, old_node, old_nr):
    """An in-place write gave `t` a new grad_fn: its retain_grad hook follows (as torch's), so
    `t.grad` is the gradient of the new value; its other hooks stay with the old one."""
    hooks = (old_node._tensor_hooks or {}).get(old_nr, ())
    for h in hooks:
        if getattr(h, "_retains", None) is not None and h._retains() is t:
            hooks.remove(h)
            _tensor_hooks(t.grad_fn, t._output_nr).append(h)
            return


def register_post_accumulate_hook(t, hook):
    if not t._requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if t.grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    t._post_accumulate_hooks = (t._post_accumulate_hooks or []) + [hook]
    return _Handle(t, "_post_accumulate_hooks", hook)


class _TensorHookHandle:
    def __init__(self, t, hook, node):
        self.t, self.hook, self.node = weakref.ref(t), hook, node

    def remove(self):
        if self.node is not None:
            for lst in (self.node._tensor_hooks or {}).values():
                if self.hook in lst:
                    lst.remove(self.hook)
        else:
            t = self.t()
            if t is not None and t._hooks and self.hook in t._hooks:
                t._hooks = [h for h in t._hooks if h is not self.hook]
