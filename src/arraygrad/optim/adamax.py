"""Adamax (torch.optim.Adamax's single-tensor algorithm)."""
from ..ops import creation, elementwise as ew
from .optimizer import Optimizer, check_options, check_range, scalar_tensor


class Adamax(Optimizer):
    """Adam with the infinity norm: u <- max(beta2 * u, |g| + eps), p <- p - lr_t * m / u.

        opt = optim.Adamax(model.parameters(), lr=2e-3)
    """

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 foreach=None, *, maximize=False, differentiable=False, capturable=False):
        check_range("learning rate", lr)
        check_range("epsilon value", eps)
        check_range("beta parameter at index 0", betas[0], 0.0, 1.0)
        check_range("beta parameter at index 1", betas[1], 0.0, 1.0)
        check_range("weight_decay value", weight_decay)
        check_options(self, differentiable)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      foreach=foreach, maximize=maximize,
                                      differentiable=differentiable, capturable=capturable))

    def _update(self, p, group):
        beta1, beta2 = group["betas"]
        g = -p.grad if group["maximize"] else p.grad
        state = self.state[p]
        if not state:
            state["step"] = scalar_tensor(0)
            state["exp_avg"] = creation.zeros_like(p)
            state["exp_inf"] = creation.zeros_like(p)
        step = state["step"].add_(1).item()
        if group["weight_decay"] != 0:
            g = g + p * group["weight_decay"]
        exp_avg = state["exp_avg"].lerp_(g, 1 - beta1)
        exp_inf = state["exp_inf"]
        exp_inf.copy_(ew.maximum(exp_inf.mul_(beta2), g.abs() + group["eps"]))
        p.addcdiv_(exp_avg, exp_inf, value=-group["lr"] / (1 - beta1 ** step))
