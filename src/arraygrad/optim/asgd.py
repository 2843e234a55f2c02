"""ASGD (torch.optim.ASGD's single-tensor algorithm)."""
from ..ops import creation
from .optimizer import Optimizer, check_options, check_range, scalar_tensor


class ASGD(Optimizer):
    """Averaged SGD: p <- p (1 - lambd eta) - eta g, with eta = lr / (1 + lambd lr t)^alpha;
    the running average `ax` of the iterates starts after t0 steps (before, it is p).

        opt = optim.ASGD(model.parameters(), lr=1e-2)
    """

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0,
                 foreach=None, maximize=False, differentiable=False, capturable=False):
        check_range("learning rate", lr)
        check_range("weight_decay value", weight_decay)
        check_options(self, differentiable)
        super().__init__(params, dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0,
                                      weight_decay=weight_decay, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable,
                                      capturable=capturable))

    def _update(self, p, group):
        lr, lambd = group["lr"], group["lambd"]
        g = -p.grad if group["maximize"] else p.grad
        state = self.state[p]
        if not state:
            state["step"] = scalar_tensor(0)
            state["eta"] = scalar_tensor(lr)
            state["mu"] = scalar_tensor(1)
            state["ax"] = creation.zeros_like(p)
        step = state["step"].add_(1).item()
        if group["weight_decay"] != 0:
            g = g.add(p, alpha=group["weight_decay"])
        eta = state["eta"].item()
        p.mul_(1 - lambd * eta)
        p.add_(g, alpha=-eta)
        mu, ax = state["mu"], state["ax"]
        if mu.item() != 1:
            ax.add_(p.sub(ax).mul_(mu))
        else:
            ax.copy_(p)
        # (as torch: the new values pass through the default dtype, also into float64 state)
        state["eta"].copy_(creation.tensor(lr / ((1 + lambd * lr * step) ** group["alpha"])))
        mu.copy_(creation.tensor(1 / max(1, step - group["t0"])))
