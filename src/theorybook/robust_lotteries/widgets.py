"""The chapter's control panel: move ρ, the minority's share, how much it dislikes model A, and the votes per
pair; see the three methods' lotteries (fitted on one sampled data set) and the win rate each guarantees in every
group on the true preferences. One sample, one BT fit and two small LPs per update (≈ 0.05 s of compute).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..device import to_numpy
from ..plotting import COLORS, figure, label_axes
from ..validate import integer, number
from ..widgets import live_panel
from .experiment import bradley_terry, preference_world, sample_comparisons
from .lotteries import _maximal_raw, _robust_raw, _worst_raw, guaranteed_win_rate, margin_matrix

__all__ = ["Summary", "summarize", "render", "explorer"]

_METHODS = ("BT top-1", "maximal lottery", "robust lottery")


class Summary(NamedTuple):
    """What the panel reports for one setting (win rates on the true P)."""

    lotteries: np.ndarray  # (3, m): BT top (one-hot), maximal lottery, robust lottery
    group_win: np.ndarray  # (3, K) guaranteed win rate in each group
    worst_win: np.ndarray  # (3,) worst-case guaranteed win rate over the TV ball of radius ρ
    label: str
    fitted_win: np.ndarray | None = None  # (3, K) the same guarantee on the sampled margins (what the data say)
    shares: np.ndarray | None = None  # (K,) the groups' shares of the annotators


def summarize(rho: float = 0.4, minority: float = 0.15, dislike: float = 3.0, per_pair: int = 500) -> Summary:
    """Sample one train set (seed 0) in the world with shares ∝ (0.6, 0.25) for the majority groups and
    ``minority`` for the last; fit BT (ridge α = 1e-3 so that sparse data never break the MLE), the maximal
    lottery and the robust lottery; evaluate all three on the true margins."""
    r = number("rho", rho, 0.0, 1.0)
    s = number("minority", minority, 0.01, 0.9)
    d = number("dislike", dislike, 0.0, 50.0)
    c = integer("per_pair", per_pair, 1, 100_000)
    w0 = np.array([0.6, 0.25]) / 0.85 * (1.0 - s)
    w0 = np.append(w0, s)
    world = preference_world(8, w0, d, 0)
    W = sample_comparisons(world, c, 0).wins[0]
    Mh = margin_matrix(W)
    Mtrue = np.asarray(to_numpy(world.M), dtype=np.float64)
    K, m = Mtrue.shape[:2]
    top = int(np.argmax(to_numpy(bradley_terry(W.sum(0), alpha=1e-3))))
    bt = np.zeros(m)
    bt[top] = 1.0
    ml = _maximal_raw(np.einsum("k,kij->ij", w0, Mh)).p
    rob = _robust_raw(Mh, w0, r).p
    lots = np.stack([bt, ml, rob])
    gw = np.array([[guaranteed_win_rate(p, Mtrue[k]) for k in range(K)] for p in lots])
    ww = np.array([(1.0 + _worst_raw(p, Mtrue, w0, r).value) / 2.0 for p in lots])
    fw = np.array([[guaranteed_win_rate(p, Mh[k]) for k in range(K)] for p in lots])
    label = (f"worst-case win rate at ρ = {r:.2f} (true P): BT top-1 {ww[0]:.3f} · maximal {ww[1]:.3f} · "
             f"robust {ww[2]:.3f}")
    return Summary(lots, gw, ww, label, fw, w0)


def render(rho: float = 0.4, minority: float = 0.15, dislike: float = 3.0, per_pair: int = 500):
    """Draw the panel's figure for one setting; returns ``(fig, summary)``."""
    s = summarize(rho, minority, dislike, per_pair)
    fig, (ax, ax2) = figure(2, width=4.4, height=3.1)
    m = s.lotteries.shape[1]
    x = np.arange(m)
    for i, name in enumerate(_METHODS):
        ax.bar(x + (i - 1) * 0.27, s.lotteries[i], width=0.27, color=COLORS[i], label=name)
    ax.set_xticks(x)
    ax.set_ylim(0, 1.05)
    label_axes(ax, "model (0 = A)", "probability in the lottery", "lotteries fitted on one sample")
    K = s.group_win.shape[1]
    g = np.arange(K)
    # per group, then the worst case over the TV ball of radius ρ around the groups' shares (what ρ and the
    # minority's share act on); the markers: the same guarantee on the sampled margins (what the votes act on)
    for i, name in enumerate(_METHODS):
        ax2.bar(np.append(g, K) + (i - 1) * 0.27, np.append(s.group_win[i], s.worst_win[i]), width=0.27,
                color=COLORS[i], label=name)
        (mark,) = ax2.plot(g + (i - 1) * 0.27, s.fitted_win[i], "_", color="black", ms=9, mew=1.5,
                           label=f"on the sample ({int(per_pair)} votes per pair)")
    ax2.axhline(0.5, color="black", lw=0.8, ls=":")
    ticks = [f"group {k}\n{100 * s.shares[k]:.0f} %" for k in range(K)] + [f"ρ = {rho:g}\nworst"]
    ax2.set_xticks(np.append(g, K), ticks)
    ax2.set_ylim(0, 1)
    label_axes(ax2, "annotator group (share)", "guaranteed win rate (true P)", "per-group and worst-case guarantee",
               legend=False)
    ax2.legend(handles=[mark], loc="upper left")
    return fig, s


def explorer():
    """The panel: ρ, minority share, dislike strength and votes per pair → lotteries and per-group guarantees."""
    import ipywidgets as w

    style = {"description_width": "initial"}
    controls = {
        "rho": w.FloatSlider(value=0.4, min=0.0, max=1.0, step=0.05, description="ρ (TV radius)", style=style),
        "minority": w.FloatSlider(value=0.15, min=0.01, max=0.5, step=0.01, description="minority share",
                                  style=style),
        "dislike": w.FloatSlider(value=3.0, min=0.0, max=6.0, step=0.25, description="dislike of A", style=style),
        "per_pair": w.IntSlider(value=500, min=1, max=2000, step=1, description="votes per pair", style=style),
    }
    return live_panel(controls, render, rows=[["rho", "minority"], ["dislike", "per_pair"]])
