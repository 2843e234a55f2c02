"""Padding layers (torch.nn.modules.padding): constant, zero, reflection, replication, circular."""
from .. import functional as F
from .module import Module


def _pads(padding, nd):
    if isinstance(padding, int):
        return (padding,) * (2 * nd)
    padding = tuple(padding)
    if len(padding) != 2 * nd:
        raise ValueError(f"expected padding to be an int or a tuple of {2 * nd} ints, got "
                         f"{padding}")
    return padding


class _PadNd(Module):
    _nd = None
    _mode = None

    def __init__(self, padding):
        super().__init__()
        self.padding = _pads(padding, self._nd)

    def forward(self, input):
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self):
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    _mode = "constant"

    def __init__(self, padding, value):
        super().__init__(padding)
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


def _family(mode, base, doc):
    classes = []
    for nd in (1, 2, 3):
        classes.append(type(f"{base}{nd}d", (_PadNd,), {"_nd": nd, "_mode": mode, "__doc__": doc,
                                                        "__module__": __name__}))
    return classes


class ConstantPad1d(_ConstantPadNd):
    _nd = 1


class ConstantPad2d(_ConstantPadNd):
    """Pad the last 2 dims with `value`: padding (left, right, top, bottom) or an int."""
    _nd = 2


class ConstantPad3d(_ConstantPadNd):
    _nd = 3


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad1d(_ZeroPadNd):
    _nd = 1


class ZeroPad2d(_ZeroPadNd):
    _nd = 2


class ZeroPad3d(_ZeroPadNd):
    _nd = 3


ReflectionPad1d, ReflectionPad2d, ReflectionPad3d = _family(
    "reflect", "ReflectionPad", "Pad by reflecting the input at its borders (edge not repeated).")
ReplicationPad1d, ReplicationPad2d, ReplicationPad3d = _family(
    "replicate", "ReplicationPad", "Pad by repeating the input's edge values.")
CircularPad1d, CircularPad2d, CircularPad3d = _family(
    "circular", "CircularPad", "Pad by wrapping the input around (periodic boundary).")
