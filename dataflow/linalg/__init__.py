"""``df.linalg``: linear algebra under ``tf.linalg``'s names, each the same function as its
top-level spelling (``df.linalg.inv is df.matrix_inverse``).

Layer: linalg, above `primitives` (linear operators and matrix functions use cond and
while_loop) and below autodiff; it may import the framework, ops and primitives.
"""

from ..ops.clip_ops import global_norm
from ..ops.linalg_ops import norm, normalize, qr
from ..ops.math_ops import matmul
from ..ops.matrix_logarithm_ops import logm
from ..ops.matrix_ops import (
    adjoint,
    cholesky,
    cholesky_solve,
    einsum,
    eye,
    logdet,
    matrix_transpose,
    matvec,
    tensordot,
    trace,
)
from ..ops.matrix_ops import diag as tensor_diag
from ..ops.matrix_ops import diag_part as tensor_diag_part
from ..ops.matrix_ops import matrix_band_part as band_part
from ..ops.matrix_ops import matrix_determinant as det
from ..ops.matrix_ops import matrix_diag as diag
from ..ops.matrix_ops import matrix_diag_part as diag_part
from ..ops.matrix_ops import matrix_inverse as inv
from ..ops.matrix_ops import matrix_set_diag as set_diag
from ..ops.matrix_ops import matrix_solve as solve
from ..ops.nn_impl import l2_normalize
from . import experimental as experimental
from .linalg_impl import (
    cross,
    eigh,
    eigh_tridiagonal,
    eigvalsh,
    expm,
    lstsq,
    lu,
    lu_matrix_inverse,
    lu_reconstruct,
    lu_solve,
    matrix_rank,
    pinv,
    slogdet,
    sqrtm,
    svd,
    triangular_solve,
    tridiagonal_matmul,
    tridiagonal_solve,
)
from .linear_operator import (
    LinearOperator,
    LinearOperatorAdjoint,
    LinearOperatorComposition,
    LinearOperatorDiag,
    LinearOperatorFullMatrix,
    LinearOperatorInversion,
    LinearOperatorLowerTriangular,
)
from .linear_operator_blocks import (
    LinearOperatorBlockDiag,
    LinearOperatorBlockLowerTriangular,
    LinearOperatorKronecker,
    LinearOperatorLowRankUpdate,
)
from .linear_operator_circulant import (
    LinearOperatorCirculant,
    LinearOperatorCirculant2D,
    LinearOperatorCirculant3D,
)
from .linear_operator_identity import (
    LinearOperatorIdentity,
    LinearOperatorScaledIdentity,
    LinearOperatorZeros,
)
from .linear_operator_structured import (
    LinearOperatorHouseholder,
    LinearOperatorPermutation,
    LinearOperatorToeplitz,
    LinearOperatorTridiag,
)

transpose = matrix_transpose

__all__ = [
    "LinearOperator",
    "LinearOperatorAdjoint",
    "LinearOperatorBlockDiag",
    "LinearOperatorBlockLowerTriangular",
    "LinearOperatorCirculant",
    "LinearOperatorCirculant2D",
    "LinearOperatorCirculant3D",
    "LinearOperatorComposition",
    "LinearOperatorDiag",
    "LinearOperatorFullMatrix",
    "LinearOperatorHouseholder",
    "LinearOperatorIdentity",
    "LinearOperatorInversion",
    "LinearOperatorKronecker",
    "LinearOperatorLowRankUpdate",
    "LinearOperatorLowerTriangular",
    "LinearOperatorPermutation",
    "LinearOperatorScaledIdentity",
    "LinearOperatorToeplitz",
    "LinearOperatorTridiag",
    "LinearOperatorZeros",
    "adjoint",
    "band_part",
    "cholesky",
    "cholesky_solve",
    "cross",
    "det",
    "diag",
    "diag_part",
    "eigh",
    "eigh_tridiagonal",
    "eigvalsh",
    "einsum",
    "experimental",
    "expm",
    "eye",
    "global_norm",
    "inv",
    "l2_normalize",
    "logdet",
    "logm",
    "lstsq",
    "lu",
    "lu_matrix_inverse",
    "lu_reconstruct",
    "lu_solve",
    "matmul",
    "matrix_rank",
    "matrix_transpose",
    "matvec",
    "norm",
    "normalize",
    "pinv",
    "qr",
    "set_diag",
    "slogdet",
    "solve",
    "sqrtm",
    "svd",
    "tensor_diag",
    "tensor_diag_part",
    "tensordot",
    "trace",
    "transpose",
    "triangular_solve",
    "tridiagonal_matmul",
    "tridiagonal_solve",
]
