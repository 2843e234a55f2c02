"""Activation modules (torch.nn.modules.activation)."""
from ...ops import creation
from .. import functional as F
from .. import init as nn_init
from ..parameter import Parameter
from .module import Module


class ReLU(Module):
    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.relu(input, inplace=self.inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class Tanh(Module):
    def forward(self, input):
        return F.tanh(input)


class Sigmoid(Module):
    def forward(self, input):
        return F.sigmoid(input)


class Softmax(Module):
    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.softmax(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class LogSoftmax(Softmax):
    def forward(self, input):
        return F.log_softmax(input, self.dim)


class Softmin(Softmax):
    def forward(self, input):
        return F.softmin(input, self.dim, _stacklevel=5)


class Softmax2d(Module):
    def forward(self, input):
        if input.ndim not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.ndim}D "
                             "instead")
        return F.softmax(input, -3, _stacklevel=5)


class _Inplace(Module):
    """An activation with only an `inplace` flag."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class SiLU(_Inplace):
    def forward(self, input):
        return F.silu(input, self.inplace)


class Mish(_Inplace):
    def forward(self, input):
        return F.mish(input, self.inplace)


class SELU(_Inplace):
    def forward(self, input):
        return F.selu(input, self.inplace)


class Hardswish(_Inplace):
    def forward(self, input):
        return F.hardswish(input, self.inplace)


class Hardsigmoid(_Inplace):
    def forward(self, input):
        return F.hardsigmoid(input, self.inplace)


class GELU(Module):
    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class ELU(Module):
    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class CELU(ELU):
    def forward(self, input):
        return F.celu(input, self.alpha, self.inplace)


class LeakyReLU(Module):
    def __init__(self, negative_slope=0.01, inplace=False):
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace else "")


class PReLU(Module):
    """leaky_relu with a learned slope: one (num_parameters=1) or one per channel."""

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        super().__init__()
        self.num_parameters = num_parameters
        self.init = init
        self.weight = Parameter(creation.empty(num_parameters, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self):
        nn_init.constant_(self.weight, self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


class RReLU(Module):
    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        return (f"lower={self.lower}, upper={self.upper}"
                + (", inplace=True" if self.inplace else ""))


class Hardtanh(Module):
    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False):
        super().__init__()
        if min_val >= max_val:
            raise ValueError("min_val must be less than max_val")
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self):
        return (f"min_val={self.min_val}, max_val={self.max_val}"
                + (", inplace=True" if self.inplace else ""))


class ReLU6(Hardtanh):
    def __init__(self, inplace=False):
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class Softplus(Module):
    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class Softsign(Module):
    def forward(self, input):
        return F.softsign(input)


class Tanhshrink(Module):
    def forward(self, input):
        return F.tanhshrink(input)


class LogSigmoid(Module):
    def forward(self, input):
        return F.logsigmoid(input)


class Hardshrink(Module):
    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return F.hardshrink(input, self.lambd)

    def extra_repr(self):
        return f"{self.lambd}"


class Softshrink(Hardshrink):
    def forward(self, input):
        return F.softshrink(input, self.lambd)


class Threshold(Module):
    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self):
        return (f"threshold={self.threshold}, value={self.value}"
                + (", inplace=True" if self.inplace else ""))


class GLU(Module):
    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.glu(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"
