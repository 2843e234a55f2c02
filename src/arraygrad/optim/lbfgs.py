"""L-BFGS with an optional strong-Wolfe line search (torch.optim.LBFGS's algorithm).

The scalars of the method (curvatures, step lengths, directional derivatives)
are Python floats; the vectors are flat arraygrad tensors over all parameters.
"""
from ..core.grad_mode import enable_grad, no_grad
from ..ops import creation, shape
from .optimizer import Optimizer, check_range


class LBFGS(Optimizer):
    """Quasi-Newton steps from the last `history_size` curvature pairs; `step(closure)`
    runs up to `max_iter` iterations, each re-evaluating `closure` (which must return
    the loss after calling backward).

        opt = optim.LBFGS(model.parameters(), line_search_fn="strong_wolfe")
        def closure():
            opt.zero_grad(); loss = loss_fn(model(x), y); loss.backward(); return loss
        opt.step(closure)
    """

    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7,
                 tolerance_change=1e-9, history_size=100, line_search_fn=None):
        check_range("learning rate", lr)
        if line_search_fn not in (None, "strong_wolfe"):
            raise RuntimeError("only 'strong_wolfe' is supported")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        super().__init__(params, dict(lr=lr, max_iter=max_iter, max_eval=max_eval,
                                      tolerance_grad=tolerance_grad,
                                      tolerance_change=tolerance_change,
                                      history_size=history_size, line_search_fn=line_search_fn))
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    def add_param_group(self, param_group):
        if self.param_groups:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        super().add_param_group(param_group)

    def _flat_grad(self):
        return shape.cat([p.grad.reshape(-1) if p.grad is not None
                          else creation.zeros(p.numel(), dtype=p.dtype) for p in self._params])

    def _add_grad(self, step_size, update):
        offset = 0
        for p in self._params:
            n = p.numel()
            p.add_(update[offset:offset + n].view_as(p), alpha=step_size)
            offset += n

    def _directional_evaluate(self, closure, x, t, d):
        """Loss and flat gradient at x + t d; the parameters are restored to x after."""
        self._add_grad(t, d)
        loss = float(closure())
        flat_grad = self._flat_grad()
        for p, saved in zip(self._params, x):
            p.copy_(saved)
        return loss, flat_grad

    def step(self, closure):
        if closure is None:
            raise RuntimeError("LBFGS.step() requires a closure that reevaluates the model "
                               "and returns the loss")
        self._opt_called = True
        with no_grad():
            return self._step(closure)

    def _step(self, closure):
        group = self.param_groups[0]
        lr, max_iter, max_eval = group["lr"], group["max_iter"], group["max_eval"]
        tol_grad, tol_change = group["tolerance_grad"], group["tolerance_change"]
        history_size = group["history_size"]

        def evaluate():
            with enable_grad():
                return closure()

        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)
        orig_loss = evaluate()
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._flat_grad()
        if flat_grad.abs().max().item() <= tol_grad:
            return orig_loss

        d, t = state.get("d"), state.get("t")
        old_dirs, old_stps, ro = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        H_diag = state.get("H_diag")
        prev_flat_grad, prev_loss = state.get("prev_flat_grad"), state.get("prev_loss")
        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d = -flat_grad
                old_dirs, old_stps, ro, H_diag = [], [], [], 1.0
            else:
                y = flat_grad - prev_flat_grad
                s = d * t
                ys = y.dot(s).item()
                if ys > 1e-10:         # keep the pair only if the curvature is positive
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    H_diag = ys / y.dot(y).item()
                # two-loop recursion: d = -H g
                al = [0.0] * len(old_dirs)
                q = -flat_grad
                for i in range(len(old_dirs) - 1, -1, -1):
                    al[i] = old_stps[i].dot(q).item() * ro[i]
                    q.add_(old_dirs[i], alpha=-al[i])
                d = r = q * H_diag
                for i in range(len(old_dirs)):
                    be_i = old_dirs[i].dot(r).item() * ro[i]
                    r.add_(old_stps[i], alpha=al[i] - be_i)
            prev_flat_grad = shape.clone(flat_grad)
            prev_loss = loss
            if state["n_iter"] == 1:
                t = min(1.0, 1.0 / flat_grad.abs().sum().item()) * lr
            else:
                t = lr
            gtd = flat_grad.dot(d).item()
            if gtd > -tol_change:
                break
            ls_func_evals = 0
            if group["line_search_fn"] == "strong_wolfe":
                x_init = [shape.clone(p) for p in self._params]
                loss, flat_grad, t, ls_func_evals = _strong_wolfe(
                    lambda x, t, d: self._directional_evaluate(evaluate, x, t, d),
                    x_init, t, d, loss, flat_grad, gtd, max_ls=max_eval - current_evals)
                self._add_grad(t, d)
                opt_cond = flat_grad.abs().max().item() <= tol_grad
            else:
                self._add_grad(t, d)
                opt_cond = False
                if n_iter != max_iter:
                    loss = float(evaluate())
                    flat_grad = self._flat_grad()
                    opt_cond = flat_grad.abs().max().item() <= tol_grad
                    ls_func_evals = 1
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals
            if (n_iter == max_iter or current_evals >= max_eval or opt_cond
                    or (d * t).abs().max().item() <= tol_change
                    or abs(loss - prev_loss) < tol_change):
                break

        state.update(d=d, t=t, old_dirs=old_dirs, old_stps=old_stps, ro=ro, H_diag=H_diag,
                     prev_flat_grad=prev_flat_grad, prev_loss=prev_loss)
        return orig_loss


def _cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    """Minimiser of the cubic through (x1, f1, g1) and (x2, f2, g2), clipped to bounds."""
    if bounds is not None:
        xmin_bound, xmax_bound = bounds
    else:
        xmin_bound, xmax_bound = (x1, x2) if x1 <= x2 else (x2, x1)
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if d2_square < 0:
        return (xmin_bound + xmax_bound) / 2.0
    d2 = d2_square ** 0.5
    if x1 <= x2:
        min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(min_pos, xmin_bound), xmax_bound)


def _strong_wolfe(obj_func, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9,
                  max_ls=25):
    """A step t satisfying the strong Wolfe conditions: bracket, then zoom by cubic
    interpolation (Nocedal & Wright, algorithms 3.5 and 3.6)."""
    d_norm = d.abs().max().item()
    f_new, g_new = obj_func(x, t, d)
    ls_func_evals = 1
    gtd_new = g_new.dot(d).item()
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    bracket_gtd = None
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new], [gtd_prev, gtd_new]
            break
        # extrapolate
        min_step, max_step = t + 0.01 * (t - t_prev), t * 10
        t_prev, t = t, _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                                          bounds=(min_step, max_step))
        f_prev, g_prev, gtd_prev = f_new, g_new, gtd_new
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = g_new.dot(d).item()
        ls_iter += 1
    if ls_iter == max_ls:
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]

    # zoom until the bracket is too small or the conditions hold
    insuf_progress = False
    low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0],
                               bracket[1], bracket_f[1], bracket_gtd[1])
        # a point too close to an end makes little progress: move it inward
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            if insuf_progress or t >= max(bracket) or t <= min(bracket):
                t = max(bracket) - eps if abs(t - max(bracket)) < abs(t - min(bracket)) \
                    else min(bracket) + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = g_new.dot(d).item()
        ls_iter += 1
        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low_pos]:
            bracket[high_pos], bracket_f[high_pos] = t, f_new
            bracket_g[high_pos], bracket_gtd[high_pos] = g_new, gtd_new
            low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high_pos] - bracket[low_pos]) >= 0:
                bracket[high_pos], bracket_f[high_pos] = bracket[low_pos], bracket_f[low_pos]
                bracket_g[high_pos] = bracket_g[low_pos]
                bracket_gtd[high_pos] = bracket_gtd[low_pos]
            bracket[low_pos], bracket_f[low_pos] = t, f_new
            bracket_g[low_pos], bracket_gtd[low_pos] = g_new, gtd_new
    return bracket_f[low_pos], bracket_g[low_pos], bracket[low_pos], ls_func_evals
