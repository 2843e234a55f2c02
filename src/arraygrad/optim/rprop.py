"""Rprop (torch.optim.Rprop's single-tensor algorithm)."""
from ..ops import creation
from .optimizer import Optimizer, check_options, check_range, scalar_tensor


class Rprop(Optimizer):
    """Resilient backpropagation: each entry's step size grows by etas[1] while its gradient
    keeps its sign and shrinks by etas[0] when the sign flips (that entry then pauses a step);
    the parameter moves by the step size against the gradient's sign.

        opt = optim.Rprop(model.parameters(), lr=1e-2)
    """

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        check_range("learning rate", lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        check_options(self, differentiable)
        super().__init__(params, dict(lr=lr, etas=etas, step_sizes=step_sizes,
                                      foreach=foreach, maximize=maximize,
                                      differentiable=differentiable, capturable=capturable))

    def _update(self, p, group):
        eta_minus, eta_plus = group["etas"]
        low, high = group["step_sizes"]
        g = -p.grad if group["maximize"] else p.grad
        state = self.state[p]
        if not state:
            state["step"] = scalar_tensor(0)
            state["prev"] = creation.zeros_like(p)
            state["step_size"] = creation.full_like(g, group["lr"])
        state["step"].add_(1)
        prev, step_size = state["prev"], state["step_size"]
        sign = (g * prev).sign()
        factor = creation.ones_like(sign).masked_fill(sign > 0, eta_plus).masked_fill(
            sign < 0, eta_minus)
        step_size.mul_(factor).clamp_(low, high)
        g = g.masked_fill(sign < 0, 0)      # a flipped sign: no move, and no sign to keep
        p.addcmul_(g.sign(), step_size, value=-1)
        prev.copy_(g)
