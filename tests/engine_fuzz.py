"""Differential fuzzer of the eager autograd API: random programs with hooks, retained grads,
in-place writes and several backward calls, against torch.

The transform fuzzer (transform_fuzz.py) draws what is differentiated; this one draws how:
tensor hooks (observing or replacing the gradient), `retain_grad`, node hooks and pre-hooks,
post-accumulate hooks on leaves, removed handles, detached and re-attached values, `no_grad`
blocks, in-place writes into clones, views and values already saved for backward, then one to
three of `backward` (with `gradient=`, `retain_graph=`, `inputs=`), `autograd.grad` (with
`allow_unused`, `create_graph` and a second backward through the gradient), and resets of
`.grad` between them. A case is a list of statements run one by one with `T` bound to
`arraygrad` or `torch`; a statement that raises logs its exception type and the program goes
on. Everything a user could observe goes to a log: each hook call with the sum of what it saw,
each exception type, and at the end every leaf's `.grad` and every retained gradient. The two
logs must be equal (numbers to 1e-9).

Node hooks are not put on the node of a value written through a view (`y[0].mul_(s)`): torch's
CopySlices node runs the written op's backward inside itself, so its hooks see gradients for
the base and for the op's other inputs, while arraygrad's hands the region's gradient on to the
op's own node; nor on a view's node, which a later write through the view leaves on
arraygrad's path to the base and not on torch's. The gradients agree; what a hook on those nodes
sees differs. Where torch's node
hook sees None for an input gradient no requested input needs (torch does not compute it),
arraygrad's may see the value. Likewise torch's node reads every value it saved when it runs, so
a saved value modified in place raises there even when only a gradient that does not read it
was requested (`v2.mul_(v0); v0.add_(1); grad(v2.sum(), b)` through v0): arraygrad computes that
gradient (correctly: it reads only the unmodified value) and raises only where a rule reads the
modified one (cases 3717 and 26386). And `y.sum().backward(inputs=[v])` for a non-leaf `v` whose graph
was freed: torch runs v's own node too and raises "backward through the graph a second time";
arraygrad needs only the nodes between the output and v, and accumulates v's gradient (cases
6785 and 18628). Where v was written through a view, both run and free v's own node in that
call, but torch's CopySlices node holds the written op's saved values, which go with it, while
arraygrad's op node below it is not run and keeps them: a later backward through v raises in
torch and computes the same gradient as without the first call in arraygrad (cases 24774 and
25865). A second backward through a freed graph raises that error in both, but torch's raises at
the CopySlices node of a value written through a view (its saved values are gone), while
arraygrad's, which keeps no such node, raises further down, after a hook registered on the value
before the write has seen its gradient (case 9669). `clone()` of a transposed tensor is
row-major here (the README's differences), so `view(-1)` of it works where torch's raises
(cases 13014 and 27681).

Run a sweep from the command line:

    PYTHONPATH=src python tests/engine_fuzz.py --cases 2000 [--start 0] [--show 3]
"""
import random
import sys
from dataclasses import dataclass

import numpy as np

PREAMBLE = '''\
f64 = T.float64
L = []


def rec(tag, x):
    """Log what a hook or a read saw: None, or the sum of each tensor (a tuple for node hooks)."""
    if isinstance(x, (tuple, list)):
        L.append((tag, tuple(None if g is None else g.detach().sum().item() for g in x)))
    else:
        L.append((tag, None if x is None else x.detach().sum().item()))


class Cube(T.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return 3 * x * x * g


class Split(T.autograd.Function):
    """Two outputs; backward sees an unused one's gradient as zeros (materialized)."""
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 2, x.sin()

    @staticmethod
    def backward(ctx, g1, g2):
        x, = ctx.saved_tensors
        rec('split', (g1, g2))
        return g1 * 2 + g2 * x.cos()
'''

SHAPES = [(3,), (2, 3)]


@dataclass
class Case:
    index: int
    lines: list

    def source(self):
        return PREAMBLE + "\n" + "\n".join(self.lines) + "\n"


class _Gen:
    def __init__(self, index):
        self.r = random.Random(index)
        self.lines = []
        self.vals = []          # (name, shape, requires grad, is leaf)
        self.n = 0
        self.handles = []
        self.base = {}          # view name -> the name of its base
        self.stale = set()      # views whose base was written in place
        self.copy_slices = set()    # values written through a view: no node hooks (docstring)

    def emit(self, line):
        self.lines.append(line)

    def new(self, expr, shape, rg, leaf=False):
        name = f"v{self.n}"
        self.n += 1
        self.emit(f"{name} = {expr}")
        self.vals.append((name, shape, rg, leaf))
        return name

    def pick(self, rg=None, ndim=None):
        c = [v for v in self.vals if (rg is None or v[2] == rg) and (ndim is None or len(v[1]) >= ndim)]
        return self.r.choice(c) if c else None

    # ----------------------------------------------------------- values
    def leaves(self):
        r = self.r
        shape = r.choice(SHAPES)
        for name, rg in (("a", True), ("b", True), ("c", False)):
            s = shape if name == "a" or r.random() < 0.6 else shape[-1:]
            data = np.round(np.array([r.uniform(-1.5, 1.5) for _ in range(int(np.prod(s)))]), 2)
            lit = repr(data.reshape(s).tolist())
            self.emit(f"{name} = T.tensor({lit}, dtype=f64, requires_grad={rg})")
            self.vals.append((name, s, rg, True))

    def op(self):
        r = self.r
        x = self.pick()
        name, shape, rg, _ = x
        kind = r.choices(["unary", "binary", "reduce", "view", "detach", "inplace_clone",
                          "inplace_view", "inplace_saved", "no_grad", "function", "split",
                          "saved_hooks", "detach_"],
                         [6, 6, 2, 3, 1, 2, 2, 1, 1, 1, 1, 1, 1])[0]
        if kind == "unary":
            e = r.choice(["{0}.sin()", "{0}.exp()", "{0}.tanh()", "{0} * {0}", "({0} * {0} + 1).log()",
                          "{0}.sigmoid()", "{0}.relu()", "{0}.abs()", "{0} * 2"]).format(name)
            return self.new(e, shape, rg)
        if kind == "binary":
            y = self.pick()
            out = np.broadcast_shapes(shape, y[1]) if _bcast(shape, y[1]) else None
            if out is None:
                return self.new(f"{name} * 3", shape, rg)
            e = r.choice(["{0} + {1}", "{0} * {1}", "{0} - {1}", "{0} / ({1} * {1} + 1)"]).format(name, y[0])
            return self.new(e, tuple(out), rg or y[2])
        if kind == "reduce":
            if len(shape) == 0 or r.random() < 0.4:
                return self.new(f"{name}.sum()", (), rg)
            return self.new(f"{name}.sum(-1)", shape[:-1], rg)
        if kind == "view":
            if len(shape) == 2:
                v = r.choice([(f"{name}.t()", shape[::-1]), (f"{name}[0]", shape[1:]),
                              (f"{name}.view(-1)", (shape[0] * shape[1],))])
            elif len(shape) == 1:
                v = r.choice([(f"{name}[1:]", (shape[0] - 1,)), (f"{name}.unsqueeze(0)", (1,) + shape),
                              (f"{name}.expand(2, {shape[0]})", (2,) + shape)])
            else:
                v = (f"{name}.view(1)", (1,))
            out = self.new(v[0], v[1], rg)
            self.base[out] = self.base.get(name, name)
            return out
        if kind == "detach":
            if r.random() < 0.5:
                return self.new(f"{name}.detach()", shape, False, leaf=True)
            return self.new(f"{name}.detach().requires_grad_()", shape, True, leaf=True)
        if kind == "inplace_clone":
            y = self.pick()
            arg = y[0] if _fits(y[1], shape) else "1.5"
            opn = r.choice(["mul_", "add_", "sub_"])
            out = self.new(f"{name}.clone()", shape, rg)
            self.emit(f"{out}.{opn}({arg})")
            if arg != "1.5" and y[2]:
                self.vals[-1] = (out, shape, True, False)
            return out
        if kind == "inplace_view":
            if len(shape) == 0:
                return self.new(f"{name} + 1", shape, rg)
            out = self.new(f"{name}.clone()", shape, rg)
            y = self.pick()
            arg = f"{y[0]}.sum()" if r.random() < 0.6 else "2.0"
            self.emit(f"{out}[0].mul_({arg})")
            self.copy_slices.add(out)
            if arg != "2.0" and y[2]:
                self.vals[-1] = (out, shape, True, False)
            return out
        if kind == "inplace_saved":
            # a value already used by later ops is written: backward through them must refuse
            cands = [v for v in self.vals if not v[3] and v[2]]
            if not cands:
                return self.new(f"{name}.exp()", shape, rg)
            v = r.choice(cands)
            self.emit(f"{v[0]}.add_(1)")
            if v[0] in self.base:       # a write through a view: the base's node is CopySlices
                self.copy_slices.add(self.base[v[0]])
            # torch 2.13 crashes registering a hook on a view whose base was written this way
            self.stale.update(n for n, b in self.base.items() if b == self.base.get(v[0], v[0]))
            return v[0]
        if kind == "no_grad":
            n = f"v{self.n}"
            self.n += 1
            self.emit(f"with T.no_grad():\n    {n} = {name} * 2")
            self.vals.append((n, shape, False, True))
            return n
        if kind == "split":
            # two outputs, maybe one unused: its gradient reaches backward as zeros (or None)
            out = self.new(f"Split.apply({name})[{r.randint(0, 1)}]", shape, rg)
            return out
        if kind == "saved_hooks":
            n = f"v{self.n}"
            self.n += 1
            self.emit("with T.autograd.graph.saved_tensors_hooks(lambda t: t * 2, lambda t: t / 2):"
                      f"\n    {n} = ({name} * {name}).exp()")
            self.vals.append((n, shape, rg, False))
            return n
        if kind == "detach_":
            # of a fresh value: one that a node saved is refused by torch at backward, where
            # arraygrad differentiates what was computed (README, "differs from torch")
            out = self.new(f"{name} + 1", shape, rg)
            if rg:
                self.emit(f"{out}.detach_()")
                self.vals[-1] = (out, shape, False, True)
            return out
        return self.new(f"Cube.apply({name})", shape, rg)

    # ----------------------------------------------------------- hooks
    def hook(self):
        r = self.r
        k = len(self.lines)
        nonleaf = [v for v in self.vals if v[2] and not v[3] and v[0] not in self.stale]
        leaf = [v for v in self.vals if v[2] and v[3]]
        kind = r.choices(["tensor", "tensor_scale", "retain", "node", "prehook", "post_acc",
                          "remove"], [3, 2, 2, 2, 2, 1, 1])[0]
        if kind in ("tensor", "tensor_scale"):
            v = r.choice(nonleaf + leaf) if nonleaf + leaf else None
            if v is None:
                return
            tag = "l" if v[3] else "h"      # hooks on leaves: see _normalised
            body = f"rec('{tag}{k}', g)" if kind == "tensor" else "g * 2"
            h = f"h{k}"
            self.emit(f"{h} = {v[0]}.register_hook(lambda g: {body})")
            self.handles.append(h)
        elif kind == "retain" and nonleaf:
            v = r.choice(nonleaf)
            self.emit(f"{v[0]}.retain_grad()")
            self.retained.append(v[0])
        nodes = [v for v in nonleaf if v[0] not in self.copy_slices and v[0] not in self.base]
        if kind == "node" and nodes:
            v = r.choice(nodes)
            self.emit(f"h{k} = {v[0]}.grad_fn.register_hook(lambda gi, go: rec('n{k}', gi + go))")
            self.handles.append(f"h{k}")
        elif kind == "prehook" and nodes:
            v = r.choice(nodes)
            body = (f"rec('p{k}', go)" if r.random() < 0.5
                    else "tuple(None if g is None else g * 3 for g in go)")
            self.emit(f"h{k} = {v[0]}.grad_fn.register_prehook(lambda go: {body})")
            self.handles.append(f"h{k}")
        elif kind == "post_acc" and leaf:
            v = r.choice(leaf)
            self.emit(f"h{k} = {v[0]}.register_post_accumulate_grad_hook("
                      f"lambda p: rec('q{k}', p.grad))")
            self.handles.append(f"h{k}")
        elif kind == "remove" and self.handles:
            self.emit(f"{self.r.choice(self.handles)}.remove()")

    # ----------------------------------------------------------- backward calls
    def backward(self):
        r = self.r
        v = self.pick(rg=True)
        if v is None:
            return
        name, shape, _, _ = v
        leaves = [x[0] for x in self.vals if x[2] and x[3]]
        others = [x[0] for x in self.vals if x[2] and not x[3]]
        retain = r.choice(["", ", retain_graph=True"])
        k = len(self.lines)
        kind = r.choices(["backward", "gradient", "inputs", "grad", "grad_create", "reset",
                          "roots", "grad_outputs"],
                         [3, 2, 1, 3, 2, 1, 1, 1])[0]
        w = self.pick(rg=True)[0]
        if kind == "backward":
            self.emit(f"{name}.sum().backward({retain[2:]})")
        elif kind == "gradient":
            g = "T.ones_like({0}) * 0.5" if shape else "T.tensor(2.0, dtype=f64)"
            self.emit(f"{name}.backward({g.format(name)}{retain})")
        elif kind == "inputs":
            ins = r.sample(leaves + others, k=min(len(leaves + others), r.randint(1, 2)))
            self.emit(f"{name}.sum().backward(inputs=[{', '.join(ins)}]{retain})")
        elif kind in ("grad", "grad_create"):
            ins = r.sample(leaves + others, k=min(len(leaves + others), r.randint(1, 3)))
            if kind == "grad":
                self.emit(f"rec('g{k}', T.autograd.grad({name}.sum(), [{', '.join(ins)}], "
                          f"allow_unused=True{retain}))")
            else:
                self.emit(f"gs{k} = T.autograd.grad({name}.sum(), [{', '.join(ins)}], "
                          f"create_graph=True, allow_unused=True)")
                self.emit(f"rec('g{k}', gs{k})")
                self.emit(f"sum((g * g).sum() for g in gs{k} if g is not None).backward()")
        elif kind == "roots":
            self.emit(f"T.autograd.backward([{name}.sum(), {w}.sum()], [None, "
                      f"T.tensor(0.5, dtype=f64)]{retain})")
        elif kind == "grad_outputs":
            ins = r.sample(leaves + others, k=min(len(leaves + others), r.randint(1, 2)))
            self.emit(f"rec('g{k}', T.autograd.grad([{name}.sum(), ({w} * {w}).sum()], "
                      f"[{', '.join(ins)}], grad_outputs=[T.tensor(2.0, dtype=f64), None], "
                      f"allow_unused=True{retain}))")
        else:
            leaf = r.choice(leaves)
            self.emit(r.choice([f"{leaf}.grad = None", f"{leaf}.grad.zero_()",
                                f"{leaf}.grad = T.ones_like({leaf})"]))

    def finish(self):
        for name, _, rg, leaf in self.vals:
            if rg and leaf:
                self.emit(f"rec('{name}.grad', {name}.grad)")
        for name in dict.fromkeys(self.retained):
            self.emit(f"rec('{name}.grad', {name}.grad)")


def _bcast(s, t):
    try:
        np.broadcast_shapes(s, t)
        return True
    except ValueError:
        return False


def _fits(s, t):
    """Whether a value of shape s can be written into one of shape t."""
    return _bcast(s, t) and tuple(np.broadcast_shapes(s, t)) == tuple(t)


def generate(index):
    g = _Gen(index)
    g.retained = []
    g.leaves()
    for _ in range(g.r.randint(2, 7)):
        g.op()
        if g.r.random() < 0.5:
            g.hook()
    for _ in range(g.r.randint(1, 3)):
        if g.r.random() < 0.4:
            g.hook()
        g.backward()
    g.finish()
    return Case(index, g.lines)


def run(case, lib):
    """The log of running `case` with `T = lib`: hook calls, exception types, final grads."""
    ns = {"T": lib}
    exec(PREAMBLE, ns)
    log = ns["L"]
    for line in case.lines:
        try:
            exec(line, ns)
        except Exception as e:      # the program goes on; the exception type is observed
            log.append(("raised", type(e).__name__, line, str(e)))
    return log


def _normalised(log):
    """The log with each run of consecutive leaf-hook entries ('l' tensor hooks, 'q'
    post-accumulate hooks) sorted: torch's engine orders leaves' nodes among themselves by
    its heap's tie-breaking, arraygrad's by creation, and both are correct."""
    out, run = [], []
    for x in log + [("end",)]:
        if x[0][0] in "lq" and x[0] != "raised":
            run.append(x)
            continue
        out.extend(sorted(run, key=lambda e: e[0]))
        run = []
        out.append(x)
    return out[:-1]


def _same(a, b):
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if x[0] != y[0]:
            return False
        if x[0] == "raised":
            if x[1:3] != y[1:3]:
                return False
            continue
        u, v = x[1], y[1]
        if isinstance(u, tuple) != isinstance(v, tuple):
            return False
        us, vs = (u, v) if isinstance(u, tuple) else ((u,), (v,))
        if len(us) != len(vs):
            return False
        for p, q in zip(us, vs):
            if q is None and p is not None and x[0][0] == "n":     # ours, torch
                continue        # a gradient torch's node did not compute (docstring)
            if (p is None) != (q is None):
                return False
            if p is not None and not np.isclose(p, q, rtol=1e-9, atol=1e-12, equal_nan=True):
                return False
    return True


def check(case, ag, torch):
    """None when both libraries log the same, else a report with the repro and both logs."""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = run(case, torch)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ours = run(case, ag)
    if any(x[0] == "raised" and "ZeroTensors are immutable" in x[3] for x in theirs):
        return None     # torch's own failure accumulating into a grad it made a ZeroTensor
    if _same(_normalised(ours), _normalised(theirs)):
        return None
    lines = [f"--- engine case {case.index}", "import torch as T", case.source(), "# torch:"]
    lines += [f"#   {x}" for x in theirs] + ["# arraygrad:"] + [f"#   {x}" for x in ours]
    return "\n".join(lines)


def sweep(n, start=0, show=3):
    import arraygrad as ag
    import torch
    bad = []
    for i in range(start, start + n):
        report = check(generate(i), ag, torch)
        if report:
            bad.append(report)
    print(f"cases {n} (from {start}): {len(bad)} mismatches")
    for report in bad[:show]:
        print(report)
        print()
    return bad


if __name__ == "__main__":
    import argparse
    p = argparse.ArgumentParser()
    p.add_argument("--cases", type=int, default=500)
    p.add_argument("--start", type=int, default=0)
    p.add_argument("--show", type=int, default=3)
    a = p.parse_args()
    sys.exit(1 if sweep(a.cases, a.start, a.show) else 0)
