"""Undoing a broadcast: the one place a gradient is summed back to its input's shape (vjp
rules of broadcasting ops, the check of a Function's gradients, vmap's generated rules)."""


def sum_to(g, shape):
    """`g`, whose shape `shape` broadcasts to, summed over the broadcast dims to `shape`."""
    gs = g.shape
    lead = len(gs) - len(shape)
    dims = tuple(range(lead)) + tuple(lead + j for j, s in enumerate(shape)
                                      if s == 1 and gs[lead + j] != 1)
    if dims:
        g = g.sum(dims, keepdim=True)
    if lead:
        g = g.reshape(tuple(shape))
    return g


def broadcasts_to(shape, target):
    """Whether `shape` broadcasts to `target` (so that a gradient of `target` sums to it)."""
    lead = len(target) - len(shape)
    return lead >= 0 and all(s == 1 or s == d for s, d in zip(shape, target[lead:]))
