"""torch.func: composable transforms (grad, vjp, jvp, vmap, jacrev, jacfwd, hessian)."""
from .reverse import grad, grad_and_value, vjp  # noqa: F401
from .vmap import vmap  # noqa: F401
from .batch_level import vmap_loop_fallback  # noqa: F401
from .jacobian import jacrev, functional_call, stack_module_state  # noqa: F401
from .forward import jvp, linearize, jacfwd, hessian  # noqa: F401
from . import custom_function  # noqa: F401  (registers the custom Function's rules per level)
