"""Play: method, learning rate, number of matrices and size → optimality gap and feasibility curves."""

from __future__ import annotations

import math
import warnings

import torch

from .. import validate
from ..device import one_thread
from ..plotting import figure, label_axes
from .dynamics import METHODS, Trace, procrustes_problem, run_method

__all__ = ["explore", "render", "explorer", "plot_runs", "LR_RANGE", "B_RANGE", "P_RANGE"]

LR_RANGE = (1e-3, 10.0)
B_RANGE = (1, 24)
P_RANGE = (2, 24)


def _check_controls(method, lr, b, p) -> tuple[str, float, int, int]:
    validate.one_of("method", method, METHODS)
    lr = validate.number("lr", lr, LR_RANGE[0], LR_RANGE[1])
    b = validate.integer("b", b, B_RANGE[0], B_RANGE[1])
    p = validate.integer("p", p, P_RANGE[0], P_RANGE[1])
    return method, lr, b, p


def explore(method: str = "pogo-sgd", lr: float = 0.3, b: int = 16, p: int = 16, *, steps: int = 50,
            seed: int = 0) -> Trace:
    """The widget's pure compute: ``steps`` steps of ``method`` on ``b`` float32 Procrustes problems of size
    ``p × p``; never raises on a diverging run (the :class:`Trace` says ``diverged``)."""
    method, lr, b, p = _check_controls(method, lr, b, p)
    steps = validate.integer("steps", steps, 1, 1000)
    seed = validate.integer("seed", seed, 0, 2**63 - 1)
    problem = procrustes_problem(b, p, seed, dtype=torch.float32, device="cpu")
    try:
        # tiny batched problems: extra threads only add sync cost (batched LU suffers most); POGO's feasibility
        # guard is silenced, since the widget draws ‖XXᵀ − I‖ itself
        with one_thread(), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return run_method(problem, method, lr, steps, record_every=1)
    except (RuntimeError, ValueError, ArithmeticError):  # e.g. a retraction failing on NaN input
        return Trace(method, [0], [0.0], [1.0], [0.0], diverged=True)


def _draw(trace: Trace, ax_gap, ax_inf) -> None:
    gap = [max(g, 1e-12) if math.isfinite(g) else math.nan for g in trace.gap]
    inf = [max(v, 1e-12) if math.isfinite(v) else math.nan for v in trace.infeas]
    ax_gap.semilogy(trace.step, gap, color="C0")
    ax_inf.semilogy(trace.step, inf, color="C3")
    state = "diverged" if trace.diverged else f"final gap {trace.gap[-1]:.1e}"
    label_axes(ax_gap, "step", "relative optimality gap", f"{trace.method}: {state}")
    label_axes(ax_inf, "step", "max ‖XXᵀ − I‖_F", f"peak {trace.max_infeas:.1e}")


def render(method: str = "pogo-sgd", lr: float = 0.3, b: int = 16, p: int = 16):
    """The panel's pure draw: run :func:`explore` and return ``(fig, trace)`` (``trace.label`` is the status)."""
    trace = explore(method, lr, b, p)
    fig, axes = figure(2, 1, width=4.0, height=3.0)
    _draw(trace, axes[0], axes[1])
    return fig, trace


def explorer(method: str = "pogo-sgd", lr: float = 0.3, b: int = 16, p: int = 16):
    """An ipywidgets panel (method, log-lr, b, p) re-running :func:`render` (≤ 0.25 s on a CPU), wired with the
    book's shared :func:`theorybook.widgets.live_panel`."""
    import ipywidgets as w

    from ..widgets import live_panel

    method, lr, b, p = _check_controls(method, lr, b, p)
    controls = {
        "method": w.Dropdown(options=list(METHODS), value=method, description="method"),
        "lr": w.FloatLogSlider(value=lr, base=10, min=math.log10(LR_RANGE[0]), max=math.log10(LR_RANGE[1]),
                               step=0.1, description="lr η"),
        "b": w.IntSlider(value=b, min=B_RANGE[0], max=B_RANGE[1], description="matrices b"),
        "p": w.IntSlider(value=p, min=P_RANGE[0], max=P_RANGE[1], description="size p"),
    }
    return live_panel(controls, render, rows=[["method", "lr"], ["b", "p"]])


def plot_runs(runs: dict[str, Trace], title: str):
    """The chapter's three panels: gap vs step, gap vs optimiser time, max ‖XXᵀ − I‖_F vs step (float32 target
    1e-5 drawn as the theory line). Returns ``(fig, axes)``."""
    import numpy as np

    from ..plotting import theory_line

    if not isinstance(runs, dict) or not runs or not all(isinstance(t, Trace) for t in runs.values()):
        raise TypeError(f"Invalid runs: {type(runs).__name__} (must be a non-empty dict of name → Trace)")
    if not isinstance(title, str):
        raise TypeError(f"Invalid title: {title!r} (must be a string)")

    fig, ax = figure(3, 1, width=3.6, height=3.0)
    for i, (m, tr) in enumerate(runs.items()):
        g = np.maximum(np.array(tr.gap), 1e-9)
        ax[0].semilogy(tr.step, g, label=m, color=f"C{i}")
        ax[1].semilogy(np.array(tr.time) * 1e3, g, label=m, color=f"C{i}")
        ax[2].semilogy(tr.step, np.maximum(tr.infeas, 1e-9), label=m, color=f"C{i}")
    for a in ax[:2]:
        a.axhline(1e-3, color="grey", lw=0.8, ls=":")
    last = max(tr.step[-1] for tr in runs.values())
    theory_line(ax[2], [0, last], [1e-5, 1e-5], label="1e-5 (float32 target)")
    label_axes(ax[0], "step", "relative optimality gap", title)
    label_axes(ax[1], "optimiser time (ms)", "relative optimality gap", legend=False)
    label_axes(ax[2], "step", "max ‖XXᵀ − I‖_F", "feasibility", legend=False)
    return fig, ax
