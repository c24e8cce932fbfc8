"""Small fitting helpers shared by chapters: slopes of lines and of log–log power laws."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["LineFit", "line_fit", "loglog_slope"]


class LineFit(NamedTuple):
    """Least-squares line y ≈ slope·x + intercept, with the slope's standard error."""

    slope: float
    intercept: float
    stderr: float


def line_fit(x, y) -> LineFit:
    """Ordinary least squares of y on x (both 1-D, same length ≥ 3, finite)."""
    x = np.asarray(x, dtype=np.float64).ravel()
    y = np.asarray(y, dtype=np.float64).ravel()
    if x.shape != y.shape or x.size < 3:
        raise ValueError(f"Invalid x/y: shapes {x.shape} and {y.shape} (must match, with ≥ 3 points)")
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise ValueError("Invalid x/y: non-finite values (filter them before fitting)")
    A = np.vstack([x, np.ones_like(x)]).T
    (slope, intercept), res, *_ = np.linalg.lstsq(A, y, rcond=None)
    dof = x.size - 2
    resid = y - (slope * x + intercept)
    s2 = float(resid @ resid) / dof if dof > 0 else 0.0
    stderr = float(np.sqrt(s2 / np.sum((x - x.mean()) ** 2)))
    return LineFit(float(slope), float(intercept), stderr)


def loglog_slope(x, y) -> LineFit:
    """Power-law exponent: least squares of ln y on ln x (x, y > 0)."""
    x = np.asarray(x, dtype=np.float64).ravel()
    y = np.asarray(y, dtype=np.float64).ravel()
    if (x <= 0).any() or (y <= 0).any():
        raise ValueError("Invalid x/y: log–log fit needs x > 0 and y > 0")
    return line_fit(np.log(x), np.log(y))
