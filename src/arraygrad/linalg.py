"""torch.linalg: linear algebra under torch's names (the primitives live under ops/)."""
from .ops._checks import LinAlgError  # noqa: F401
from .ops.linalg import matmul, cross  # noqa: F401
from .ops.spectral import (svd, svdvals, eigh, eigvalsh, qr, pinv, matrix_rank, lstsq,  # noqa: F401
                           householder_product)
