"""Undoing a broadcast: the one place a gradient is summed back to its input's shape (vjp
rules of broadcasting ops, the check of a Function's gradients, vmap's generated rules)."""


def sum_to(g, shape):
    """`g`, whose shape `shape` broadcasts to, summed over the broadcast dims to `shape`."""
    dims = broadcast_dims(g.shape, shape)
    if dims:
        g = g.sum(dims, keepdim=True)
    if len(g.shape) != len(shape):
        g = g.reshape(tuple(shape))
    return g


def broadcast_dims(gshape, shape):
    """The dims of `gshape` that broadcasting `shape` to it added or stretched."""
    lead = len(gshape) - len(shape)
    return tuple(range(lead)) + tuple(lead + j for j, s in enumerate(shape)
                                      if s == 1 and gshape[lead + j] != 1)


def broadcasts_to(shape, target):
    """Whether `shape` broadcasts to `target` (so that a gradient of `target` sums to it)."""
    lead = len(target) - len(shape)
    return lead >= 0 and all(s == 1 or s == d for s, d in zip(shape, target[lead:]))
