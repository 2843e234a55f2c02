"""Primitives, the interpreter stack, and the one dispatcher every op goes through.

# NOTE [levels]
A transform (`func.grad`, `func.jvp`, `func.vmap`, `forward_ad.dual_level`)
pushes an interpreter; tensors it creates are wrappers that remember it. A
primitive is handled by the highest live interpreter among its arguments: that
interpreter unwraps its own tensors, binds the primitive again (so lower
levels see it) and wraps the results. Tensors of lower levels are constants to
it. With no transform active the call goes straight to the eager interpreter,
the fast path: the array computation plus, when needed, one graph node.
"""
import threading
from functools import partial

from .. import _tensor as _t
from ..backends import silent


class _Stack(threading.local):
    def __init__(self):
        self.interpreters = []


_tls = _Stack()
_entered = [0]      # transforms entered so far: tensors note it at birth (`born_here`)


class Primitive:
    """One differentiable operation: `impl` on raw arrays plus its rules, all given here.

    vjp: either a tuple with one function per input, `f(ctx, *gs, **params)`,
         giving that input's cotangent, or one function returning a tuple.
    jvp: same shape, giving each input tangent's contribution to the output
         tangent(s) (None: no contribution), or one function `f(ctx, *ts, **params)`
         over all tangents (missing ones passed as zeros). Contributions are
         broadcast and cast to the outputs' shapes and dtypes by the jvp level.
    batch: `f(prim, args, bdims, **params) -> (outputs, out_bdims)`. The rule gets the
         primitive first, so one shared rule (`ops/_rules.py: elementwise`) serves every
         primitive of a kind; `self.batch` holds it bound to this primitive.
    linear: the op is linear in its tensor inputs, so its jvp is the op itself applied to
         the tangents (views, sum, cat, gather...).
    zero_derivative: piecewise constant (sign, floor, round): the cotangent and tangent of
         the one input are zeros (`g * 0`, as torch's, so they keep inf/nan and the graph).
    save: indices of inputs the vjp reads (default: all); save_output: the vjp
    reads the output(s). Unsaved tensors are not kept alive by the graph.
    save_when: per input, the inputs whose cotangent rules read it (None: always saved):
    an input is saved only when one of them requires grad, as torch's nodes (`x * c` with
    a constant c keeps c alone; `_saved_self` is then None).
    node_name: the grad_fn's name, or a function of the node where torch's name
    depends on the overload (PowBackward0/1/2).
    nondiff_inputs: inputs that are never edges of the node (where's condition);
    number_edges: a Python number argument is an edge (None, 0) of the node, as torch's
    wrapped-number tensors are (add, mul, where); False for ops whose torch overload takes
    a Scalar (pow, fmod, remainder). Both only shape `next_functions` as torch's.
    arg_names: torch's names of the inputs, for the node's `_saved_<name>` attributes
    (default: self, other).
    complex: the impl and the vjp and jvp are verified for complex inputs (NOTE [complex
    autograd]); otherwise a complex input raises `not_complex`, never a wrong value or gradient.
    jvp_reads_primals: whether the tangents of the outputs depend on the primals through
    torch's forward formula, so that they require grad where a primal does (func/jvp_level.py
    NOTE [tangents that require grad]). None (default): as the jvp rule reads them (a linear
    rule reads none); False where the rule reads them only to compare (where, clamp, max);
    True where only the term of an input without tangent reads them (fmod, remainder).
    materialize_grads: False when the vjp of a multi-output primitive gets None for outputs
    that received no cotangent (torch's undefined gradients): its formula then differs, as
    svd's and eigh's do when only the singular values or eigenvalues are used.
    array_vjp: `f(xp, g, inputs, outs, needs, shapes, spare, **params)` on NumPy arrays
    (inputs and outs as saved, numbers as given, None where not saved; `shapes` the inputs'
    shapes) giving one cotangent array or None per input: level 0's backward uses it when
    no graph is being built (no create_graph, no transform), where the composite vjp would
    dispatch several primitives; it runs silent, as impls do; it returns None where it does
    not take the values it got (the composite rule runs). `spare` lists buffers it may
    write its results into (`ops/_rules.py: take`; engine NOTE [spare buffers]). It must
    compute exactly what `vjp` computes, operation for operation, so gradients stay bit for
    bit.
    float_op: the impl's operation on two Python floats (`operator.mul`), where that is the
    same IEEE double operation NumPy's float64 loop performs (+, -, *, /): level 0's
    one-frame ops compute 0-d float64 tensors and Python floats with it, as NumPy's
    scalar path costs 0.5 us (autograd/eager.py NOTE [one-frame ops]).
    plain (read off impl): the impl without its wrappers that silence floating-point warnings
    and translate errors (`backends.silent`, `impl.plain`): level 0's one-frame ops call it on
    float32/float64 NumPy arrays with NumPy silenced, and a ValueError from it sends the call
    down the general path (autograd/eager.py NOTE [one-frame ops]).

    A rule left out is None: the level that needs it raises an error naming the primitive
    and the rule (vmap can opt in to a per-example loop instead).
    """

    def __init__(self, name, impl, *, vjp=None, jvp=None, batch=None, linear=False,
                 zero_derivative=False, save=None, save_output=False, multiple_results=False,
                 differentiable=True, node_name=None, nondiff_outputs=(), is_view=False,
                 nondiff_inputs=(), number_edges=True, arg_names=("self", "other"),
                 complex=False, jvp_reads_primals=None, materialize_grads=True,
                 array_vjp=None, save_when=None, float_op=None):
        if (linear or zero_derivative) and (jvp is not None or linear == zero_derivative
                                            or zero_derivative and vjp is not None):
            raise TypeError(f"primitive '{name}': linear=True gives the jvp and "
                            "zero_derivative=True the vjp and jvp; do not pass them as well")
        if linear:
            jvp = partial(Primitive._linear_jvp, self)
        elif zero_derivative:
            vjp = jvp = (Primitive._zero_rule,)
        self.name = name
        self.impl = impl
        self.plain = getattr(impl, "plain", None)
        self.vjp = vjp
        self.jvp = jvp
        self.batch = None if batch is None else partial(batch, self)
        self.linear = linear
        self.zero_derivative = zero_derivative
        self.save = save
        self.save_output = save_output
        self.save_when = save_when
        self.multiple_results = multiple_results
        self.differentiable = differentiable
        self.node_name = node_name or "".join(p.capitalize() for p in name.split("_")) + "Backward0"
        self.nondiff_outputs = nondiff_outputs
        self.is_view = is_view
        self.nondiff_inputs = nondiff_inputs
        self.number_edges = number_edges
        self.arg_names = arg_names
        self.complex = complex or linear or is_view    # real-coefficient linear maps
        self.jvp_reads_primals = jvp_reads_primals
        self.materialize_grads = materialize_grads
        self.array_vjp = None if array_vjp is None else silent(array_vjp)
        self.float_op = float_op
        # a node of it needs none of the general cases of recording (several or
        # nondifferentiable outputs, a view, args that are not edges): grad_level's fast path
        self.one_output_node = not (multiple_results or is_view or nondiff_inputs or
                                    nondiff_outputs or not number_edges)

    def __call__(self, *args, **params):
        # `bind`, inlined: this runs for every primitive
        if _tls.interpreters:
            top, args = _top(args)
            out = _eager(self, args, params) if top is None else top.process(self, args, params)
            if type(out) is _t.Tensor:
                out._born = _entered[0]
                return out
            return mark_born(out)
        return _eager(self, args, params)

    def __repr__(self):
        return f"<primitive {self.name}>"

    @staticmethod
    def _linear_jvp(prim, ctx, *ts, **params):
        return prim(*ts, **params)

    @staticmethod
    def _zero_rule(ctx, g, **params):
        return g * 0


# NOTE [complex autograd]
# torch's convention: the gradient of a real loss L with respect to z = x + iy is
# dL/dx + i dL/dy, so a vjp multiplies by the conjugate of the derivative (g * conj(f'(z)))
# while the jvp multiplies by the derivative itself (t * f'(z)). A primitive's impl and rules
# are right for complex inputs only after that audit: primitives say so with `complex=True`.
# Every primitive computes at the eager level, which reads each input array's dtype anyway,
# so that is where a complex input of an unverified primitive is refused (one dtype-kind
# test per tensor argument); a complex result from real inputs and a Python complex scalar
# is refused where it is recorded or differentiated forward.
def not_complex(prim):
    """The error for running `prim` on complex values where it is not verified for them."""
    return NotImplementedError(f"{prim.name}: complex inputs are not supported (its "
                               "computation and vjp/jvp rules are verified for real dtypes "
                               "only); compute it on .real/.imag or torch.view_as_real")


class Interpreter:
    """Base of the transform levels.

    A level implements `process(prim, args, params)` (unwrap its own tensors,
    bind one level down, wrap the results), `shape_of(t)` (logical shape of
    its tensors) and `inplace(t, result)` (make `t` hold `result`).
    """

    kind = None                 # its name in messages: "grad", "jvp", "batch"
    primal_autograd = False     # eager autograd sees this level's tensors as their values
    batched = False             # its tensors hold one value per example (vmap)
    refuses_requires_grad = False   # it records its own graph: eager autograd inside it
                                    # would record on a tape the transform never sees

    def __init__(self):
        self.level = None
        self.alive = False

    def __enter__(self):
        stack = _tls.interpreters
        self.level = len(stack) + 1
        _entered[0] += 1
        self.serial = _entered[0]
        self.alive = True
        stack.append(self)
        return self

    def __exit__(self, *exc):
        stack = _tls.interpreters
        assert stack and stack[-1] is self, "transform levels exited out of order"
        stack.pop()
        self.alive = False

    def process(self, prim, args, params):
        raise NotImplementedError(f"{type(self).__name__} does not process primitives")

    def shape_of(self, t):
        return t._inner.shape

    def constant_like(self, t, inner):
        """A tensor of this level around `inner` laid out as `t`, with no derivative here."""
        return _t.wrap(inner, self)

    def inplace(self, t, result, name):
        """`t.op_(...)` for a tensor `t` of this level: make it hold `result`."""
        raise NotImplementedError(f"in-place operations on tensors inside {self.kind} are not "
                                  "supported yet; use the out-of-place op")

    def snapshot(self, t, inner):
        """`t` as it is now, around `inner` (a snapshot of its value): what an in-place op
        computes from, so that saved values are not the ones it overwrites."""
        return self.constant_like(t, inner)


def transforms_active():
    """Whether a transform level is open in this thread (else every call is level 0's)."""
    return bool(_tls.interpreters)


def current_interpreters():
    return tuple(_tls.interpreters)


def bind(prim, args, params):
    """Run `prim` on `args` at the right level."""
    if _tls.interpreters:
        top, args = _top(args)
        out = _eager(prim, args, params) if top is None else top.process(prim, args, params)
        if type(out) is _t.Tensor:      # mark_born, inlined for the common single output
            out._born = _entered[0]
            return out
        return mark_born(out)
    return _eager(prim, args, params)


def bind_plain(prim, args, params):
    """`bind` where every tensor of `args` is a plain level-0 tensor, not a view (a level's
    values one level down, over level 0): there is no level to find and nothing to lower."""
    out = _eager(prim, args, params)
    if type(out) is _t.Tensor:
        out._born = _entered[0]
        return out
    return mark_born(out)


def bind_rules(prim, args, params):
    """Run `prim`, which has one rule per level (`prim.rules`), by the rule of the level
    its args belong to: `rule(prim, interpreter, args, params)` (interpreter None: level 0)."""
    rule, top, args = rule_for(prim, args)
    out = rule(prim, top, args, params)
    return mark_born(out) if _tls.interpreters else out


def rule_for(prim, args):
    """(the rule of `prim` for the level of `args`, that level or None, the args as it
    takes them); for a caller that runs the rule itself (see `bind_rules`)."""
    if not _tls.interpreters:
        return prim.rules[None], None, args
    top, args = _top(args)
    if top is None:
        return prim.rules[None], None, args
    for kind in type(top).__mro__:
        rule = prim.rules.get(kind)
        if rule is not None:
            return rule, top, args
    raise NotImplementedError(f"{prim.name} has no rule for the {type(top).__name__} level")


def _top(args):
    """(the highest live level among `args`' tensors or None, `args`): tensors of finished
    levels are lowered, and a view whose base joined a level joins it too."""
    top = None
    for a in args:
        lvl = getattr(a, "_lvl", None)
        if lvl is None:
            base = getattr(a, "_base", None)
            if base is None or base._lvl is None or not base._lvl.alive:
                continue
            _t.promote(a, base._lvl)    # a view whose base became a tensor of a level
            lvl = base._lvl
        if not lvl.alive:
            return _top(tuple(_t.lower(x) for x in args))
        if top is None or lvl.level > top.level:
            top = lvl
    return top, args


def mark_born(out):
    """Mark the tensors of `out` as born inside the live transforms (see `born_inside`)."""
    for o in (out if isinstance(out, (list, tuple)) else (out,)):
        if isinstance(o, _t.Tensor):
            o._born = _entered[0]
    return out


def swap_eager(process):
    """Make `process` level 0's entry point; returns the previous one. Autograd installs
    level 0 this way, and the profiler times every op while it runs, so nothing is paid
    when it is off."""
    global _eager
    prev, _eager = _eager, process
    return prev


def born_here(t):
    """Mark `t`, just created, as born inside the live transforms (see `born_inside`)."""
    if _tls.interpreters:
        t._born = _entered[0]
    return t


def born_inside(t, lvl):
    """Whether `t` was created while transform `lvl` (alive) was: torch lets a transform
    write in place into such tensors, not into tensors it captured from outside."""
    return t._born >= lvl.serial


_eager = None       # level 0, installed by autograd (see swap_eager)
