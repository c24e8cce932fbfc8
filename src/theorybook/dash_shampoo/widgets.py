"""The DASH chapter's control panel: one solver against fp32 EVD on a stack of SPD blocks."""

from __future__ import annotations

import math
import time

import torch

from .. import validate
from ..widgets import live_panel
from .solvers import MAX_DEGREE, MAX_ITERS, METHODS, SCALINGS, error_or_inf, inverse_root, reference_root, spd_stack

__all__ = ["explorer", "render", "solver_panel"]

BLOCK_SIZES = (16, 32, 64, 128)


def solver_panel(method: str = "ndb", iters: int = 10, scaling: str = "fro", log10_kappa: float = 3.0,
                 block_size: int = 64, n_blocks: int = 4, degree: int | None = None) -> dict[str, object]:
    """The widget's pure compute: relative error (vs float64 EVD) and wall time of ``method`` and of fp32 EVD
    on ``n_blocks`` SPD blocks with κ = 10^log10_kappa. Chebyshev uses degree = 6·iters unless given, and
    ε = 10⁻³·λ_max. Never raises for in-range values; a non-finite result is reported as ``"diverged"``."""
    validate.one_of("method", method, METHODS)
    iters = validate.integer("iters", iters, 1, MAX_ITERS)
    validate.one_of("scaling", scaling, SCALINGS)
    log10_kappa = validate.number("log10_kappa", log10_kappa, 0.0, 12.0)
    block_size = validate.integer("block_size", block_size, 1, 1024)
    n_blocks = validate.integer("n_blocks", n_blocks, 1, 1024)
    # the stack is sampled in float64 and rounded to float32: the reference root is the float64 matrix's
    A64 = spd_stack(n_blocks, block_size, 10.0**log10_kappa, dtype=torch.float64, device="cpu")
    A = A64.float()
    eps = 1e-3 if method == "chebyshev" else 0.0
    degree = min(6 * iters, MAX_DEGREE) if degree is None else validate.integer("degree", degree, 1, MAX_DEGREE)
    ref = reference_root(A64, 4, eps)
    out: dict[str, object] = {}
    for name, kw in ((method, dict(method=method, iters=iters, scaling=scaling, degree=degree, eps=eps)),
                     ("evd", dict(method="evd", eps=eps))):
        t0 = time.perf_counter()
        X = inverse_root(A, 4, **kw)
        ms = 1e3 * (time.perf_counter() - t0)
        err = error_or_inf(X, ref)
        out[name if name != method or method == "evd" else "solver"] = {
            "error": err if math.isfinite(err) else math.inf, "ms": ms,
            "status": "ok" if math.isfinite(err) else "diverged"}
    out.setdefault("solver", out["evd"])
    return out


def render(method: str = "ndb", iters: int = 10, scaling: str = "fro", log10_kappa: float = 3.0,
           block_size: int = 64):
    """Bars of error and time for the chosen solver next to fp32 EVD; returns ``(fig, status line)``."""
    from ..plotting import COLORS, figure

    res = solver_panel(method, iters, scaling, log10_kappa, block_size)
    fig, ax = figure(2, 1, width=3.4, height=2.6)
    names = [f"{method} ({res['solver']['status']})", "EVD fp32"]
    errs = [max(res["solver"]["error"], 1e-9) if res["solver"]["status"] == "ok" else 1.0,
            max(res["evd"]["error"], 1e-9)]
    ax[0].bar(names, errs, color=COLORS[:2])
    ax[0].set_yscale("log")
    ax[0].set_ylabel("relative error vs fp64 EVD")
    ax[1].bar(names, [res["solver"]["ms"], res["evd"]["ms"]], color=COLORS[:2])
    ax[1].set_ylabel("ms (one call, 4 blocks)")
    status = (f"{method}: {res['solver']['status']}, error {res['solver']['error']:.2e} "
              f"(fp32 EVD {res['evd']['error']:.2e})")
    return fig, status


def explorer(method: str = "ndb", iters: int = 10, scaling: str = "fro", log10_kappa: float = 3.0,
             block_size: int = 64):
    """Dropdowns and sliders → bars of error and time for the chosen solver next to fp32 EVD."""
    import ipywidgets as W

    validate.one_of("method", method, METHODS)
    iters = validate.integer("iters", iters, 1, 30)
    validate.one_of("scaling", scaling, SCALINGS)
    log10_kappa = validate.number("log10_kappa", log10_kappa, 0.0, 8.0)
    validate.one_of("block_size", block_size, BLOCK_SIZES)

    controls = dict(
        method=W.Dropdown(options=list(METHODS), value=method, description="solver"),
        iters=W.IntSlider(value=iters, min=1, max=30, description="iters"),
        scaling=W.Dropdown(options=list(SCALINGS), value=scaling, description="scaling"),
        log10_kappa=W.FloatSlider(value=log10_kappa, min=0.0, max=8.0, step=0.5, description="log₁₀ κ"),
        block_size=W.Dropdown(options=list(BLOCK_SIZES), value=block_size, description="B"),
    )
    return live_panel(controls, render, rows=[["method", "iters", "scaling"], ["log10_kappa", "block_size"]])
