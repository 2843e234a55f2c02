"""The backward engine: iterative, dependency-counted, runs each node once.

# NOTE [engine]
Gradients flowing through the engine are tensors of whatever level the graph
belongs to: plain tensors for eager autograd, the level below for a
`func.grad` graph. The engine only adds them and calls nodes, so one engine
serves both. No recursion anywhere: a chain of 10^6 nodes is fine.
"""
import heapq
import threading
from sys import getrefcount as _getrefcount

from .. import _tensor as _t
from ..backends import numpy_backend, silent, QUIET_NUMPY
from ..core import grad_mode
from ..core.autocast_mode import state as _autocast
from ..core.dispatch import _tls as _dispatch_tls
from . import graph as _graph
from .anomaly_mode import state as anomaly, apply_checked
from .graph import AccumulateGrad, gradient_edge, checked_hook_result, FREED_MSG  # noqa: F401
from .graph import _engine_state, _COUNTS_KNOWN, PrimNode, next_nodes


def _tensors(x, what, allow_none=True):
    """`x` (a Tensor or a sequence) as a tuple; None entries only where `allow_none`."""
    if isinstance(x, _t.Tensor):
        return (x,)
    if x is None:
        if allow_none:
            return ()
        raise TypeError(f"{what} must be a Tensor or a sequence of Tensors, got None")
    x = tuple(x)
    for i, v in enumerate(x):
        if v is None and allow_none:
            continue
        if not isinstance(v, _t.Tensor):
            raise TypeError(f"{what} must be Tensors, got {type(v).__name__} at index {i}")
    return x


def _root_grads(roots, grads, create_graph):
    if grads is None:
        grads = (None,) * len(roots)
    grads = (grads,) if isinstance(grads, _t.Tensor) else tuple(grads)
    if len(grads) != len(roots):
        raise RuntimeError(f"got {len(roots)} tensors and {len(grads)} gradients")
    out = []
    for i, (r, g) in enumerate(zip(roots, grads)):
        if g is None:
            d = r._data
            if type(d) is _ndarray and d.size == 1 and d.dtype.kind == "f" and \
                    r._lvl is None and not create_graph and not _dispatch_tls.interpreters:
                # the engine's own ones (NOTE [lean engine])
                g = _np.ones(d.shape, d.dtype) if d.ndim else _np.array(1, d.dtype)
                out.append(g)
                continue
            if r.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if not r.dtype.is_floating_point:      # complex ones too, as torch
                raise RuntimeError("grad can be implicitly created only for real scalar outputs "
                                   f"but got {r.dtype}")
            g = r._ones_like()
        else:
            if not isinstance(g, _t.Tensor):
                g = r.new_tensor(g)
            gd, rd = g._data, r._data
            if type(gd) is _ndarray and type(rd) is _ndarray and g._lvl is None and \
                    r._lvl is None:     # (plain arrays: their shapes, no Size objects)
                same = gd.shape == rd.shape
            else:
                same = g.shape == r.shape
            if not same:
                raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of "
                                   f"{g.shape} and output[{i}] has a shape of {r.shape}.")
        out.append(g)
    return out


def _edges(roots):
    edges = []
    for i, r in enumerate(roots):
        e = gradient_edge(r)
        if e is None:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have "
                               "a grad_fn")
        edges.append(e)
    return edges


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate d(tensors)/d(leaves) into the leaves' `.grad`."""
    roots = _tensors(tensors, "backward(): tensors", allow_none=False)
    if retain_graph is None:
        retain_graph = create_graph
    edges = _edges(roots)
    grads = _root_grads(roots, grad_tensors, create_graph)
    if inputs is not None:
        inputs = _tensors(inputs, "backward(): inputs", allow_none=False)
        if not inputs:
            raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    targets = None
    if inputs:
        targets = {}
        for t in inputs:
            e = gradient_edge(t)
            if e is None:
                raise RuntimeError("One of the differentiated Tensors does not require grad")
            if not isinstance(e[0], AccumulateGrad):
                t.retain_grad()
            targets.setdefault(e[0], set()).add(e[1])
    run(edges, grads, retain_graph, create_graph, targets=targets)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, materialize_grads=False):
    """Gradients of `outputs` with respect to `inputs`, returned (not accumulated)."""
    outs = _tensors(outputs, "grad(): outputs", allow_none=False)
    ins = _tensors(inputs, "grad(): inputs", allow_none=False)
    if not ins:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    if allow_unused is None:
        allow_unused = materialize_grads
    if retain_graph is None:
        retain_graph = create_graph
    edges = _edges(outs)
    grads = _root_grads(outs, grad_outputs, create_graph)
    capture = []
    for t in ins:
        e = gradient_edge(t)
        if e is None:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
        capture.append(e)
    result = run(edges, grads, retain_graph, create_graph, capture=capture)
    for i, r in enumerate(result):
        if r is None:
            if materialize_grads:
                result[i] = ins[i]._zeros_like()
            elif not allow_unused:
                raise RuntimeError(f"The differentiated Tensor at index {i} appears to not have "
                                   "been used in the graph. Set allow_unused=True if this is the "
                                   "desired behavior.")
    return tuple(result)


_ndarray, _np = numpy_backend.array_type, numpy_backend.xp
_quiet, _loud, _IGNORE_ALL = QUIET_NUMPY or (None, None, None)
_ARRAY_APPLY = _graph._array_apply      # (the profiler swaps in the composite rules)


class _RunState(threading.local):
    checkpoint_valid = True     # False while a run returns grads or fills only some leaves


_run_state = _RunState()


def is_checkpoint_valid():
    """Whether the running backward accumulates into every leaf (.backward() without
    `inputs`): a reentrant checkpoint needs that, since it backpropagates to closure
    parameters it cannot report (torch's `autograd._is_checkpoint_valid`)."""
    return _run_state.checkpoint_valid


def run(root_edges, root_grads, keep_graph, create_graph, capture=None, targets=None):
    """Execute the graph. `capture` edges are returned instead of accumulated;
    `targets` restricts accumulation to some leaves (backward(inputs=...))."""
    if len(root_edges) == 1 and targets is None and (capture is None or len(capture) == 1):
        root, nr = root_edges[0]
        if not nr:
            lean = _lean(create_graph)
            if capture is None or _chain_to(root, capture[0], lean):
                if lean:
                    return _run_chain(root, root_grads[0], keep_graph, capture)
                return _run_tensor_chain(root, root_grads[0], keep_graph, create_graph, capture)
    return _run_graph(root_edges, root_grads, keep_graph, create_graph, capture, targets)


def _run_graph(root_edges, root_grads, keep_graph, create_graph, capture, targets):
    """`run` for any graph: dependency counts, a ready heap, one buffer per node."""
    root_nodes = [root_edges[0][0]] if len(root_edges) == 1 else \
        list(dict.fromkeys(n for n, _ in root_edges))
    if capture is not None:
        deps, needed = _plan(root_nodes, {n for n, _ in capture})
    elif targets is not None:
        deps, needed = _plan(root_nodes, targets)
    else:
        deps, needed = _dependencies(root_nodes), None

    buffers = {}
    for (node, nr), g in zip(root_edges, root_grads):
        buf = buffers.get(node)
        if buf is None:
            buf = buffers[node] = [None] * node.n_outputs
        old = buf[nr]
        buf[nr] = g if old is None else _sum(old, g)

    captured = {} if capture is not None else None
    ready = [(-n._seq, n) for n in root_nodes if deps.get(n, 0) == 0]
    heapq.heapify(ready)
    outer_valid, outer_donor = _run_state.checkpoint_valid, _engine_state.donor
    _run_state.checkpoint_valid = capture is None and targets is None
    try:
        _execute(ready, buffers, deps, needed, keep_graph, create_graph, captured,
                 set(capture) if capture is not None else (), targets)
    finally:
        _run_state.checkpoint_valid = outer_valid
        _engine_state.donor = outer_donor
    if capture is None:
        return None
    out = []
    for e in capture:
        g = captured.get(e)
        out.append(_t.make(g) if type(g) is _ndarray else g)
    return out


def _dependencies(root_nodes):
    """How many edges of the nodes that will run point at each node."""
    deps = {}
    seen = set(root_nodes)
    stack = list(root_nodes)
    while stack:
        for nxt in next_nodes(stack.pop()):
            if nxt is None:
                continue
            n = deps.get(nxt)
            if n is None:
                deps[nxt] = 1
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
            else:
                deps[nxt] = n + 1
    return deps


# NOTE [needed nodes]
# Where only some nodes are wanted (autograd.grad's inputs, backward(inputs=)), a node runs
# only if it leads to one, and computes only the input gradients that lead to one, as torch's
# nodes do. One iterative post-order walk decides, after all of a node's successors, its flags:
# WANTED, LEADS (a successor is needed) and PARTIAL (another is not: its needs_input_grad is
# narrowed); a node is needed when WANTED or LEADS. The same walk counts the dependencies:
# every node reaching a needed node is needed, so counting every edge counts, for the nodes
# that run, the edges of the nodes that run.
_WANTED, _LEADS, _PARTIAL = 1, 2, 4
_NEEDED = _WANTED | _LEADS


def _plan(root_nodes, wanted):
    """The dependencies and the flags of NOTE [needed nodes]."""
    deps = {}
    needed = {}
    for root in root_nodes:
        if root in needed:      # explored from an earlier root (a later output may descend
            continue            # from an earlier one: its own walk covers it)
        stack = [(root, iter(next_nodes(root)))]
        while stack:
            node, it = stack[-1]
            for nxt in it:
                if nxt is None:
                    continue
                deps[nxt] = deps.get(nxt, 0) + 1
                if nxt not in needed:
                    if nxt._nrs:     # (one per edge)
                        stack.append((nxt, iter(next_nodes(nxt))))
                        break
                    needed[nxt] = _WANTED if nxt in wanted else 0
            else:
                stack.pop()
                flags = _WANTED if node in wanted else 0
                for nxt in next_nodes(node):
                    if nxt is not None:
                        flags |= _LEADS if needed[nxt] & _NEEDED else _PARTIAL
                needed[node] = flags
    return deps, needed


# NOTE [engine buffers]
# A node's incoming gradients wait in a list with one slot per output of the node; the
# first gradient of a slot is stored as is, the second makes a new sum, and further ones
# are added into that sum in place (no one else holds it) when no graph is being built.
def _sum(old, g):
    """old + g for two gradients of one slot, arrays or tensors."""
    if type(old) is _ndarray and type(g) is _ndarray and old.shape == g.shape and \
            old.dtype == g.dtype:
        return _add_arrays(_np, old, g)
    return (_t.make(old) if type(old) is _ndarray else old) + \
        (_t.make(g) if type(g) is _ndarray else g)


def _add(xp, a, b, out=None):
    r = xp.add(a, b, out=out)
    return r if type(r) is _ndarray else xp.asarray(r)     # (0-d: NumPy gives a scalar)


_add_arrays = silent(_add)      # inf - inf is nan, without NumPy's warning (as every op)


def _add_into(total, g):
    """`total += g` where both are plain arrays of one type, shape and dtype (the engine's
    own sum, which no one else sees: the same additions in the same order, one buffer less
    per term); False where that does not apply (other backends, broadcasting, promotion)."""
    a = total if type(total) is _ndarray else total._data
    b = g if type(g) is _ndarray else g._data
    if type(a) is not _ndarray or type(b) is not _ndarray or a.shape != b.shape \
            or a.dtype != b.dtype:
        return False
    _add_arrays(_np, a, b, out=a)
    return True


def _tensor(g):
    return _t.make(g) if type(g) is _ndarray else g


# NOTE [lean engine]
# Without a graph being built (no create_graph, transform, autocast, anomaly mode or
# profiler), gradients stay NumPy arrays in the engine's buffers: a node of a primitive with
# an array-level vjp and no hooks runs that vjp on them directly (`graph.array_vjp`), and
# tensors are made only where someone sees a gradient: hooks, nodes with composite rules
# (custom Functions, ops without array rules), captured gradients and leaves. A leaf without
# hooks takes an array that only the engine holds as its first `.grad` rather than a copy
# (by reference count, as NOTE [spare buffers]). A node whose successor is the only node
# ready runs next without the heap (a chain never touches it). NumPy's error state is
# switched to "ignore" once for a run of such nodes rather than by each rule (their `plain`
# functions run), and back before anything else runs (hooks, composite rules, leaves).
def _lean(create_graph):
    """Whether backward may run array-level rules on arrays (NOTE [lean engine]): no graph is
    being built and nothing watches the rules run (anomaly mode, the profiler)."""
    return not create_graph and not anomaly.enabled and not _dispatch_tls.interpreters and \
        not _autocast.enabled and _apply is _default_apply and \
        _graph._array_apply is _ARRAY_APPLY


def _execute(ready, buffers, deps, needed, keep_graph, create_graph, captured, capture_set,
             targets):
    pop, push = heapq.heappop, heapq.heappush
    lean = _lean(create_graph)
    owned_refs = 2 if lean and _COUNTS_KNOWN else 0   # a `g` here and getrefcount's argument
    spare = not keep_graph and _COUNTS_KNOWN
    sums = set()    # buffer slots holding a sum the engine made: later terms go in place
    after = None    # the next node, where it was the only one ready
    mode = grad_mode.state
    outer_mode, mode.grad_enabled = mode.grad_enabled, bool(create_graph)
    quiet = lean and QUIET_NUMPY is not None
    hush = None     # the error state's token while it is switched
    try:
        while True:
            if after is not None:
                node, after = after, None
            elif ready:
                node = pop(ready)[1]
            else:
                break
            buf = buffers.pop(node, None)
            if sums and buf is not None:
                for nr in range(len(buf)):
                    sums.discard((node, nr))
            flags = needed[node] if needed is not None else _LEADS
            if type(node) is AccumulateGrad:
                if hush is not None:
                    _loud(hush)
                    hush = None
                g = None if buf is None else buf[0]
                buf = None
                if g is None:
                    continue
                if captured is not None:
                    if (node, 0) in capture_set:
                        captured[(node, 0)] = node.run_hooks(_tensor(g))
                elif targets is None or node in targets:
                    if type(g) is _ndarray:
                        # owned where only `g` here holds it (NOTE [lean engine])
                        owned = _getrefcount(g) == owned_refs and g.base is None and \
                            g.flags.writeable
                        node.accumulate(_t.make(g), False, owned)
                    else:
                        node.accumulate(g, create_graph)
                g = None
                continue
            in_grads = None
            if lean and buf is not None and type(node) is PrimNode and flags & _LEADS and \
                    not node._watched and node.prim.array_vjp is not None and len(buf) == 1 and \
                    (not capture_set or (node, 0) not in capture_set) and \
                    (targets is None or node not in targets):
                needs = node.needs_input_grad if not flags & _PARTIAL else \
                    _narrowed(node, needed)
                ga = buf[0]
                buf = None
                if quiet and hush is None:
                    hush = _quiet(_IGNORE_ALL)
                if ga is None:
                    in_grads = ()
                elif type(ga) is _ndarray:
                    # ga: held by `ga` here, in array_vjp and in _spare, and the argument
                    in_grads = _graph.array_vjp(node, ga, needs, 4 if spare else 0, quiet)
                    if in_grads is None:
                        buf = [_t.make(ga)]
                elif ga._lvl is None and type(ga._data) is _ndarray:
                    g, ga = ga, ga._data
                    # g: held by `g` here and the argument; ga by g, `ga` here, in
                    # array_vjp and _spare, and the argument
                    in_grads = _graph.array_vjp(
                        node, ga, needs, 5 if spare and _getrefcount(g) == 2 else 0, quiet)
                    if in_grads is None:
                        buf = [g]
                    g = None
                else:
                    buf = [ga]
                ga = None
                if in_grads is not None and not keep_graph:
                    node._saved = node._saved_outs = None    # (PrimNode.release, inlined)
            if in_grads is None:
                if hush is not None:
                    _loud(hush)
                    hush = None
                if buf is not None:
                    for nr, g in enumerate(buf):
                        if type(g) is _ndarray:
                            buf[nr] = _t.make(g)
                    g = None
                in_grads = _run_node(node, buf, flags, needed, keep_graph, captured,
                                     capture_set, targets)
                buf = None
                if in_grads is None:        # the node stops here
                    continue
            nrs = node._nrs
            for i, nxt in enumerate(next_nodes(node)):
                if nxt is None or (needed is not None and not needed[nxt] & _NEEDED):
                    continue
                g = in_grads[i] if in_grads else None
                if g is not None:
                    b = buffers.get(nxt)
                    if b is None:
                        b = buffers[nxt] = [None] * nxt.n_outputs
                    nr = nrs[i]
                    old = b[nr]
                    if old is None:
                        b[nr] = g
                    elif (nxt, nr) in sums and _add_into(old, g):
                        pass
                    else:
                        b[nr] = _sum(old, g)
                        if not create_graph:
                            sums.add((nxt, nr))
                n = deps[nxt] - 1
                deps[nxt] = n
                if n == 0:
                    if after is None and not ready:
                        after = nxt
                    else:
                        if after is not None:
                            push(ready, (-after._seq, after))
                            after = None
                        push(ready, (-nxt._seq, nxt))
            g = old = b = in_grads = None   # the gradients deposited are their buffers' alone
    finally:
        if hush is not None:
            _loud(hush)
        mode.grad_enabled = outer_mode


# NOTE [chains]
# Most graphs that backward or autograd.grad see in a loop are chains: from the root, every
# node (a primitive's, a custom Function's) has one edge that leads on (the others None:
# constants, inputs that need no gradient), ending at one leaf (the captured one, for grad).
# Under the lean engine's conditions, with neither hooks nor captures on the way, such a
# chain runs as a loop of array-level vjps (other nodes by `_run_node`, as the graph engine
# runs them) with no dependency counts, heap or buffers: what `_execute` does for it, step
# for step (the same rules on the same arrays, the same spare buffers, saved values freed
# as each node runs). The loop finds the chain as it goes: each node of it has exactly one
# edge into it from the nodes that run (those before it), so running it at once is what the
# graph engine would do, and at the first node that is no chain node (hooks, several edges
# on, several outputs) or whose rule declines its values, `_run_graph` takes the rest from
# that node. Only autograd.grad walks the chain first (`_chain_to`): it must end at the
# captured leaf, or no node may run (torch's engine runs only nodes leading to an input).
def _chain_node(node, lean=True):
    """The index of the one edge of `node` that leads on, where `node` is a node of NOTE
    [chains] (`lean`: of the lean engine's, whose primitives have array-level rules); None
    where it is not."""
    if node._watched or node.n_outputs != 1 or \
            lean and type(node) is PrimNode and node.prim.array_vjp is None:
        return None
    fns = node._fns
    if type(fns) is not tuple:      # its one edge to a node is its first (NOTE [node footprint])
        return None if node._nrs[0] else 0
    if fns.count(None) != len(fns) - 1:
        return None
    k = 0
    while fns[k] is None:
        k += 1
    return None if node._nrs[k] else k


def _chain_to(node, leaf_edge, lean=True):
    """Whether the chain from `node` (NOTE [chains]) ends at the leaf of `leaf_edge`."""
    while type(node) is not AccumulateGrad:
        if lean and _bare_chain_node(node):
            node = node._fns
            continue
        k = _chain_node(node, lean)
        if k is None:
            return False
        node = next_nodes(node)[k]
    return leaf_edge == (node, 0)


def _bare_chain_node(node):
    """`_chain_node(node) == 0` in its common case: a primitive's node with an array-level
    rule whose only edge to a node is its first (kept bare, NOTE [node footprint])."""
    return type(node) is PrimNode and not node._watched and node.n_outputs == 1 and \
        type(node._fns) is not tuple and not node._nrs[0] and node.prim.array_vjp is not None


def _run_chain(node, g, keep_graph, capture):
    """`run` from root `node` and its gradient `g` for a chain of NOTE [chains], handing the
    rest to `_run_graph` where the chain ends before a leaf."""
    mode = grad_mode.state
    outer_mode, mode.grad_enabled = mode.grad_enabled, False
    refs = 4 if not keep_graph and _COUNTS_KNOWN else 0   # NOTE [spare buffers]
    hush = None     # NumPy's error state switched for a run of array-level rules
    quiet = QUIET_NUMPY is not None
    array_vjp = _graph.array_vjp
    outer_valid, outer_donor = _run_state.checkpoint_valid, _engine_state.donor
    _run_state.checkpoint_valid = capture is None
    try:
        while type(node) is not AccumulateGrad:
            if _bare_chain_node(node):
                k = 0
            else:
                k = _chain_node(node)
                if k is None:
                    break
            if type(node) is not PrimNode:      # a custom Function's or a view's node
                if hush is not None:
                    _loud(hush)
                    hush = None
                in_grads = _run_bare(node, [_tensor(g)], keep_graph)
            else:
                if hush is None and quiet:
                    hush = _quiet(_IGNORE_ALL)
                if type(g) is _ndarray:
                    # g: held by `g` here, in array_vjp and in _spare, and the argument
                    in_grads = array_vjp(node, g, node.needs_input_grad, refs, quiet)
                elif g._lvl is None and type(g._data) is _ndarray:
                    in_grads = array_vjp(node, g._data, node.needs_input_grad, 0, quiet)
                else:
                    in_grads = None
                if in_grads is None:    # the rule declines: the graph engine takes it on
                    break
                if not keep_graph:
                    node._saved = node._saved_outs = None
            nxt = node._fns
            if type(nxt) is tuple:
                nxt = nxt[k]
            g = in_grads[k] if in_grads else None
            in_grads = None
            if g is None:       # no gradient goes on: the rest of the graph is released
                return _stopped(nxt, keep_graph, capture)
            node = nxt
        if hush is not None:
            _loud(hush)
            hush = None
        if type(node) is not AccumulateGrad:
            mode.grad_enabled = outer_mode
            return _run_graph([(node, 0)], [_tensor(g)], keep_graph, False, capture, None)
        if capture is not None:
            return [node.run_hooks(_tensor(g))]
        if type(g) is _ndarray:
            # owned where only `g` here holds it (NOTE [lean engine])
            owned = _getrefcount(g) == 2 and g.base is None and g.flags.writeable
            node.accumulate(_t.make(g), False, owned)
        else:
            node.accumulate(g, False)
        return None
    finally:
        if hush is not None:
            _loud(hush)
        mode.grad_enabled = outer_mode
        _run_state.checkpoint_valid = outer_valid
        _engine_state.donor = outer_donor


def _stopped(node, keep_graph, capture):
    """A chain's result where no gradient reaches `node`: it and the graph below are released
    (unless kept), as the graph engine releases the nodes it runs with no gradient."""
    if not keep_graph:
        for rest in _dependencies([node]):
            rest.release()
        node.release()
    return None if capture is None else [None]


def _run_bare(node, buf, keep_graph):
    """`_run_node` with `_default_apply` for a node of a chain (NOTE [chains]: no hooks, one
    output) and its gradient in the list `buf` (as `_run_node` gets it, so that reference counts
    read the same: NOTE [spare buffers]), outside anomaly mode and the profiler: its input
    gradients."""
    if not keep_graph:
        _engine_state.donor = node      # NOTE [spare buffers]
    in_grads = node.apply(buf)
    if not keep_graph:
        _engine_state.donor = None
        node.release()
    return in_grads


def _run_tensor_chain(node, g, keep_graph, create_graph, capture):
    """`run` for a chain of NOTE [chains] outside the lean engine's conditions (a graph is
    being built: create_graph, a transform's backward): each node run by `_run_node` on
    tensor gradients, as the graph engine runs it, without its dependency counts, heap or
    buffers; `_run_graph` takes the rest where the chain ends before a leaf."""
    mode = grad_mode.state
    outer_mode, mode.grad_enabled = mode.grad_enabled, bool(create_graph)
    outer_valid, outer_donor = _run_state.checkpoint_valid, _engine_state.donor
    _run_state.checkpoint_valid = capture is None
    g = _tensor(g)
    bare = _apply is _default_apply and not anomaly.enabled
    try:
        while type(node) is not AccumulateGrad:
            k = _chain_node(node, False)
            if k is None:
                return _run_graph([(node, 0)], [g], keep_graph, create_graph, capture, None)
            in_grads = _run_bare(node, [g], keep_graph) if bare else \
                _run_node(node, [g], _LEADS, None, keep_graph, None, (), None)
            g = in_grads[k] if in_grads else None
            in_grads = None
            if g is None:       # no gradient goes on: the rest of the graph is released
                return _stopped(next_nodes(node)[k], keep_graph, capture)
            node = next_nodes(node)[k]
        if capture is not None:
            return [node.run_hooks(g)]
        node.accumulate(g, create_graph)
        return None
    finally:
        mode.grad_enabled = outer_mode
        _run_state.checkpoint_valid = outer_valid
        _engine_state.donor = outer_donor


def _run_node(node, buf, flags, needed, keep_graph, captured, capture_set, targets):
    """Run a node with tensor gradients (hooks, captures, composite rules): its input
    gradients, or None where it hands nothing on."""
    if capture_set and buf is not None:
        # as torch: a non-leaf input's grad is captured after its tensor hooks ran when its
        # node runs no further, before them when it does
        hooked = node._tensor_hooks and not flags & _LEADS
        if hooked:
            _run_tensor_hooks(node, buf)
        for nr, g in enumerate(buf):
            if g is not None and (node, nr) in capture_set:
                captured[(node, nr)] = g
        if hooked:
            return None
    if node._tensor_hooks and buf is not None:
        _run_tensor_hooks(node, buf)
    if not flags & _LEADS:
        if targets is not None and node in targets and buf is not None:
            # a non-leaf of backward(inputs=) leading to no other input: torch runs its
            # node (hooks, freed values and all) and drops what it computed
            _apply(node, buf)
            if not keep_graph:
                node.release()
        return None
    keep = None
    if flags & _PARTIAL and type(node) is PrimNode:
        keep = node.needs_input_grad
        node.needs_input_grad = _narrowed(node, needed)
    try:
        if buf is None:
            in_grads = ()
        elif anomaly.enabled:
            in_grads = apply_checked(node, _apply, buf)
        else:
            if not keep_graph and not node._post_hooks:     # (they see the grads)
                _engine_state.donor = node      # NOTE [spare buffers]
            in_grads = _apply(node, buf)
            _engine_state.donor = None
    finally:
        if keep is not None:
            node.needs_input_grad = keep
    del buf
    if not keep_graph:
        node.release()
    return in_grads


def _run_tensor_hooks(node, buf):
    for nr, fns in node._tensor_hooks.items():
        g = buf[nr]
        if g is None:
            continue
        for fn in fns:
            r = fn(g)
            if r is not None:
                g = checked_hook_result(fn, g, r)
        buf[nr] = g


def _narrowed(node, needed):
    """A primitive node's needs_input_grad less the inputs that lead to no requested input:
    torch's nodes compute only those, so a rule with no derivative for another input (igamma's
    `a`) does not raise, and no work is done for them."""
    needs = list(node.needs_input_grad)
    pos = node._edge_pos
    for e, fn in enumerate(next_nodes(node)):
        i = e if pos is None else pos[e]
        if needs[i] and (fn is None or not needed[fn] & _NEEDED):
            needs[i] = False
    return tuple(needs)


def swap_apply(apply):
    """Make `apply(node, grads)` the way the engine runs a node; returns the previous one. The
    profiler times backward nodes this way while it runs, so nothing is paid when it is off."""
    global _apply
    prev, _apply = _apply, apply
    return prev


def _default_apply(node, grads):
    """The node's input gradients from its output gradients (a list, None where none came)."""
    if node._pre_hooks:
        for hook in node._pre_hooks:
            r = hook(tuple(grads))
            if r is not None:
                grads = list(r)
    if node.n_outputs != 1:
        for g in grads:
            if g is not None:
                break
        else:
            return ()
        grads = node.materialize(grads)
    elif grads[0] is None:
        return ()
    in_grads = node.apply(grads)
    if node._post_hooks:
        for hook in node._post_hooks:
            r = hook(tuple(in_grads), tuple(grads))
            if r is not None:
                in_grads = list(r)
    return in_grads


_apply = _default_apply
