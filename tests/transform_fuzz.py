"""Differential fuzzer of transform compositions (issue 7): random programs under nested transforms.

A case is a small program `f(x, y)` (elementwise ops, reductions, sorting and selection, shape
ops, indexing, matmul,
in-place writes on clones, views and fresh buffers, `no_grad`/`detach`, custom Functions with a
`vmap` staticmethod or `generate_vmap_rule`) wrapped in 1-3 transforms drawn from grad, vjp,
jvp, vmap (random in_dims/out_dims), jacrev, jacfwd, hessian, linearize, the dual API and
`autograd.grad(create_graph=True)`. Every level is a function `(x, y) -> one tensor`, so any
stack of transforms composes. A case renders to Python source, executed with `T` bound to
`arraygrad` or `torch` (`case.source(lib)` is the repro to paste); the finite-difference oracle
renders the same case with each transform replaced by a numerical one (`N.*`, on torch eager).

Verdicts (`run_case`): both libraries raise -> fine; both succeed -> values, shapes and
`requires_grad` must match torch; arraygrad raises alone -> mismatch; torch raises alone, or the
two disagree, or torch is known wrong (nested forward AD through a custom Function) -> arraygrad
must match finite differences (with a tolerance that grows with the derivative order; where a
second step changes them, a kink is near and the case is unchecked). torch's known bugs are
kept out of the oracle (`Oracle`): its linearize is replaced by its jvp, and a vmap mismatch is
retried with vmap as a loop. Leaked warnings from arraygrad are mismatches too.

Run a sweep from the command line (seeded, deterministic; prints families and minimal repros):

    PYTHONPATH=src python tests/transform_fuzz.py --cases 5000 [--start 0] [--show 3]

The suite (tests/test_transform_fuzz.py) runs the first `ARRAYGRAD_FUZZ_CASES` cases
(default 200); set `ARRAYGRAD_FUZZ_CASES=5000` for the larger sweep under pytest.
"""
import random
import re
import sys
import warnings
from dataclasses import dataclass, field, replace

import numpy as np

PREAMBLE = '''\
f64 = T.float64
fwAD = T.autograd.forward_ad
C = T.tensor([0.5, -1.0, 2.0], dtype=f64)


def S(o):
    """A scalar depending on every entry of o, for grad and hessian."""
    return (o * o).sum() / 2 + o.sum()


def cat(*ts):
    return T.cat([t.reshape(-1) for t in ts])


def tangent(p, t):
    return T.zeros_like(p) if t is None else t


class Cube(T.autograd.Function):
    @staticmethod
    def forward(x):
        return x ** 3

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])
        ctx.save_for_forward(inputs[0])

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return 3 * x * x * g

    @staticmethod
    def jvp(ctx, t):
        x, = ctx.saved_tensors
        return 3 * x * x * t

    @staticmethod
    def vmap(info, in_dims, x):
        return Cube.apply(x), in_dims[0]


class Mul(T.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(a, b):
        return a * b

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(*inputs)
        ctx.save_for_forward(*inputs)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        return g * b, g * a

    @staticmethod
    def jvp(ctx, ta, tb):
        a, b = ctx.saved_tensors
        return ta * b + a * tb


class Scale_(T.autograd.Function):
    """In place: marks its input dirty."""

    @staticmethod
    def forward(x):
        return x.mul_(2)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.mark_dirty(inputs[0])

    @staticmethod
    def backward(ctx, g):
        return g * 2

    @staticmethod
    def jvp(ctx, t):
        return t.mul_(2)


class SignSplit(T.autograd.Function):
    """Two outputs, the second marked non-differentiable."""
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return x * x.abs(), (x > 0).to(x.dtype)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.mark_non_differentiable(output[1])
        ctx.save_for_backward(inputs[0])
        ctx.save_for_forward(inputs[0])

    @staticmethod
    def backward(ctx, g, g_sign):
        x, = ctx.saved_tensors
        return 2 * x.abs() * g

    @staticmethod
    def jvp(ctx, t):
        x, = ctx.saved_tensors
        return 2 * x.abs() * t, None


class Square(T.autograd.Function):
    """ctx style, backward once differentiable."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    @T.autograd.function.once_differentiable
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return 2 * x * g
'''



def _preamble_for(code):
    """The preamble's definitions that `code` uses (the first, f64/fwAD/C, always)."""
    chunks = PREAMBLE.split("\n\n\n")
    keep = [c for c in chunks[1:]
            if re.search(r"\b" + re.split(r"[ (]", c.split("\n")[0])[1] + r"\b", code)]
    head = [ln for ln in chunks[0].split("\n") if ln.startswith("f64")
            or re.search(r"\b" + ln.split(" ")[0] + r"\b", code)]
    return "\n\n\n".join(["\n".join(head)] + keep)


MAX_NUMEL = 12          # any value inside the program
MAX_OUT_NUMEL = 200     # the result of the whole composition


# ----------------------------------------------------------------- literals
def _lit_list(a):
    if a.ndim == 0:
        return repr(float(a)) if a.dtype.kind == "f" else repr(int(a))
    return "[" + ", ".join(_lit_list(v) for v in a) + "]"


def literal(a):
    a = np.asarray(a)
    if a.dtype.kind == "f":
        return f"T.tensor({_lit_list(a)}, dtype=f64)"
    return f"T.tensor({_lit_list(a)})"


def values(rng, shape):
    """Readable random values, away from zero (kinks of abs/relu)."""
    v = rng.uniform(0.2, 1.5, size=shape) * rng.choice([-1.0, 1.0], size=shape)
    return np.round(v, 2)


def _numel(s):
    return int(np.prod(s, dtype=np.int64))


def _bshape(a, b):
    try:
        return tuple(np.broadcast_shapes(a, b))
    except ValueError:
        return None


# ----------------------------------------------------------------- program steps
# Each op: fn(r, a, b) -> (lines, shape) or None when it does not apply. `a`, `b` are
# (name, shape) operands; lines use `{o}` for the new value's name.
def _unary(r, a, b):
    n, s = a
    t = r.choice(["{a}.sin()", "T.tanh({a})", "T.sigmoid({a})", "({a} * {a} + 1).log()",
                  "({a} * {a} + 0.5).sqrt()", "(-{a} * {a}).exp()", "{a}.abs()", "T.relu({a})",
                  "{a} ** 2", "{a} * 0.5 - 1", "1 / ({a} * {a} + 1)", "{a}.clamp(-0.5, 0.8)",
                  "{a}.cos() * {a}"])
    return ["{o} = " + t.format(a=n)], s


def _cube(r, a, b):
    return [f"{{o}} = Cube.apply({a[0]})"], a[1]


def _binary(r, a, b):
    s = _bshape(a[1], b[1])
    if s is None or _numel(s) > MAX_NUMEL:
        return None
    t = r.choice(["{a} + {b}", "{a} * {b}", "{a} - 2 * {b}", "{a} / ({b} * {b} + 1)",
                  "T.maximum({a}, {b})", "T.where({a} > {b}, {a} * 2, {b})",
                  "T.atan2({a}, {b} * {b} + 0.5)", "T.minimum({a}, {b})", "T.clamp({a}, min={b})",
                  "{a}.add({b}, alpha=-0.5)", "T.where({b} > 0, {a}, 0.0)"])
    return ["{o} = " + t.format(a=a[0], b=b[0])], s


def _mul_fn(r, a, b):
    if a[1] != b[1]:
        return None
    return [f"{{o}} = Mul.apply({a[0]}, {b[0]})"], a[1]


def _reduce(r, a, b):
    n, s = a
    if not s:
        return None
    d = r.randrange(-len(s), len(s))
    k = r.random() < 0.4
    out = s[:d % len(s)] + ((1,) if k else ()) + s[d % len(s) + 1:]
    kw = ", keepdim=True" if k else ""
    ops = [f"{n}.sum({d}{kw})", f"{n}.mean({d}{kw})", f"T.amax({n}, {d}{kw})",
           f"T.logsumexp({n}, {d}{kw})", f"{n}.prod({d}{kw})", f"{n}.norm(dim={d}{kw})",
           f"{n}.max({d}{kw}).values", f"{n}.min({d}{kw}).values", f"T.amin({n}, {d}{kw})"]
    if s[d] >= 2:
        ops.append(f"{n}.std({d}{kw})")
    if r.random() < 0.25:
        return [f"{{o}} = {r.choice([f'{n}.sum()', f'{n}.mean()', f'{n}.norm()'])}"], ()
    return ["{o} = " + r.choice(ops)], out


def _along(r, a, b):
    n, s = a
    if not s:
        return None
    t = r.choice([f"T.softmax({n}, -1)", f"{n}.log_softmax(0)", f"{n}.cumsum(-1)",
                  f"{n}.cumprod(0)", f"{n}.flip(0)", f"{n}.roll(1, -1)"])
    return ["{o} = " + t], s


def _select(r, a, b):
    """Ops that pick entries by comparing them: their derivatives gather."""
    n, s = a
    if not s:
        return None
    opts = [(f"{n}.sort(-1).values", s), (f"{n}.sort(0, descending=True).values", s),
            (f"{n}.cummax(-1).values", s), (f"{n}.median(-1).values", s[:-1])]
    if s[-1] >= 2:
        opts.append((f"{n}.topk(2, -1).values", s[:-1] + (2,)))
    t, out = r.choice(opts)
    return ["{o} = " + t], out


def _shape(r, a, b):
    n, s = a
    opts = [(f"{n}.reshape(-1)", (_numel(s),)), (f"{n}.unsqueeze(0)", (1,) + s)]
    if len(s) >= 2:
        opts += [(f"{n}.transpose(0, -1)", s[::-1]), (f"{n}.mT", s[:-2] + s[:-3:-1])]
    if s and 2 * _numel(s) <= MAX_NUMEL:
        opts.append((f"{n}.expand(2, *{n}.shape)", (2,) + s))
    if s and s[0] == 1:
        opts.append((f"{n}.squeeze(0)", s[1:]))
    t, out = r.choice(opts)
    return ["{o} = " + t], out


def _index(r, a, b):
    n, s = a
    if not s:
        return None
    L = s[-1]
    idx = [r.randrange(L) for _ in range(r.choice([2, 3]))]
    gidx = np.array([r.randrange(L) for _ in range(_numel(s))]).reshape(s)
    opts = [(f"{n}[0]", s[1:]), (f"{n}[..., {literal(np.array(idx))}]", s[:-1] + (len(idx),)),
            (f"{n}.index_select(-1, {literal(np.array(idx))})", s[:-1] + (len(idx),)),
            (f"{n}.gather(-1, {literal(gidx)})", s),
            (f"{n}.masked_fill({n} > 0.3, 0.0)", s)]
    if L >= 2:
        opts.append((f"{n}[..., 1:]", s[:-1] + (L - 1,)))
    t, out = r.choice(opts)
    if _numel(out) > MAX_NUMEL:
        return None
    return ["{o} = " + t], out


def _matmul(r, a, b):
    (na, sa), (nb, sb) = a, b
    opts = []
    if len(sa) == 1 and sa == sb:
        opts.append((f"{na} @ {nb}", ()))
    if len(sa) == 2 and len(sb) == 1 and sa[1] == sb[0]:
        opts.append((f"{na} @ {nb}", sa[:1]))
    if len(sa) == 2 and sa == sb:
        opts += [(f"{na} @ {nb}.mT", (sa[0], sa[0])),
                 (f"T.einsum('ij,ij->i', {na}, {nb})", sa[:1])]
    if len(sa) == 2:
        opts.append((f"{na}.mT @ {na}", (sa[1], sa[1])))
    if not opts:
        return None
    t, out = r.choice(opts)
    return ["{o} = " + t], out


def _join(r, a, b):
    (na, sa), (nb, sb) = a, b
    opts = []
    if sa == sb and 2 * _numel(sa) <= MAX_NUMEL:
        opts.append((f"T.stack([{na}, {nb}])", (2,) + sa))
    if sa and sb and sa[:-1] == sb[:-1] and _numel(sa) + _numel(sb) <= MAX_NUMEL:
        opts.append((f"T.cat([{na}, {nb}], -1)", sa[:-1] + (sa[-1] + sb[-1],)))
    if not opts:
        return None
    t, out = r.choice(opts)
    return ["{o} = " + t], out


def _inplace_clone(r, a, b):
    (na, sa), (nb, sb) = a, b
    if _bshape(sa, sb) != sa:
        return None
    w = r.choice([f"mul_({nb})", f"add_({nb}, alpha=2)", f"sub_({nb})",
                  f"div_({nb} * {nb} + 1)", "mul_(-1.5)", "sin_()", f"copy_({nb})",
                  "clamp_(-0.5, 0.8)", f"masked_fill_({nb} > 0.3, 0.5)"])
    return [f"{{o}} = {na}.clone()", f"{{o}}.{w}"], sa


def _view_of(r, name, s):
    opts = [("[...]", s)]
    if s:
        opts += [("[0]", s[1:])]
        if s[-1] >= 2:
            opts.append(("[..., 1:]", s[:-1] + (s[-1] - 1,)))
    if len(s) >= 2:
        opts += [(".transpose(0, -1)[0]", s[::-1][1:]), (".diagonal()", (min(s[-2:]),))]
    return r.choice(opts)


def _inplace_view(r, a, b):
    (na, sa), (nb, sb) = a, b
    v, vs = _view_of(r, "{o}", sa)
    val = nb if _bshape(vs, sb) == vs and r.random() < 0.5 else f"{nb}.mean()"
    w = r.choice([f".mul_({val})", f".add_({val})", f".copy_({val})", ".mul_(2.0)", ".zero_()",
                  f" = {val}", ".clamp_(-0.5, 0.8)", f".sub_({val}, alpha=2)"])
    first = r.choice([f"{{o}} = {na} * 1.0", f"{{o}} = {na}.clone()"])
    return [first, "{o}" + v + w], sa


def _inplace_fresh(r, a, b):
    (na, sa), (nb, sb) = a, b
    if r.random() < 0.5 and _bshape((3,), sa) == (3,):
        return [f"{{o}} = C.clone().mul_({na})"], (3,)
    shape = repr(tuple(sa))
    return r.choice([[f"{{o}} = T.ones({shape}, dtype=f64)", f"{{o}}.mul_({na})"],
                     [f"{{o}} = T.zeros({shape}, dtype=f64)", f"{{o}}[...] = {na}"]]), sa


def _no_grad(r, a, b):
    (na, sa), (nb, sb) = a, b
    if r.random() < 0.5:
        return [f"{{o}} = {na} * {na}.detach().sin()"], sa
    s = _bshape(sa, sb)
    if s is None:
        return ["with T.no_grad():", f"    {{o}} = {na}.sin()"], sa
    return ["with T.no_grad():", f"    {{o}} = {na}.sin() * {nb}"], s


def _functions(r, a, b):
    """Custom Functions beyond Cube and Mul: in place (mark_dirty), a non-differentiable
    output, ctx style with a once-differentiable backward."""
    n, s = a
    return r.choice([[f"{{o}} = {n}.clone()", f"Scale_.apply({{o}})"],
                     [f"{{o}}, _sign = SignSplit.apply({n})", "{o} = {o} + _sign"],
                     [f"{{o}} = Square.apply({n})"]]), s


def _smooth(r, a, b):
    """nn.functional activations and other smooth elementwise ops."""
    (na, sa), (nb, sb) = a, b
    s = _bshape(sa, sb)
    opts = [(f"T.nn.functional.softplus({na})", sa), (f"T.nn.functional.gelu({na})", sa),
            (f"T.nn.functional.silu({na})", sa), (f"T.nn.functional.elu({na})", sa),
            (f"T.erf({na})", sa), (f"T.special.xlogy({na}, {na} * {na} + 0.5)", sa)]
    if sa and sa[-1] >= 2:
        opts += [(f"T.nn.functional.layer_norm({na}, {na}.shape[-1:])", sa),
                 (f"T.nn.functional.normalize({na}, dim=-1)", sa), (f"T.diff({na}, dim=-1)",
                                                                     sa[:-1] + (sa[-1] - 1,))]
    if s is not None:
        opts += [(f"T.lerp({na}, {nb}, 0.3)", s), (f"T.hypot({na}, {nb} * {nb} + 0.5)", s),
                 (f"T.logaddexp({na}, {nb})", s)]
    t, out = r.choice(opts)
    return ["{o} = " + t], out


def _linalg(r, a, b):
    """Matrix functions of a symmetric positive-definite matrix made from `a`."""
    n, s = a
    if len(s) == 2:
        k, m = s[0], f"{n} @ {n}.mT + T.eye({s[0]}, dtype=f64)"
    elif len(s) == 1 and s[0] >= 2:
        k, m = s[0], f"T.outer({n}, {n}) + T.eye({s[0]}, dtype=f64)"
    else:
        return None
    t, out = r.choice([("T.linalg.inv(_m)", (k, k)), ("T.linalg.det(_m)", ()),
                       ("T.linalg.cholesky(_m)", (k, k)), ("T.logdet(_m)", ()),
                       ("T.linalg.eigvalsh(_m)", (k,)),
                       ("T.linalg.solve(_m, _m.sum(-1))", (k,))])
    return [f"_m = {m}", "{o} = " + t], out


def _inplace_index(r, a, b):
    """Writes through index arguments into a clone."""
    (na, sa), (nb, sb) = a, b
    if not sa:
        return None
    L = sa[-1]
    idx = literal(np.array(sorted(r.sample(range(L), r.randint(1, L)))))
    gidx = literal(np.array([r.randrange(L) for _ in range(_numel(sa))]).reshape(sa))
    # scatter_ without repeated targets in a row: torch leaves which write stays undefined
    perm = literal(np.array([r.sample(range(L), L) for _ in range(_numel(sa) // L)]).reshape(sa))
    val = f"{nb}.mean()"
    w = r.choice([f"{{o}}.index_add_(-1, {idx}, {val} * T.ones_like({{o}}[..., {idx}]))",
                  f"{{o}}.scatter_(-1, {perm}, {na} * {val})",
                  f"{{o}}.scatter_add_(-1, {gidx}, {na} * {val})",
                  f"{{o}}.index_fill_(-1, {idx}, 0.5)",
                  f"{{o}}[..., {idx}] += {val}",
                  f"{{o}}.index_put_((T.tensor([0]),), {val}, accumulate=True)"])
    return [f"{{o}} = {na}.clone()", w], sa


def _inplace_view_more(r, a, b):
    """Writes through views made by narrow/unbind/split/view/unsqueeze, and the in-place
    view ops themselves."""
    (na, sa), (nb, sb) = a, b
    if not sa:
        return None
    val = f"{nb}.mean()"
    opts = [(f".narrow(-1, 0, 1).mul_({val})", sa), (f".unbind(0)[0].add_({val})", sa),
            (f".split(1, -1)[-1].copy_({val})", sa), (f".view(-1)[0].mul_({val})", sa),
            (f".unsqueeze(0).mul_({val})", sa), (".unsqueeze_(0)", (1,) + sa),
            (f".view(-1).add_({val})", sa)]
    if len(sa) == 2:
        opts += [(".t_()", sa[::-1]), (f".t().narrow(0, 0, 1).sub_({val})", sa)]
    t, out = r.choice(opts)
    return [f"{{o}} = {na} * 1.0", "{o}" + t], out


OPS = [(_unary, 6), (_binary, 6), (_cube, 2), (_mul_fn, 2), (_reduce, 3), (_along, 2),
       (_select, 2), (_shape, 2), (_index, 3), (_matmul, 2), (_join, 1), (_inplace_clone, 3),
       (_inplace_view, 4), (_inplace_fresh, 1), (_no_grad, 2), (_functions, 2), (_smooth, 3),
       (_linalg, 2), (_inplace_index, 2), (_inplace_view_more, 3)]


@dataclass
class Step:
    lines: list        # source lines with {o} for the output
    shape: tuple


@dataclass
class Case:
    """A program f(x, y) under a stack of transforms (innermost first)."""
    index: int
    x_shape: tuple
    y_shape: tuple
    steps: list
    transforms: list = field(default_factory=list)   # [(kind, seed)]
    x_grad: bool = False                             # inputs require grad at the top level

    @property
    def name(self):
        return f"case{self.index:04d}-" + ".".join(k for k, _ in reversed(self.transforms))

    # ------------------------------------------------------------- rendering
    def program(self):
        lines = ["def f(x, y):"]
        for i, st in enumerate(self.steps):
            o = f"v{i}"
            for ln in st.lines:
                ln = ln.replace("{o}", o)
                lines.append("    " + ln)
        lines.append(f"    return v{len(self.steps) - 1}" if self.steps else "    return x")
        return lines

    def out_shape(self):
        return self.steps[-1].shape if self.steps else self.x_shape

    def render(self, numeric=False):
        """(source lines defining f, h1..hn, x, y; the name of the outermost function, shapes)."""
        lines = self.program()
        sig = (self.x_shape, self.y_shape, self.out_shape())
        g = "f"
        for k, (kind, seed) in enumerate(self.transforms, 1):
            h = f"h{k}"
            got = TRANSFORMS[kind](random.Random(seed), g, sig, numeric)
            if got is None:
                return None
            body, sig = got
            if _numel(sig[2]) > MAX_OUT_NUMEL:
                return None
            lines += ["", "", f"def {h}(x, y):"] + ["    " + b for b in body]
            g = h
        rng = np.random.default_rng(self.index)
        xv, yv = values(rng, sig[0]), values(rng, sig[1])
        grad = ", requires_grad=True" if self.x_grad else ""
        lines += ["", "", f"x = {literal(xv)[:-1]}{grad})", f"y = {literal(yv)}",
                  f"out = {g}(x, y)"]
        return lines, sig

    def source(self, lib="torch"):
        """The case as a standalone script for `lib` ('torch' or 'arraygrad')."""
        got = self.render()
        if got is None:
            return "# (does not render)"
        imp = "import torch as T" if lib == "torch" else "import arraygrad as T"
        code = "\n".join(got[0])
        return "\n".join([imp, "", _preamble_for(code), "", "", code, "print(out)"])


# ----------------------------------------------------------------- transforms
# Each: fn(r, g, (sx, sy, so), numeric) -> (body lines of h(x, y), new signature) or None.
# `numeric` renders the finite-difference twin (`N.*` in place of the library's transform).
def _fun(numeric, name):
    return f"N.{name}" if numeric else f"T.func.{name}"


def _argnums(r):
    return r.choice([0, 0, 1, (0, 1)])


def _out_of(argnums, sx, sy, extra=()):
    if argnums == (0, 1):
        return (_numel(extra) * (_numel(sx) + _numel(sy)),)
    return extra + (sx if argnums == 0 else sy)


def _t_grad(r, g, sig, numeric):
    sx, sy, so = sig
    a = _argnums(r)
    call = f"{_fun(numeric, 'grad')}(lambda x, y: S({g}(x, y)), argnums={a})(x, y)"
    return [f"return cat(*{call})" if a == (0, 1) else f"return {call}"], \
        (sx, sy, _out_of(a, sx, sy))


def _t_jac(kind):
    def t(r, g, sig, numeric):
        sx, sy, so = sig
        a = _argnums(r)
        call = f"{_fun(numeric, kind)}({g}, argnums={a})(x, y)"
        return [f"return cat(*{call})" if a == (0, 1) else f"return {call}"], \
            (sx, sy, _out_of(a, sx, sy, so))
    return t


def _t_hessian(r, g, sig, numeric):
    sx, sy, so = sig
    a = r.choice([0, 1])
    s = sx if a == 0 else sy
    return [f"return {_fun(numeric, 'hessian')}(lambda x, y: S({g}(x, y)), argnums={a})(x, y)"], \
        (sx, sy, s + s)


def _cotangent_pick(r, so, sx, sy):
    which = r.choice(["gx", "gy", "cat(o, gx, gy)"])
    out = {"gx": sx, "gy": sy}.get(which, (_numel(so) + _numel(sx) + _numel(sy),))
    return which, out


def _t_vjp(r, g, sig, numeric):
    sx, sy, so = sig
    v = literal(values(np.random.default_rng(r.randrange(2**32)), so))
    which, out = _cotangent_pick(r, so, sx, sy)
    return [f"o, fn = {_fun(numeric, 'vjp')}({g}, x, y)", f"gx, gy = fn({v})",
            f"return {which}"], (sx, sy, out)


def _tangents(r, sx, sy):
    rng = np.random.default_rng(r.randrange(2**32))
    return literal(values(rng, sx)), literal(values(rng, sy))


def _t_jvp(r, g, sig, numeric):
    sx, sy, so = sig
    tx, ty = _tangents(r, sx, sy)
    both = r.random() < 0.3
    return [f"o, t = {_fun(numeric, 'jvp')}({g}, (x, y), ({tx}, {ty}))",
            "return cat(o, t)" if both else "return t"], \
        (sx, sy, (2 * _numel(so),) if both else so)


def _t_linearize(r, g, sig, numeric):
    sx, sy, so = sig
    tx, ty = _tangents(r, sx, sy)
    return [f"o, fn = {_fun(numeric, 'linearize')}({g}, x, y)", f"return fn({tx}, {ty})"], sig


def _t_dual(r, g, sig, numeric):
    sx, sy, so = sig
    tx, ty = _tangents(r, sx, sy)
    both = r.random() < 0.4
    if numeric:
        ty_ = ty if both else "T.zeros_like(y)"
        return [f"return N.jvp({g}, (x, y), ({tx}, {ty_}))[1]"], sig
    y_in = f"fwAD.make_dual(y, {ty})" if both else "y"
    return ["with fwAD.dual_level():", f"    o = {g}(fwAD.make_dual(x, {tx}), {y_in})",
            "    p, t = fwAD.unpack_dual(o)", "    return tangent(p, t)"], sig


def _t_autograd(r, g, sig, numeric):
    sx, sy, so = sig
    v = literal(values(np.random.default_rng(r.randrange(2**32)), so))
    which, out = _cotangent_pick(r, so, sx, sy)
    if numeric:
        return [f"o, fn = N.vjp({g}, x, y)", f"gx, gy = fn({v})", f"return {which}"], \
            (sx, sy, out)
    return ["with T.enable_grad():",
            "    xr, yr = x.clone().requires_grad_(), y.clone().requires_grad_()",
            f"    o = {g}(xr, yr)",
            f"    gx, gy = T.autograd.grad(o, (xr, yr), {v}, create_graph=True, allow_unused=True)",
            "    gx, gy = tangent(xr, gx), tangent(yr, gy)",
            f"    return {which}"], (sx, sy, out)


def _t_vmap(r, g, sig, numeric):
    sx, sy, so = sig
    dims = [r.choice([None, 0, 0, len(s)] + list(range(-len(s) - 1, len(s) + 1)))
            for s in (sx, sy)]
    if dims == [None, None]:
        dims[r.randrange(2)] = 0
    od = r.randrange(-len(so) - 1, len(so) + 1)
    B = r.choice([2, 3])

    def ins(s, d):
        if d is None:
            return s
        d = d % (len(s) + 1)
        return s[:d] + (B,) + s[d:]
    name = "N.vmap" if numeric else "T.func.vmap"
    return [f"return {name}({g}, in_dims=({dims[0]}, {dims[1]}), out_dims={od})(x, y)"], \
        (ins(sx, dims[0]), ins(sy, dims[1]), ins(so, od))


TRANSFORMS = {"grad": _t_grad, "vjp": _t_vjp, "jvp": _t_jvp, "vmap": _t_vmap,
              "jacrev": _t_jac("jacrev"), "jacfwd": _t_jac("jacfwd"), "hessian": _t_hessian,
              "linearize": _t_linearize, "dual": _t_dual, "autograd": _t_autograd}
TRANSFORM_WEIGHTS = {"grad": 3, "vjp": 2, "jvp": 2, "vmap": 4, "jacrev": 2, "jacfwd": 2,
                     "hessian": 1, "linearize": 1, "dual": 2, "autograd": 2}
FORWARD = {"jvp", "jacfwd", "hessian", "linearize", "dual"}
INPUT_SHAPES = [(), (3,), (3,), (2, 3), (2, 3), (2,)]


def _pick(r, pool):
    """Operands favour recent values."""
    w = [1 + i for i in range(len(pool))]
    return pool[r.choices(range(len(pool)), weights=w)[0]]


def generate(index):
    """The deterministic case number `index`."""
    r = random.Random(index * 7919 + 17)
    while True:
        sx, sy = r.choice(INPUT_SHAPES), r.choice(INPUT_SHAPES)
        pool, steps = [("x", sx), ("y", sy)], []
        fns, ws = zip(*OPS)
        for _ in range(r.randint(1, 5)):
            for _try in range(20):
                a, b = _pick(r, pool), _pick(r, pool)
                got = r.choices(fns, weights=ws)[0](r, a, b)
                if got is not None and _numel(got[1]) <= MAX_NUMEL:
                    break
            else:
                continue
            steps.append(Step(list(got[0]), tuple(got[1])))
            pool.append((f"v{len(steps) - 1}", tuple(got[1])))
        if not steps:
            continue
        kinds, kw = zip(*TRANSFORM_WEIGHTS.items())
        depth = r.choices([1, 2, 3], weights=[3, 4, 2])[0]
        case = Case(index, sx, sy, steps, x_grad=r.random() < 0.15)
        for _try in range(20):
            case.transforms = [(r.choices(kinds, weights=kw)[0], r.randrange(2**31))
                               for _ in range(depth)]
            if case.render() is not None and case.render(numeric=True) is not None:
                return case


# ----------------------------------------------------------------- finite differences
class Numeric:
    """Numerical twins of the transforms on torch eager tensors: a 4-point central stencil, or
    one-sided ones (`side` +1 or -1) that tell a kink (they differ there) from a bug."""

    BUDGET = 8000    # evaluations; nested finite differences grow as (4n)^depth

    def __init__(self, T, h=1e-3, side=0):
        self.T, self.h, self.side, self.evals = T, h, side, 0

    def _d(self, at):
        h, s = self.h, self.side
        self.evals += 4
        if self.evals > self.BUDGET:
            raise OverflowError(NO_ORACLE_COST)
        if s:
            return s * (4 * at(s) - at(2 * s) - 3 * at(0)) / (2 * h)
        return (8 * (at(1) - at(-1)) - (at(2) - at(-2))) / (12 * h)

    def _jac(self, g, args, k):
        T, base = self.T, args[k]
        out = g(*args)
        cols = []
        for i in range(base.numel()):
            e = T.zeros(base.numel(), dtype=base.dtype)
            e[i] = 1
            e = e.reshape(base.shape)

            def at(s, e=e):
                a = list(args)
                a[k] = base + s * self.h * e
                return g(*a)
            cols.append(self._d(at))
        if not cols:
            return T.zeros(tuple(out.shape) + tuple(base.shape), dtype=out.dtype)
        return T.stack(cols, -1).reshape(tuple(out.shape) + tuple(base.shape))

    def jacrev(self, g, argnums=0):
        def h(*args):
            if isinstance(argnums, tuple):
                return tuple(self._jac(g, args, k) for k in argnums)
            return self._jac(g, args, argnums)
        return h

    jacfwd = grad = jacrev

    def hessian(self, g, argnums=0):
        return self.jacrev(self.jacrev(g, argnums), argnums)

    def jvp(self, g, primals, tangents):
        def at(s):
            return g(*[p + s * self.h * t for p, t in zip(primals, tangents)])
        return g(*primals), self._d(at)

    def linearize(self, g, *primals):
        return g(*primals), lambda *t: self.jvp(g, primals, t)[1]

    def vjp(self, g, *primals):
        out = g(*primals)

        def fn(v):
            return tuple(self.T.tensordot(v, self._jac(g, primals, k), dims=v.ndim)
                         for k in range(len(primals)))
        return out, fn

    def vmap(self, g, in_dims, out_dims=0):
        def h(*args):
            B = {a.shape[d] for a, d in zip(args, in_dims) if d is not None}.pop()
            outs = [g(*[a if d is None else a.select(d, b) for a, d in zip(args, in_dims)])
                    for b in range(B)]
            return self.T.stack(outs, out_dims)
        return h


# ----------------------------------------------------------------- running
@dataclass
class Outcome:
    value: object = None     # numpy array
    requires_grad: bool = None
    error: str = None        # "TypeName: message"
    warnings: list = field(default_factory=list)


def isolated(fn, timeout=15):
    """fn() in a forked child, so that a crash or hang in torch (nested vmap under jvp can
    segfault torch 2.13) is a refusal, not the end of the run."""
    import os
    import pickle
    import select
    rd, wr = os.pipe()
    pid = os.fork()
    if pid == 0:   # child: never returns into the caller's code
        try:
            data = pickle.dumps(fn())
        except BaseException as e:
            data = pickle.dumps(Outcome(error=f"{type(e).__name__}: {e}"))
        with os.fdopen(wr, "wb") as w:
            w.write(data)
        os._exit(0)
    os.close(wr)
    chunks = []
    with os.fdopen(rd, "rb") as r:
        while select.select([r], [], [], timeout)[0]:
            chunk = r.read1(1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
        else:
            os.kill(pid, 9)
    _, status = os.waitpid(pid, 0)
    if status != 0 or not chunks:
        return Outcome(error=f"crashed: wait status {status}")
    return pickle.loads(b"".join(chunks))


def execute(case, lib, numeric=False, side=0):
    """Run the case with `lib` (the module, or an `Oracle`); torch eager with N.* (finite
    differences, central or one-sided: `side`) for `numeric`."""
    got = case.render(numeric=numeric)
    src = "\n".join([PREAMBLE, *got[0]])
    ns = {"T": lib}
    if numeric:
        ns["N"] = Numeric(lib, side=side)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            if numeric:
                with lib.no_grad():
                    exec(compile(src, case.name, "exec"), ns)
            else:
                exec(compile(src, case.name, "exec"), ns)
            out = ns["out"]
            res = Outcome(np.array(out.detach().numpy()), bool(out.requires_grad))
        except Exception as e:   # a refusal is a result to compare, whatever its type
            res = Outcome(error=f"{type(e).__name__}: {e}")
    res.warnings = [f"{w.category.__name__}: {w.message}" for w in caught]
    return res


def _close(a, b, rtol, atol):
    return a.shape == b.shape and np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True)


def _fd_close(a, ref, order=1):
    """`a` agrees with finite differences `ref` of derivatives of order `order`: each nested
    numerical derivative divides the rounding noise of the level inside by the step again,
    so the tolerance grows with the order (a third derivative of a quadratic is 0 exactly and
    ~1e-4 numerically)."""
    scale = max(1.0, float(np.nanmax(np.abs(ref)))) if ref.size else 1.0
    noise = 1e-5 * 30.0 ** max(order - 2, 0)
    return _close(a, ref, max(1e-4, noise), noise * scale)


def fd_order(case):
    """How many numerical derivatives the finite-difference twin nests."""
    return sum({"vmap": 0, "hessian": 2}.get(k, 1) for k, _ in case.transforms)


class Oracle:
    """torch as the oracle of a case. `func.linearize` is torch's jvp, rerun per call (as
    ours): torch's linearize replays a make_fx trace of the jvp, which drops `no_grad`,
    `requires_grad_()` and in-place writes under vmap (case 242). With `loop`, `func.vmap` is
    a Python loop over the batch, the definition of vmap: torch's vmap puts an output that
    does not depend on the batched inputs along dim 0 whatever `out_dims` says, or gives it a
    garbage shape (cases 2398, 3525, 3153)."""

    def __init__(self, torch, loop=False):
        self._torch = torch
        numeric = Numeric(torch)

        def linearize(f, *primals):
            return f(*primals), lambda *t: torch.func.jvp(f, primals, t)[1]
        self.func = _Namespace(torch.func, linearize=linearize,
                               **({"vmap": numeric.vmap} if loop else {}))

    def __getattr__(self, name):
        return getattr(self._torch, name)


class _Namespace:
    """`module` with some attributes replaced."""

    def __init__(self, module, **replaced):
        self._module = module
        self.__dict__.update(replaced)

    def __getattr__(self, name):
        return getattr(self._module, name)


def _uses_function(case):
    return any(".apply(" in ln for st in case.steps for ln in st.lines)


def torch_known_wrong(case):
    """Nested forward AD through a custom Function: torch is known wrong there (issue 7)."""
    return _uses_function(case) and sum(k in FORWARD for k, _ in case.transforms) >= 2


@dataclass
class Verdict:
    kind: str          # ok | both_raise | torch_refuses | torch_wrong | unchecked | MISMATCHES
    detail: str = ""
    ours: Outcome = None
    theirs: Outcome = None
    fd: Outcome = None

    @property
    def mismatch(self):
        return self.kind in MISMATCHES


MISMATCHES = {"values", "shape", "raises", "fd_values", "only_ours_runs", "requires_grad",
              "warning"}


_WARM = set()


def _warm(torch):
    """Load torch.func's lazy pieces once in this process, not in every forked child."""
    if id(torch) in _WARM:
        return
    x, f = torch.ones(2, dtype=torch.float64), torch.sin
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.func.hessian(lambda z: f(z).sum())(x)
        torch.func.vmap(torch.func.grad(lambda z: f(z).sum()))(x[None])
        torch.func.linearize(f, x)[1](x)
        torch.func.vjp(f, x)[1](x)
        with torch.autograd.forward_ad.dual_level():
            torch.autograd.forward_ad.make_dual(x, x).sin()
    _WARM.add(id(torch))


def run_case(case, ag, torch):
    _warm(torch)
    ours = execute(case, ag)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = isolated(lambda: _torch_outcome(case, torch))
    v = _judge(case, ours, theirs, torch)
    if not v.mismatch and ours.warnings:
        v = Verdict("warning", "; ".join(sorted(set(ours.warnings)))[:300], ours, theirs)
    return v


def _stops_gradients(case):
    return any("detach" in ln or "no_grad" in ln for st in case.steps for ln in st.lines)


NO_ORACLE = "no oracle: finite differences cannot see detach/no_grad"
NO_ORACLE_COST = "no oracle: finite differences too costly"


def _torch_outcome(case, torch, loop=False):
    torch.set_num_threads(1)    # a forked child deadlocks in the parent's thread pool
    return execute(case, Oracle(torch, loop))


NO_ORACLE_KINK = "no oracle: finite differences from the left and the right differ (a kink or jump)"


def _fd(case, torch, side=0):
    if _stops_gradients(case) and fd_order(case):
        return Outcome(error=NO_ORACLE)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return execute(case, torch, numeric=True, side=side)


def _fd_agrees(case, torch, ours, fd):
    """Whether `ours` agrees with the finite differences `fd`; where it does not, whether
    they are an oracle at all: at a kink or jump (ties of sort or `where`, thresholds) the
    central stencil averages the two sides, so one-sided differences that disagree with each
    other make it `None`."""
    order = fd_order(case)
    if _fd_close(ours.value, fd.value, order):
        return True
    right, left = _fd(case, torch, side=1), _fd(case, torch, side=-1)
    if right.error is None and left.error is None \
            and not _fd_close(right.value, left.value, order):
        return None
    return False


def _judge(case, ours, theirs, torch):
    if ours.error and theirs.error:
        return Verdict("both_raise", ours.error, ours, theirs)
    if ours.error:
        return Verdict("raises", ours.error, ours, theirs)
    if theirs.error or torch_known_wrong(case):
        fd = _fd(case, torch)
        if fd.error in (NO_ORACLE, "OverflowError: " + NO_ORACLE_COST):
            return Verdict("unchecked", fd.error, ours, theirs, fd)
        if fd.error:   # the program fails even without transforms: only arraygrad runs it
            return Verdict("only_ours_runs", fd.error, ours, theirs, fd)
        agrees = _fd_agrees(case, torch, ours, fd)
        if agrees is None:
            return Verdict("unchecked", NO_ORACLE_KINK, ours, theirs, fd)
        if not agrees:
            return Verdict("fd_values", _diff(ours.value, fd.value), ours, theirs, fd)
        return Verdict("torch_refuses" if theirs.error else "torch_wrong", "", ours, theirs, fd)
    same_shape = ours.value.shape == theirs.value.shape
    if not same_shape or not _close(ours.value, theirs.value, 1e-7, 1e-9):
        if any(k == "vmap" for k, _ in case.transforms):   # torch's vmap bugs: Oracle
            loop = isolated(lambda: _torch_outcome(case, torch, loop=True))
            if loop.error is None and loop.value.shape == ours.value.shape \
                    and _close(ours.value, loop.value, 1e-7, 1e-9):
                return Verdict("torch_wrong", "vmap as a loop agrees", ours, theirs, loop)
        if not same_shape:
            return Verdict("shape", f"{ours.value.shape} != torch's {theirs.value.shape}",
                           ours, theirs)
        fd = _fd(case, torch)      # a tiebreaker: torch may be the one that is wrong
        if fd.error is None and _fd_close(ours.value, fd.value, fd_order(case)) \
                and not _fd_close(theirs.value, fd.value, fd_order(case)):
            return Verdict("torch_wrong", "", ours, theirs, fd)
        return Verdict("values", _diff(ours.value, theirs.value), ours, theirs, fd)
    if ours.requires_grad != theirs.requires_grad:
        return Verdict("requires_grad", f"{ours.requires_grad} != torch's {theirs.requires_grad}",
                       ours, theirs)
    return Verdict("ok", "", ours, theirs)


def _diff(a, b):
    if a.shape != b.shape:
        return f"shape {a.shape} vs {b.shape}"
    return f"max |diff| {float(np.nanmax(np.abs(a - b))) if a.size else 0:.3g}"


# ----------------------------------------------------------------- minimizing
def _without_step(case, i):
    """Step i replaced by its first operand (when shapes agree), dead steps dropped."""
    st = case.steps[i]
    src_name = re.findall(r"\b(x|y|v\d+)\b", " ".join(st.lines))[0]
    src_shape = {"x": case.x_shape, "y": case.y_shape,
                 **{f"v{j}": s.shape for j, s in enumerate(case.steps)}}[src_name]
    if src_shape != st.shape:
        return None
    steps = list(case.steps)
    steps[i] = Step([f"{{o}} = {src_name}"], st.shape)
    return _compact(replace(case, steps=steps))


def _compact(case):
    """Drop steps the result does not use and aliases `v = w`, renumbering the rest."""
    steps = case.steps
    alive = {len(steps) - 1}
    for j in range(len(steps) - 1, -1, -1):
        if j in alive:
            for ln in steps[j].lines:
                alive |= {int(m) for m in re.findall(r"\bv(\d+)\b", ln) if int(m) < j}
    rename, out = {}, []

    def sub(ln):
        return re.sub(r"\bv(\d+)\b", lambda m: rename[int(m.group(1))], ln)
    for j, st in enumerate(steps):
        if j not in alive:
            continue
        m = re.fullmatch(r"\{o\} = (\w+)", st.lines[0]) if len(st.lines) == 1 else None
        if m and j != len(steps) - 1:
            rename[j] = sub(m.group(1))
            continue
        rename[j] = f"v{len(out)}"
        out.append(Step([sub(ln) for ln in st.lines], st.shape))
    return replace(case, steps=out)


def _size(case):
    return len(case.transforms), len(case.steps), sum(len(ln) for s in case.steps for ln in s.lines)


def minimize(case, ag, torch, kind):
    """Greedy shrinking that keeps a mismatch of the same kind."""
    def same(c):
        if c is None or c.render() is None or c.render(numeric=True) is None:
            return False
        try:
            return run_case(c, ag, torch).kind == kind
        except Exception:
            return False
    changed = True
    while changed:
        changed = False
        cands = [replace(case, transforms=case.transforms[:-1])] if len(case.transforms) > 1 \
            else []
        cands += [replace(case, transforms=case.transforms[1:])] if len(case.transforms) > 1 \
            else []
        cands += [replace(case, x_grad=False)] if case.x_grad else []
        cands += [_without_step(case, i) for i in range(len(case.steps))]
        for c in cands:
            if c is not None and _size(c) < _size(case) and same(c):
                case, changed = c, True
                break
    return case


def family(case, verdict):
    """A short label grouping mismatches that likely share a cause."""
    if verdict.kind == "raises" or verdict.kind == "warning":
        msg = re.sub(r"\d+(\.\d+)?", "N", verdict.detail.split("\n")[0])
        return f"{verdict.kind}: {msg[:90]}"
    return f"{verdict.kind}: " + ".".join(k for k, _ in reversed(case.transforms))


def sweep(n, start=0, show=2, out=sys.stdout):
    import arraygrad as ag
    import torch
    counts, families = {}, {}
    for i in range(start, start + n):
        case = generate(i)
        v = run_case(case, ag, torch)
        counts[v.kind] = counts.get(v.kind, 0) + 1
        if v.mismatch:
            families.setdefault(family(case, v), []).append((case, v))
    print(f"cases {n} (from {start}): " + ", ".join(f"{k} {c}" for k, c in sorted(counts.items())),
          file=out)
    for fam, items in sorted(families.items(), key=lambda kv: -len(kv[1])):
        print(f"\n== {len(items)} x {fam}: {' '.join(c.name for c, _ in items[:12])}", file=out)
        for case, v in items[:show]:
            small = minimize(case, ag, torch, v.kind)
            print(report(small, run_case(small, ag, torch)), file=out)
    return counts, families


def report(case, v):
    """The mismatch as a readable repro: the program as code and both results."""
    def show(o):
        if o is None:
            return "-"
        if o.error:
            return o.error.split("\n")[0][:300]
        return np.array2string(o.value, precision=5, threshold=40) + \
            f" (requires_grad={o.requires_grad})"
    lines = [f"--- {case.name}: {v.kind} {v.detail}", case.source("torch"),
             f"# torch:     {show(v.theirs)}", f"# arraygrad: {show(v.ours)}"]
    if v.fd is not None:
        lines.append(f"# finite differences: {show(v.fd)}")
    return "\n".join(lines)


if __name__ == "__main__":
    import argparse
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--cases", type=int, default=300)
    p.add_argument("--start", type=int, default=0)
    p.add_argument("--show", type=int, default=1, help="minimized repros per family")
    a = p.parse_args()
    sweep(a.cases, a.start, a.show)
