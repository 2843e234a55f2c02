"""torch.sparse: functions on sparse COO tensors (see NOTE [sparse COO])."""
from ._sparse_tensor import sum, mm, addmm  # noqa: F401
