"""torch.cpu.amp: the deprecated spelling of torch.amp for device "cpu"."""
from .. import amp as _amp

__all__ = ["autocast", "GradScaler"]

autocast, GradScaler = _amp.device_aliases("cpu", _amp._dt.bfloat16)
