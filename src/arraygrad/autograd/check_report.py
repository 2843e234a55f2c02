"""What a gradient check found, for people: a table, the worst entries, a picture, HTML.

    report = arraygrad.autograd.check_function(MyCube, x, raise_on_failure=False)
    print(report)            # one row per mode
    report.plot("bad.png")   # expected / got / difference heatmaps of each failing mode

`gradcheck` failures carry the same object (`GradcheckError.report`).
"""
import html

import numpy as np

__all__ = ["Mismatch", "ModeResult", "CheckReport"]

_WORST = 6          # entries listed per mismatch
_NOTE = 100         # characters of a diagnosis or message in the table

PASSED, FAILED, NOT_SUPPORTED, ERROR = "passed", "failed", "not supported", "error"


def _index(flat, shape):
    return list(map(int, np.unravel_index(flat, shape))) if len(shape) else []


class Mismatch:
    """Two matrices that should agree: expected[r, c] vs got[r, c].

    Rows and columns are flattened elements of `row_shape`/`col_shape`, named
    `row_label[...]` and `col_label[...]` (for a Jacobian block: input element ->
    output element).
    """

    def __init__(self, title, expected, got, row_label, row_shape, col_label, col_shape,
                 atol, rtol, expected_name="expected", got_name="got"):
        self.title = title
        self.expected = np.asarray(expected, dtype=np.float64)
        self.got = np.asarray(got, dtype=np.float64)
        self.row_label, self.row_shape = row_label, tuple(row_shape)
        self.col_label, self.col_shape = col_label, tuple(col_shape)
        self.atol, self.rtol = atol, rtol
        self.expected_name, self.got_name = expected_name, got_name

    @property
    def bad(self):
        """Entries off by more than atol + rtol * |expected| (NaN counts as off)."""
        with np.errstate(invalid="ignore"):
            close = np.abs(self.got - self.expected) <= self.atol + self.rtol * np.abs(
                self.expected)
        return ~close

    def lines(self):
        diff = np.abs(self.got - self.expected)
        bad = self.bad
        n_bad = int(bad.sum())
        score = np.where(bad, np.nan_to_num(diff, nan=np.inf), -1.0).reshape(-1)
        order = np.argsort(-score, kind="stable")[:min(_WORST, n_bad)]
        out = [f"{self.title}: {n_bad} of {diff.size} entries differ "
               f"(atol={self.atol}, rtol={self.rtol}); largest difference "
               f"{np.nanmax(diff) if diff.size else 0:.6g}"]
        for flat in order:
            r, c = np.unravel_index(flat, self.expected.shape)
            out.append(f"  {self.row_label}{_index(r, self.row_shape)} -> "
                       f"{self.col_label}{_index(c, self.col_shape)}: {self.expected_name} "
                       f"{self.expected[r, c]:.8g} vs {self.got_name} {self.got[r, c]:.8g}")
        return out

    def draw(self, axes, prefix=""):
        """Three heatmaps on three matplotlib axes: expected, got, got - expected."""
        diff = self.got - self.expected
        lim = np.nanmax(np.abs(np.concatenate([self.expected.ravel(), self.got.ravel(), [0.0]])))
        dlim = np.nanmax(np.abs(np.append(diff.ravel(), 0.0)))
        panels = ((self.expected_name, self.expected, lim), (self.got_name, self.got, lim),
                  (f"{self.got_name} - {self.expected_name}", diff, dlim))
        for ax, (name, m, v) in zip(axes, panels):
            v = v if v and np.isfinite(v) else 1.0
            im = ax.imshow(m.T, cmap="RdBu_r", vmin=-v, vmax=v, aspect="auto",
                           interpolation="nearest")
            ax.set_title(f"{prefix}{self.title}\n{name}", fontsize=8)
            ax.set_xlabel(self.row_label, fontsize=7)
            ax.set_ylabel(self.col_label, fontsize=7)
            ax.figure.colorbar(im, ax=ax)


class ModeResult:
    """One mode's outcome: status, message, one-line diagnosis, mismatches, warnings."""

    def __init__(self, mode, status, message="", diagnosis=None, mismatches=(), warnings=()):
        self.mode = mode
        self.status = status
        self.message = message
        self.diagnosis = diagnosis
        self.mismatches = list(mismatches)
        self.warnings = list(warnings)

    @property
    def ok(self):
        return self.status in (PASSED, NOT_SUPPORTED)

    def __repr__(self):
        return f"ModeResult({self.mode!r}, {self.status!r})"


class CheckReport:
    """The rows of one check; `str()` is a table, `plot()` a picture, `passed` (also its
    truth value) the verdict."""

    def __init__(self, title, results):
        self.title = title
        self.results = list(results)

    @property
    def passed(self):
        """True when no mode failed or errored ("not supported" is not a failure)."""
        return all(r.ok for r in self.results)

    @property
    def failures(self):
        return [r for r in self.results if not r.ok]

    def __getitem__(self, mode):
        for r in self.results:
            if r.mode == mode:
                return r
        raise KeyError(f"no mode {mode!r} in this report; modes: "
                       f"{[r.mode for r in self.results]}")

    def __iter__(self):
        return iter(self.results)

    def __len__(self):
        return len(self.results)

    def __bool__(self):
        """`assert check_function(...)` reads like `assert gradcheck(...)`."""
        return self.passed

    def __str__(self):
        width = max([len(r.mode) for r in self.results] + [4])
        lines = [self.title, f"{'mode':<{width}}  {'status':<13}  diagnosis / message"]
        for r in self.results:
            note = r.diagnosis or (r.message if r.status != PASSED else "")
            if len(note) > _NOTE:
                note = note[:_NOTE - 3] + "..."
            lines.append(f"{r.mode:<{width}}  {r.status:<13}  {note}".rstrip())
        unsupported, details = {}, {}
        for r in self.results:
            if r.status == NOT_SUPPORTED:
                unsupported.setdefault(r.message, []).append(r.mode)
            elif r.status in (FAILED, ERROR):
                body = [f"  diagnosis: {r.diagnosis}"] if r.diagnosis else []
                for m in r.mismatches:
                    body.extend("  " + s for s in m.lines())
                key = (r.status, r.message, tuple(body))
                if key in details:      # the same finding as an earlier mode: name it
                    lines.append(f"[{r.mode}] {r.status}: the same as [{details[key]}]")
                    continue
                details[key] = r.mode
                lines += ["", f"[{r.mode}] {r.status}: {r.message}"] + body
            lines.extend(f"[{r.mode}] warning: {w}" for w in r.warnings)
        for msg, modes in unsupported.items():
            lines += ["", f"[{', '.join(modes)}] not supported: {msg}"]
        verdict = "passed" if self.passed else f"FAILED ({len(self.failures)} of {len(self)} modes)"
        lines += ["", f"result: {verdict}"]
        return "\n".join(lines)

    __repr__ = __str__

    def plot(self, fname=None, max_mismatches=4):
        """Heatmaps of expected, got and their difference for each failing mode's
        mismatches (matplotlib, the `plot` extra). Saves to `fname` when given;
        returns the Figure."""
        try:
            import matplotlib.pyplot as plt
        except ImportError as e:
            raise ImportError("report.plot() needs matplotlib: pip install "
                              "'arraygrad[plot]'") from e
        ms = []     # (mode, mismatch), each distinct picture once
        for r in self.results:
            for m in r.mismatches:
                if not any(np.array_equal(m.got, q.got) and np.array_equal(m.expected, q.expected)
                           for _, q in ms):
                    ms.append((r.mode, m))
        ms = ms[:max_mismatches]
        if not ms:
            raise ValueError(f"report.plot(): nothing to draw, no mode of {self.title!r} has a "
                             "numerical mismatch (errors and unsupported modes have no picture)")
        fig, axes = plt.subplots(len(ms), 3, figsize=(11, 3.2 * len(ms)), squeeze=False)
        for (mode, m), row in zip(ms, axes):
            m.draw(row, f"[{mode}] ")
        fig.suptitle(self.title, fontsize=9)
        fig.tight_layout()
        if fname is not None:
            fig.savefig(fname)
            plt.close(fig)
        return fig

    def _repr_html_(self):
        colour = {PASSED: "#1a7f37", FAILED: "#cf222e", ERROR: "#cf222e",
                  NOT_SUPPORTED: "#6e7781"}
        rows = []
        for r in self.results:
            note = r.diagnosis or (r.message if r.status != PASSED else "")
            detail = "".join(f"<pre>{html.escape(chr(10).join(m.lines()))}</pre>"
                             for m in r.mismatches)
            rows.append(f"<tr><td><code>{html.escape(r.mode)}</code></td>"
                        f"<td style='color:{colour[r.status]}'><b>{r.status}</b></td>"
                        f"<td>{html.escape(note)}{detail}</td></tr>")
        return (f"<p><b>{html.escape(self.title)}</b></p><table><tr><th>mode</th>"
                f"<th>status</th><th>diagnosis / message</th></tr>{''.join(rows)}</table>")
