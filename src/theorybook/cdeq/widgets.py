"""The chapter's control panel: NFE budget, C-DEQ mode, baseline solver and one test digit → the test-set error and
accuracy curves against NFE (precomputed by :func:`theorybook.cdeq.run_experiment`) with the chosen budget marked,
and that digit's ``ẑ`` (C-DEQ and baseline) against its ``z*``, computed live (a few layer calls on one input).

``explorer(run)`` takes the chapter's :class:`~theorybook.cdeq.experiment.Run`; without one it runs the experiment
once at seed 0 (≈ 10–20 s on a CPU) and caches it.
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import numpy as np
import torch

from ..device import one_thread, to_numpy
from ..plotting import COLORS, figure, label_axes, theory_line
from ..validate import integer, one_of
from ..widgets import live_panel
from .evaluation import cdeq_infer
from .evaluation import rel_error as _rel
from .experiment import Run, run_experiment
from .solvers import solve

__all__ = ["Summary", "explorer", "render", "summarize"]

BASELINES = ("picard", "anderson", "broyden")
MODES = ("refine", "rejump")
_MIN = {"picard": 1, "anderson": 1, "broyden": 1}  # every solver is evaluated from NFE 1
NFE_OPTIONS = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32)


class Summary(NamedTuple):
    """C-DEQ's and the baseline's test accuracy and mean relative error at the chosen NFE (NaN-free: ``None`` where
    the baseline cannot run at that budget), the digit's relative errors, and the status line."""

    cdeq: tuple[float, float]
    baseline: tuple[float, float] | None
    digit_errors: tuple[float, float | None]
    label: str


@functools.lru_cache(maxsize=1)
def _default_run() -> Run:
    return run_experiment(0)


def _check_run(run: Any) -> Run:
    if run is None:
        return _default_run()
    if not isinstance(run, Run):
        raise TypeError(f"Invalid run: {type(run).__name__} (must be a Run from run_experiment, or None)")
    return run


def _at(run: Run, key: str, nfe: int) -> tuple[float, float] | None:
    c = run.curves[key]
    hit = np.nonzero(c.nfe == nfe)[0]
    return (float(c.accuracy[hit[0]]), float(c.rel_error[hit[0]])) if hit.size else None


def summarize(run: Run | None = None, nfe: int = 1, mode: str = "refine", baseline: str = "picard",
              digit: int = 0) -> Summary:
    """Numbers for one setting; C-DEQ off the precomputed grid is evaluated on the test set live."""
    run = _check_run(run)
    nfe = integer("nfe", nfe, 1, 128)
    one_of("mode", mode, MODES)
    one_of("baseline", baseline, BASELINES)
    x, y = run.split.x_test, run.split.y_test
    digit = integer("digit", digit, 0, x.shape[0] - 1)
    key = f"cdeq-{mode}"
    cd = _at(run, key, nfe)
    with torch.no_grad():
        if cd is None:
            z = cdeq_infer(run.student, x, nfe, mode=mode)
            zs = run.teacher.fixed_point(x)
            cd = (float((run.teacher.logits(z).argmax(-1) == y).double().mean()), float(_rel(z, zs).mean()))
        xd = x[digit:digit + 1]
        zsd = run.teacher.fixed_point(xd)
        d_cd = float(_rel(cdeq_infer(run.student, xd, nfe, mode=mode), zsd)[0])
        d_bl = float(_rel(solve(run.teacher, xd, nfe, baseline).z, zsd)[0]) if nfe >= _MIN[baseline] else None
    bl = _at(run, baseline, nfe)
    label = (f"NFE {nfe}: C-DEQ ({mode}) accuracy {cd[0]:.1%}, rel. error {cd[1]:.3f} · "
             + (f"{baseline} accuracy {bl[0]:.1%}, rel. error {bl[1]:.3f}" if bl else
                f"{baseline}: not evaluated at this NFE (curves stop at {int(run.curves[baseline].nfe.max())})")
             + f" · exact z*: {run.exact_accuracy:.1%}")
    return Summary(cd, bl, (d_cd, d_bl), label)


def render(run: Run | None = None, nfe: int = 1, mode: str = "refine", baseline: str = "picard", digit: int = 0):
    """The panel's figure for one setting; returns ``(fig, summary)``."""
    run = _check_run(run)
    with one_thread(run.split.x_test.device):  # many small ops: a second thread only adds synchronisation
        return _render(run, nfe, mode, baseline, digit)


def _render(run: Run, nfe: int, mode: str, baseline: str, digit: int):
    s = summarize(run, nfe, mode, baseline, digit)
    fig, (ax, ax2) = figure(2, width=4.4, height=3.2)
    for i, key in enumerate((f"cdeq-{mode}", baseline)):
        c = run.curves[key]
        ax.loglog(c.nfe, c.rel_error, lw=1.3, color=COLORS[i], label=key)
    g = run.teacher.gamma
    k = np.arange(1, 129)
    theory_line(ax, k, g**k, label="γ^k (Picard bound)")
    ax.axvline(nfe, color="gray", ls=":", lw=1)
    ax.set_ylim(1e-3, 2)
    label_axes(ax, "NFE (calls of f)", "mean ‖ẑ − z*‖/‖z*‖ (test)", "error vs budget")
    x = run.split.x_test[digit:digit + 1]
    with torch.no_grad():
        zs = to_numpy(run.teacher.fixed_point(x))[0]
        zc = to_numpy(cdeq_infer(run.student, x, nfe, mode=mode))[0]
        zb = to_numpy(solve(run.teacher, x, nfe, baseline).z)[0] if nfe >= _MIN[baseline] else None
    lim = float(np.abs(zs).max()) * 1.1 + 1e-9
    ax2.plot([-lim, lim], [-lim, lim], color="black", lw=0.8, ls="--")
    ax2.scatter(zs, zc, s=10, color=COLORS[0], label=f"C-DEQ (rel. err {s.digit_errors[0]:.3f})")
    if zb is not None:
        ax2.scatter(zs, zb, s=10, color=COLORS[1], marker="x", label=f"{baseline} (rel. err {s.digit_errors[1]:.3f})")
    ax2.set_xlim(-lim, lim)
    ax2.set_ylim(-lim, lim)
    label_axes(ax2, "z* coordinate", "ẑ coordinate", f"test digit {digit} (label {int(run.split.y_test[digit])})")
    return fig, s


def explorer(run: Run | None = None):
    """The panel: NFE, mode, baseline and digit → error curves with the budget marked, and one digit's ẑ vs z*."""
    import ipywidgets as w

    run = _check_run(run)
    style = {"description_width": "initial"}
    controls = {
        "nfe": w.SelectionSlider(options=list(NFE_OPTIONS), value=1, description="NFE", style=style),
        "mode": w.Dropdown(options=list(MODES), value="refine", description="C-DEQ mode", style=style),
        "baseline": w.Dropdown(options=list(BASELINES), value="picard", description="baseline", style=style),
        "digit": w.IntSlider(value=0, min=0, max=int(run.split.x_test.shape[0]) - 1, description="test digit",
                             style=style),
    }
    return live_panel(controls, functools.partial(render, run), rows=[["nfe", "mode"], ["baseline", "digit"]])
