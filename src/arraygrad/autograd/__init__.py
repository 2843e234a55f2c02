"""torch.autograd: backward, grad, grad modes, graph nodes."""
from ..core.grad_mode import (no_grad, enable_grad, set_grad_enabled, inference_mode,  # noqa: F401
                              is_grad_enabled)
from .engine import backward, grad, is_checkpoint_valid as _is_checkpoint_valid  # noqa: F401
from . import graph  # noqa: F401
from .anomaly_mode import set_detect_anomaly, detect_anomaly  # noqa: F401
from . import functional  # noqa: F401
from . import forward_ad  # noqa: F401,E402
from .function import Function, FunctionCtx, once_differentiable, set_strict, is_strict  # noqa: F401,E402
from . import function  # noqa: F401,E402
from .gradcheck import gradcheck, gradgradcheck, GradcheckError  # noqa: F401,E402
from .check import check_function, CheckFunctionError  # noqa: F401,E402
from .variable import Variable  # noqa: F401,E402  (deprecated alias, compat15)
from . import variable  # noqa: F401,E402
from . import profiler  # noqa: F401,E402
from . import grad_mode  # noqa: F401,E402  (torch.autograd.grad_mode path)
