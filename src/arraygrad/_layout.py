"""Memory layouts: `strided` (dense arrays) and `sparse_coo` (indices plus values)."""


class layout:
    """torch.layout: what a tensor's `.layout` says about how its elements are stored."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"arraygrad.{self.name}"

    def __reduce__(self):
        return self.name    # pickles as the module-level singleton


strided = layout("strided")
sparse_coo = layout("sparse_coo")
