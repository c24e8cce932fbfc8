"""One matplotlib style for the whole book, and the two figure idioms every chapter uses."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib as mpl
import matplotlib.pyplot as plt

__all__ = ["COLORS", "THEORY", "use_book_style", "figure", "theory_line", "label_axes"]

#: Colour cycle (colour-blind safe, Okabe–Ito); measured data takes these, theory is drawn in ``THEORY``.
COLORS = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000"]
THEORY = {"color": "black", "linestyle": "--", "linewidth": 1.4, "alpha": 0.85}

_STYLE = {
    "figure.dpi": 100,
    "savefig.dpi": 110,
    "figure.constrained_layout.use": True,
    "axes.prop_cycle": mpl.cycler(color=COLORS),
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "legend.fontsize": 8,
    "legend.frameon": False,
    "lines.linewidth": 1.6,
    "image.cmap": "viridis",
}


def use_book_style() -> None:
    """Apply the book's rcParams (idempotent)."""
    mpl.rcParams.update(_STYLE)


def figure(ncols: int = 1, nrows: int = 1, *, width: float = 4.2, height: float = 3.2, **kw):
    """``plt.subplots`` sized per panel, book style applied; always returns ``(fig, axes_array)``."""
    use_book_style()
    fig, axes = plt.subplots(nrows, ncols, figsize=(width * ncols, height * nrows), squeeze=False, **kw)
    return fig, axes.ravel()


def theory_line(ax, x, y, label: str = "theory", **kw):
    """Draw a theoretical prediction on top of measured data, in the book's theory style."""
    style = {**THEORY, **kw}
    return ax.plot(x, y, label=label, **style)


def label_axes(ax, xlabel: str, ylabel: str, title: str | None = None,
               legend: bool | Sequence[str] = True) -> None:
    """Label an axis; draw the legend when there are labelled artists."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    if legend and ax.get_legend_handles_labels()[0]:
        ax.legend()
