"""Flatten parameters to one vector and back (torch.nn.utils.convert_parameters)."""
from ... import _tensor as _t
from ...ops import shape


def parameters_to_vector(parameters):
    """All parameters, flattened and concatenated (differentiable)."""
    return shape.cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec, parameters):
    """Copy consecutive slices of `vec` into the parameters' data."""
    if not isinstance(vec, _t.Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    offset = 0
    for p in parameters:
        n = p.numel()
        if offset + n > vec.numel():
            raise RuntimeError(f"vector_to_parameters: the vector has {vec.numel()} elements, "
                               "fewer than the parameters")
        p.data = vec[offset:offset + n].view_as(p).data
        offset += n
