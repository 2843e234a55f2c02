"""RMSprop (torch.optim.RMSprop's single-tensor algorithm)."""
from ..ops import creation
from .optimizer import Optimizer, check_options, check_range, scalar_tensor


class RMSprop(Optimizer):
    """Divide the gradient by a running RMS of its recent magnitudes (optionally centered,
    with momentum).

        opt = optim.RMSprop(model.parameters(), lr=0.01, alpha=0.99)
    """

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, capturable=False, foreach=None, maximize=False,
                 differentiable=False):
        check_range("learning rate", lr)
        check_range("epsilon value", eps)
        check_range("momentum value", momentum)
        check_range("weight_decay value", weight_decay)
        check_range("alpha value", alpha)
        check_options(self, differentiable)
        super().__init__(params, dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps,
                                      centered=centered, weight_decay=weight_decay,
                                      capturable=capturable, foreach=foreach, maximize=maximize,
                                      differentiable=differentiable))

    def _update(self, p, group):
        alpha, wd, momentum = group["alpha"], group["weight_decay"], group["momentum"]
        g = -p.grad if group["maximize"] else p.grad
        state = self.state[p]
        if not state:
            state["step"] = scalar_tensor(0)
            state["square_avg"] = creation.zeros_like(p)
            if momentum > 0:
                state["momentum_buffer"] = creation.zeros_like(p)
            if group["centered"]:
                state["grad_avg"] = creation.zeros_like(p)
        state["step"].add_(1)
        if wd != 0:
            g = g + p * wd
        square_avg = state["square_avg"].mul_(alpha).addcmul_(g, g, value=1 - alpha)
        if group["centered"]:
            grad_avg = state["grad_avg"].lerp_(g, 1 - alpha)
            avg = (square_avg - grad_avg * grad_avg).sqrt_()
        else:
            avg = square_avg.sqrt()
        avg = avg.add_(group["eps"])
        if momentum > 0:
            buf = state["momentum_buffer"].mul_(momentum).addcdiv_(g, avg)
            p.add_(buf, alpha=-group["lr"])
        else:
            p.addcdiv_(g, avg, value=-group["lr"])
