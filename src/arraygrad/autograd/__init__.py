"""torch.autograd: backward, grad, grad modes, graph nodes, custom Functions.

The package holds two layers (docs/architecture.md): the machinery (graph nodes, views and
in-place writes, level 0, the engine, Function) and, above the transforms, this facade with
the functional API, forward_ad and the checks. The machinery is imported first: importing
`eager` installs level 0 into the dispatcher.
"""
from ..core.grad_mode import (no_grad, enable_grad, set_grad_enabled, inference_mode,  # noqa: F401
                              is_grad_enabled)
from . import graph, eager, inplace, engine, function  # noqa: F401
from .engine import backward, is_checkpoint_valid as _is_checkpoint_valid  # noqa: F401
from .anomaly_mode import set_detect_anomaly, detect_anomaly  # noqa: F401
from .function import Function, FunctionCtx, once_differentiable, set_strict, is_strict  # noqa: F401
from .batched import grad  # noqa: F401
from . import functional, forward_ad  # noqa: F401
from .gradcheck import gradcheck, gradgradcheck, GradcheckError  # noqa: F401
from .check import check_function, CheckFunctionError  # noqa: F401
from .variable import Variable  # noqa: F401  (deprecated alias)
from . import variable, profiler, grad_mode  # noqa: F401  (torch.autograd.<module> paths)
