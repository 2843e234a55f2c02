"""Pytrees: nested tuples, lists, dicts (and namedtuples) of leaves."""


class TreeSpec:
    __slots__ = ("kind", "meta", "children")

    def __init__(self, kind, meta, children):
        self.kind, self.meta, self.children = kind, meta, children

    @property
    def num_leaves(self):
        n, stack = 0, [self]
        while stack:
            s = stack.pop()
            if s.kind is None:
                n += 1
            else:
                stack.extend(s.children)
        return n

    def __eq__(self, other):
        return (isinstance(other, TreeSpec) and self.kind == other.kind and
                self.meta == other.meta and self.children == other.children)

    def __repr__(self):
        if self.kind is None:
            return "*"
        return f"{self.kind.__name__}({', '.join(map(repr, self.children))})"


LEAF = TreeSpec(None, None, ())


def _children(x):
    t = type(x)
    if t is tuple or t is list:
        return t, None, list(x)
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return t, None, list(x)
    if isinstance(x, dict):
        keys = list(x.keys())
        return type(x), keys, [x[k] for k in keys]
    return None


# NOTE [no recursion]
# Flattening and rebuilding walk the tree with explicit stacks: a custom Function's
# apply runs them at every nesting level, and recursion here would cost Python frames
# in proportion to the depth of the tree on top of the nesting itself.
def tree_flatten(tree):
    """(leaves, spec) of `tree`, depth-first, dict keys in insertion order."""
    leaves = []
    root = [None]
    stack = [(tree, root, 0)]       # (subtree, list its spec goes into, at which index)
    while stack:
        x, slot, i = stack.pop()
        c = _children(x)
        if c is None:
            leaves.append(x)
            slot[i] = LEAF
            continue
        kind, meta, kids = c
        specs = [None] * len(kids)
        slot[i] = TreeSpec(kind, meta, specs)
        for j in range(len(kids) - 1, -1, -1):
            stack.append((kids[j], specs, j))
    return leaves, root[0]


def _build(spec, kids):
    if spec.meta is not None:
        return spec.kind(zip(spec.meta, kids))
    if spec.kind is tuple or spec.kind is list:
        return spec.kind(kids)
    return spec.kind(*kids)


def tree_unflatten(leaves, spec):
    it = iter(leaves)
    if spec.kind is None:
        return next(it)
    frames = [(spec, [])]           # (spec being built, its children built so far)
    while True:
        s, kids = frames[-1]
        if len(kids) < len(s.children):
            c = s.children[len(kids)]
            if c.kind is None:
                kids.append(next(it))
            else:
                frames.append((c, []))
            continue
        frames.pop()
        value = _build(s, kids)
        if not frames:
            return value
        frames[-1][1].append(value)


def tree_map(fn, tree, *rest):
    leaves, spec = tree_flatten(tree)
    others = [tree_flatten(r)[0] for r in rest]
    return tree_unflatten([fn(*xs) for xs in zip(leaves, *others)], spec)


def tree_leaves(tree):
    return tree_flatten(tree)[0]
