"""torch.cuda.amp: deprecated aliases of torch.amp for device "cuda" (disabled here, with
torch's warnings, since no GPU backend is available)."""
from .. import amp as _amp

__all__ = ["autocast", "GradScaler", "custom_fwd", "custom_bwd"]


autocast, GradScaler = _amp.device_aliases("cuda", _amp._dt.float16)


def custom_fwd(fwd=None, *, cast_inputs=None):
    return _amp.custom_fwd(fwd, device_type="cuda", cast_inputs=cast_inputs)


def custom_bwd(bwd):
    return _amp.custom_bwd(bwd, device_type="cuda")
