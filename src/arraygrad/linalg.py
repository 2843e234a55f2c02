"""torch.linalg: linear algebra under torch's names (the primitives live under ops/)."""
from .ops._checks import LinAlgError  # noqa: F401
from .ops.linalg import matmul, vecdot, multi_dot, linalg_cross as cross  # noqa: F401
from .ops.solve import (inv, inv_ex, det, slogdet, solve, solve_ex, solve_triangular,  # noqa: F401
                        linalg_cholesky as cholesky, cholesky_ex, lu, lu_factor, lu_factor_ex,
                        lu_solve, matrix_power, matrix_exp)
from .ops.norms import norm, vector_norm, matrix_norm  # noqa: F401
from .ops.spectral import (svd, svdvals, eigh, eigvalsh, qr, pinv, matrix_rank, lstsq,  # noqa: F401
                           householder_product)
from .ops.shape import diagonal as _diagonal


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """The diagonals of a stack of matrices (a view): torch.diagonal with the last two dims."""
    return _diagonal(A, offset, dim1, dim2)
