"""Adadelta (torch.optim.Adadelta's single-tensor algorithm)."""
from ..ops import creation
from .optimizer import Optimizer, check_options, check_range, scalar_tensor


class Adadelta(Optimizer):
    """Steps scaled by RMS(past updates) / RMS(gradients): no hand-tuned rate needed.

        opt = optim.Adadelta(model.parameters())
    """

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 capturable=False, maximize=False, differentiable=False):
        check_range("learning rate", lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        check_range("epsilon value", eps)
        check_range("weight_decay value", weight_decay)
        check_options(self, differentiable)
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay,
                                      maximize=maximize, capturable=capturable, foreach=foreach,
                                      differentiable=differentiable))

    def _update(self, p, group):
        rho, eps = group["rho"], group["eps"]
        g = -p.grad if group["maximize"] else p.grad
        state = self.state[p]
        if not state:
            state["step"] = scalar_tensor(0)
            state["square_avg"] = creation.zeros_like(p)
            state["acc_delta"] = creation.zeros_like(p)
        state["step"].add_(1)
        if group["weight_decay"] != 0:
            g = g + p * group["weight_decay"]
        square_avg = state["square_avg"].mul_(rho).addcmul_(g, g, value=1 - rho)
        std = (square_avg + eps).sqrt_()
        delta = (state["acc_delta"] + eps).sqrt_().div_(std).mul_(g)
        state["acc_delta"].mul_(rho).addcmul_(delta, delta, value=1 - rho)
        p.add_(delta, alpha=-group["lr"])
