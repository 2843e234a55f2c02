"""Pytrees: nested tuples, lists, dicts (and namedtuples) of leaves."""


class TreeSpec:
    __slots__ = ("kind", "meta", "children")

    def __init__(self, kind, meta, children):
        self.kind, self.meta, self.children = kind, meta, children

    @property
    def num_leaves(self):
        if self.kind is None:
            return 1
        return sum(c.num_leaves for c in self.children)

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


def tree_flatten(tree):
    """(leaves, spec) of `tree`, depth-first, dict keys in insertion order."""
    leaves = []

    def go(x):
        c = _children(x)
        if c is None:
            leaves.append(x)
            return LEAF
        kind, meta, kids = c
        return TreeSpec(kind, meta, [go(k) for k in kids])
    spec = go(tree)
    del go      # the recursive closure is a cycle holding `leaves`: break it (no gc needed)
    return leaves, spec


def tree_unflatten(leaves, spec):
    it = iter(leaves)

    def go(s):
        if s.kind is None:
            return next(it)
        kids = [go(c) for c in s.children]
        if s.meta is not None:
            return s.kind(zip(s.meta, kids))
        if s.kind is tuple or s.kind is list:
            return s.kind(kids)
        return s.kind(*kids)
    out = go(spec)
    del go      # as in tree_flatten: the closure would keep the leaves alive until gc
    return out


def tree_map(fn, tree, *rest):
    leaves, spec = tree_flatten(tree)
    others = [tree_flatten(r)[0] for r in rest]
    return tree_unflatten([fn(*xs) for xs in zip(leaves, *others)], spec)


def tree_leaves(tree):
    return tree_flatten(tree)[0]
