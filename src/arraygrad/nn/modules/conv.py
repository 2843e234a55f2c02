"""Convolution layers (torch.nn.modules.conv): Conv1d/2d/3d, ConvTranspose1d/2d/3d."""
import math

from ...ops import creation
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def _tuple(value, n):
    return tuple(value) if isinstance(value, (tuple, list)) else (value,) * n


class _ConvNd(Module):
    """Shared parameters, torch's default init and repr of the convolution layers."""

    _nd = None
    transposed = False

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros", device=None, dtype=None,
                 output_padding=0):
        super().__init__()
        nd = self._nd
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {list(_PADDING_MODES)}, but got "
                             f"padding_mode='{padding_mode}'")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size = _tuple(kernel_size, nd)
        self.stride = _tuple(stride, nd)
        self.dilation = _tuple(dilation, nd)
        self.output_padding = _tuple(output_padding, nd)
        self.groups = groups
        self.padding_mode = padding_mode
        if isinstance(padding, str):
            if padding not in ("valid", "same"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                                 "{'valid', 'same'}")
            if padding == "same" and any(s != 1 for s in self.stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
            self.padding = padding
        else:
            self.padding = _tuple(padding, nd)
        self._pad_for_mode = self._mode_padding()
        shape = ((in_channels, out_channels // groups) if self.transposed
                 else (out_channels, in_channels // groups)) + self.kernel_size
        self.weight = Parameter(creation.empty(*shape, dtype=dtype))
        if bias:
            self.bias = Parameter(creation.empty(out_channels, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def _mode_padding(self):
        """F.pad's argument for padding_mode != 'zeros' (last dim first, both sides)."""
        pads = []
        for d, k, i in zip(reversed(self.dilation), reversed(self.kernel_size),
                           range(self._nd - 1, -1, -1)):
            if self.padding == "valid":
                pads += [0, 0]
            elif self.padding == "same":
                total = d * (k - 1)
                pads += [total // 2, total - total // 2]
            else:
                pads += [self.padding[i]] * 2
        return tuple(pads)

    def reset_parameters(self):
        # NOTE [conv init]: as nn.Linear, kaiming_uniform_(a=sqrt(5)) and a bias in
        # U(-1/sqrt(fan_in), 1/sqrt(fan_in)), fan_in taken from the weight's dim 1 and kernel
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self):
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        if self.padding != (0,) * len(self.padding):
            s += f", padding={self.padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class _Conv(_ConvNd):
    _fn = None      # the name of the nn.functional op (bound late: functional imports modules)

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, device, dtype)

    def _conv_forward(self, input, weight, bias):
        fn = getattr(F, self._fn)
        if self.padding_mode != "zeros":
            input = F.pad(input, self._pad_for_mode, mode=self.padding_mode)
            return fn(input, weight, bias, self.stride, 0, self.dilation, self.groups)
        return fn(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_Conv):
    """1-d convolution layer: weight (out, in/groups, k), input (N, in, L)."""
    _nd = 1
    _fn = "conv1d"


class Conv2d(_Conv):
    """2-d convolution layer: weight (out, in/groups, kh, kw), input (N, in, H, W).

        >>> conv = nn.Conv2d(3, 16, 3, padding=1)
    """
    _nd = 2
    _fn = "conv2d"


class Conv3d(_Conv):
    _nd = 3
    _fn = "conv3d"


class _ConvTranspose(_ConvNd):
    transposed = True
    _fn = None

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros",
                 device=None, dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        if isinstance(padding, str):
            raise ValueError(f"{type(self).__name__}: padding must be an int or a tuple of ints")
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, device, dtype, output_padding)

    def _output_padding(self, input, output_size):
        """The output_padding that gives `output_size` (torch's rule), else the attribute."""
        if output_size is None:
            return self.output_padding
        nd = self._nd
        lead = 2 if input.ndim == nd + 2 else 1
        output_size = tuple(output_size)
        if len(output_size) == lead + nd:
            output_size = output_size[lead:]
        if len(output_size) != nd:
            raise ValueError(f"ConvTranspose{nd}D: for {input.ndim}D input, output_size must have"
                             f" {nd} or {lead + nd} elements (got {len(output_size)})")
        extra = []
        for d in range(nd):
            least = ((input.shape[d + lead] - 1) * self.stride[d] - 2 * self.padding[d]
                     + self.dilation[d] * (self.kernel_size[d] - 1) + 1)
            most = least + self.stride[d] - 1
            if not least <= output_size[d] <= most:
                raise ValueError(f"requested an output size of {list(output_size)}, but valid "
                                 f"sizes range from {least} to {most} (for an input of "
                                 f"{list(input.shape[lead:])})")
            extra.append(output_size[d] - least)
        return tuple(extra)

    def forward(self, input, output_size=None):
        extra = self._output_padding(input, output_size)
        return getattr(F, self._fn)(input, self.weight, self.bias, self.stride, self.padding,
                                    extra, self.groups, self.dilation)


class ConvTranspose1d(_ConvTranspose):
    _nd = 1
    _fn = "conv_transpose1d"


class ConvTranspose2d(_ConvTranspose):
    """Transposed 2-d convolution layer: weight (in, out/groups, kh, kw)."""
    _nd = 2
    _fn = "conv_transpose2d"


class ConvTranspose3d(_ConvTranspose):
    _nd = 3
    _fn = "conv_transpose3d"
