"""SGD with momentum, dampening, Nesterov and weight decay (torch.optim.SGD's algorithm)."""
from ..ops import shape
from .optimizer import Optimizer, check_options


class SGD(Optimizer):
    """p <- p - lr * g, where g adds weight decay and momentum as torch does.

        opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        opt.zero_grad(); loss.backward(); opt.step()
    """

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False,
                 *, maximize=False, foreach=None, differentiable=False, fused=None):
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        check_options(self, differentiable)
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov,
                                      maximize=maximize, foreach=foreach,
                                      differentiable=differentiable, fused=fused))

    def _update(self, p, group):
        g = -p.grad if group["maximize"] else p.grad
        if group["weight_decay"] != 0:
            g = g + p * group["weight_decay"]
        momentum = group["momentum"]
        if momentum != 0:
            state = self.state[p]
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = state["momentum_buffer"] = shape.clone(g)
            else:
                buf.mul_(momentum).add_(g, alpha=1 - group["dampening"])
            g = g + buf * momentum if group["nesterov"] else buf
        p.add_(g, alpha=-group["lr"])
