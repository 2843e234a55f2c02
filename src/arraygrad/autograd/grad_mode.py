"""torch.autograd.grad_mode: the grad-mode context managers, at the path scripts import them
from (`from torch.autograd.grad_mode import no_grad`). They live in core.grad_mode."""
from ..core.grad_mode import (no_grad, enable_grad, set_grad_enabled,  # noqa: F401
                              inference_mode)
