"""torch.autograd: backward, grad, grad modes, graph nodes."""
from ..core.grad_mode import (no_grad, enable_grad, set_grad_enabled, inference_mode,  # noqa: F401
                              is_grad_enabled)
from .engine import backward, grad  # noqa: F401
from . import graph  # noqa: F401
from . import forward_ad  # noqa: F401,E402
