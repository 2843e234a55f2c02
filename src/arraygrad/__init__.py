"""arraygrad: PyTorch's autograd, custom Functions and torch.func over array libraries.

    import arraygrad as torch
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    (x ** 2).sum().backward()
    x.grad      # tensor([2., 4.])
"""
from .dtypes import (dtype, float16, half, bfloat16, float32, float, float64, double, uint8, int8,  # noqa: F401
                     int16, short, int32, int, int64, long, bool, complex64, cfloat, complex128,
                     cdouble, get_default_dtype, set_default_dtype, promote_types,
                     result_type as _result_type)
from ._tensor import Tensor, Size  # noqa: F401
from ._device import device, set_default_device, get_default_device  # noqa: F401
from .core.grad_mode import (no_grad, enable_grad, set_grad_enabled, inference_mode,  # noqa: F401
                             is_grad_enabled, is_inference_mode_enabled)
from .autograd.anomaly_mode import (is_anomaly_enabled, is_anomaly_check_nan_enabled,  # noqa: F401
                                    set_anomaly_enabled)
from .ops.creation import (tensor, as_tensor, asarray, from_numpy, zeros, ones, empty, full,  # noqa: F401
                           zeros_like, ones_like, empty_like, full_like, arange, linspace,
                           logspace, eye, manual_seed, seed, initial_seed, get_rng_state,
                           set_rng_state, rand, randn, randint, randperm, rand_like,
                           randn_like, randint_like, normal, bernoulli,
                           multinomial)
from .ops.elementwise import (add, sub, subtract, mul, multiply, div, divide, true_divide,  # noqa: F401
                              floor_divide, remainder, pow, neg, negative, rsub, exp, log, sqrt,
                              rsqrt, abs, sign, tanh, sigmoid, relu, sin, cos, tan, log1p, expm1,
                              log2, log10, asin, acos, atan, sinh, cosh, erf, square, reciprocal,
                              floor, ceil, round, trunc, clamp, clip, clamp_min, clamp_max,
                              maximum, minimum, where, eq, ne, lt, le, gt, ge, greater,
                              greater_equal, less, less_equal, not_equal, logical_and,
                              logical_or, logical_xor, logical_not, bitwise_and, bitwise_or,
                              bitwise_xor, bitwise_not, isnan, isinf, isfinite, equal, allclose,
                              isclose)
from .ops.reduce import (sum, mean, prod, max, min, amax, amin, aminmax, argmax, argmin, logsumexp,  # noqa: F401
                         softmax, log_softmax, var, std, norm, all, any, cumsum)
from .ops.shape import (reshape, flatten, unflatten, transpose, swapaxes, swapdims, t,  # noqa: F401
                        permute, movedim, moveaxis, unsqueeze, squeeze, expand, broadcast_to,
                        broadcast_shapes, broadcast_tensors, clone, detach, flip, roll, cat,
                        concat, concatenate, stack, hstack, vstack, narrow, split, chunk, unbind,
                        select, repeat, tile, diagonal, trace, diag)
from .ops.index import (gather, index_select, masked_fill, masked_select, nonzero,  # noqa: F401
                        take, take_along_dim, scatter_add)
from .ops.linalg import (matmul, mm, bmm, mv, dot, inner, vdot, outer, ger, addmm,  # noqa: F401
                         baddbmm, addbmm, einsum)
from .ops.elementwise import (atan2, arctan2, logaddexp, hypot, lerp, addcmul, addcdiv,  # noqa: F401
                              xlogy, logit, fmod)
from .ops.shape import tril, triu, meshgrid, ravel, diff  # noqa: F401
from .ops.shape import cartesian_prod, combinations, block_diag, as_strided  # noqa: F401
from .ops.creation import tril_indices, triu_indices, poisson  # noqa: F401
from .ops.linalg import tensordot, kron, cross  # noqa: F401
from .ops.reduce import (argsort, sort, topk, var_mean, std_mean, count_nonzero,  # noqa: F401
                         cumprod)
from .ops.index import scatter, index_add, index_fill  # noqa: F401
from .ops.complex import (real, imag, conj, conj_physical, resolve_conj, is_conj, sgn,  # noqa: F401
                          angle, complex, polar, view_as_real, view_as_complex)
from .ops.index import scatter_reduce, index_reduce, masked_scatter, put  # noqa: F401
from .ops.elementwise import (asinh, acosh, atanh, arcsin, arccos, arctan, arcsinh,  # noqa: F401
                              arccosh, arctanh, exp2, frac, deg2rad, rad2deg, float_power, ldexp,
                              gcd, lcm)
from .ops.elementwise import abs as absolute, trunc as fix  # noqa: F401
from .ops.linalg import addmv, addr  # noqa: F401
from .ops.index import index_copy, index_put_op as index_put  # noqa: F401
from .ops.norms import renorm  # noqa: F401
from .ops.special import mvlgamma  # noqa: F401
from . import _tensor_methods  # noqa: F401
from . import autograd  # noqa: F401
from . import func  # noqa: F401
from . import nn, optim  # noqa: F401
from . import cuda, accelerator  # noqa: F401
from .ops.special import lgamma, digamma, polygamma, erfinv, erfc, i0, sinc, igamma, igammac  # noqa: F401
from . import special, fft  # noqa: F401
# elementwise/reductions (elem14)
from .ops.bits import copysign, nextafter, heaviside, nan_to_num  # noqa: F401
from .ops.stats import (median, nanmedian, kthvalue, mode, cummax, cummin,  # noqa: F401
                        logcumsumexp, quantile, nanquantile, unique, unique_consecutive,
                        bincount, histc, bucketize, searchsorted)
from .nn.functional import (cdist, pdist, pairwise_distance, cosine_similarity, bilinear,  # noqa: F401
                            selu, celu, rrelu, prelu, hardshrink)
from .func import vmap  # noqa: F401
# training stack (train15): Generator, torch.utils.data, save/load
from ._generator import Generator, default_generator  # noqa: F401
# torch-namespace compatibility (compat15)
from . import amp, cpu, profiler, random  # noqa: F401
from .amp import autocast, is_autocast_enabled, get_autocast_dtype, set_autocast_dtype  # noqa: F401
from ._legacy import (FloatTensor, DoubleTensor, HalfTensor, ByteTensor, CharTensor,  # noqa: F401
                      ShortTensor, IntTensor, LongTensor, BoolTensor, BFloat16Tensor,
                      set_default_tensor_type)
from .utils import data as _utils_data  # noqa: F401  (makes torch.utils.data reachable)
from .serialization import save, load  # noqa: F401
from .dask_arrays import from_dask, compute, map_blocks  # noqa: F401
from . import safetensors  # noqa: F401,E402  (safetensors.torch's API)
from ._layout import layout, strided, sparse_coo  # noqa: F401
from ._sparse_tensor import sparse_coo_tensor, spmm  # noqa: F401
from . import sparse  # noqa: F401
from . import distributions  # noqa: F401  (dist15)
from .ops.solve import (inv as inverse, det, logdet, slogdet, cholesky, cholesky_solve,  # noqa: F401
                        cholesky_inverse, triangular_solve, lu_unpack, matrix_power, matrix_exp)
from .ops.solve import legacy_lu as lu, legacy_lu_solve as lu_solve  # noqa: F401
from . import linalg  # noqa: F401
from .ops.spectral import qr, svd, pinverse, symeig, orgqr  # noqa: F401
from .utils import checkpoint as _utils_checkpoint, benchmark as _utils_benchmark  # noqa: F401

__version__ = "0.1.0"


def is_tensor(obj):
    return isinstance(obj, Tensor)


def numel(input):
    return input.numel()


def result_type(tensor1, tensor2):
    return _result_type(tensor1, tensor2)


def is_floating_point(input):
    return input.dtype.is_floating_point


def is_complex(input):
    return input.dtype.is_complex
# script plumbing and NumPy-style array functions (breadth14)
from ._format import set_printoptions  # noqa: F401,E402
from ._type_info import finfo, iinfo, can_cast, typename  # noqa: F401,E402
from ._settings import (set_num_threads, get_num_threads, set_num_interop_threads,  # noqa: F401,E402
                        get_num_interop_threads, use_deterministic_algorithms,
                        are_deterministic_algorithms_enabled,
                        is_deterministic_algorithms_warn_only_enabled,
                        set_deterministic_debug_mode, get_deterministic_debug_mode,
                        set_float32_matmul_precision, get_float32_matmul_precision,
                        set_flush_denormal, set_warn_always, is_warn_always_enabled, compile)
from .ops.arrays import (atleast_1d, atleast_2d, atleast_3d, column_stack, dstack,  # noqa: F401,E402
                         row_stack, tensor_split, hsplit, vsplit, dsplit, split_with_sizes,
                         unsafe_split, unsafe_chunk, unsafe_split_with_sizes, fliplr, flipud,
                         rot90, diag_embed, diagflat, diagonal_scatter, select_scatter,
                         slice_scatter, repeat_interleave, argwhere, unravel_index, vander,
                         msort, adjoint, resolve_neg, is_neg)
from .ops.numerics import (nansum, nanmean, fmax, fmin, logaddexp2, signbit, isposinf,  # noqa: F401,E402
                           isneginf, isreal, positive, frexp, bitwise_left_shift,
                           bitwise_right_shift, isin, dist, gradient, trapezoid, trapz,
                           cumulative_trapezoid, cov, corrcoef, histogram, hann_window,
                           hamming_window, blackman_window, bartlett_window, kaiser_window)
from .ops.arrays import COPIES as _COPIES  # noqa: E402
globals().update(_COPIES)

from ._interop import (frombuffer, from_dlpack, to_dlpack, empty_strided, scalar_tensor,  # noqa: F401,E402
                       is_nonzero, is_same_size, is_signed, get_device, is_inference)
from ._nn_aliases import (conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d,  # noqa: F401,E402
                          conv_transpose3d, pixel_shuffle, pixel_unshuffle, avg_pool1d,
                          adaptive_avg_pool1d, adaptive_max_pool1d, prelu, rms_norm, batch_norm,
                          instance_norm, layer_norm, group_norm, dropout, alpha_dropout,
                          feature_dropout, feature_alpha_dropout, dropout_, alpha_dropout_,
                          feature_dropout_, feature_alpha_dropout_, embedding, max_pool1d,
                          max_pool2d, max_pool3d, max_pool1d_with_indices, threshold, threshold_,
                          selu_, celu_, rrelu_, kl_div, ctc_loss,
                          binary_cross_entropy_with_logits, cosine_embedding_loss,
                          hinge_embedding_loss, margin_ranking_loss, poisson_nll_loss,
                          triplet_margin_loss, constant_pad_nd, channel_shuffle, fill, index_put,
                          chain_matmul)
from ._nn_aliases import INPLACE as _INPLACE  # noqa: E402
globals().update(_INPLACE)
from .ops.numerics import deprecated_range as range  # noqa: F401,E402  (shadows the builtin here)
