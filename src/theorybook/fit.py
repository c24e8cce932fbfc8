"""Small fitting helpers shared by chapters: slopes of lines and of log–log power laws, and least squares on
tensors that gives the same bits on every call."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import torch

__all__ = ["LineFit", "line_fit", "loglog_slope", "lstsq"]


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


def lstsq(A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
    """The least-squares solution ``X = argmin ‖A X − B‖_F`` (minimum norm if ``A`` is rank-deficient), batched over
    leading dimensions, real or complex, on ``A``'s device.

    ``torch.linalg.lstsq`` with a driver whose result depends only on its inputs: on CPU the SVD-based ``gelsd``.
    Torch's CPU default, ``gelsy``, hands LAPACK its pivot array ``JPVT`` uninitialised (pytorch/pytorch#187411),
    and ``gelsy`` reads non-zero entries as columns to pivot first — so the solution changes at rounding level with
    whatever the allocator last left in that memory (and the rank can come out wrong). On CUDA torch offers only
    ``gels`` (QR, full column rank), which is deterministic.
    """
    for name, t in (("A", A), ("B", B)):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"Invalid {name}: {type(t).__name__} (must be a torch tensor)")
        if not (t.is_floating_point() or t.is_complex()):
            raise TypeError(f"Invalid {name}: dtype {t.dtype} (must be floating point or complex)")
        if t.ndim < 2:
            raise ValueError(f"Invalid {name}: shape {tuple(t.shape)} (must have ≥ 2 dimensions: (..., rows, columns))")
        if t.numel() and not bool(torch.isfinite(t).all()):
            raise ValueError(f"Invalid {name}: contains NaN or ±inf (must be finite)")
    if A.device != B.device or A.dtype != B.dtype:
        raise ValueError(f"Invalid B: {B.dtype} on {B.device} (must match A: {A.dtype} on {A.device})")
    if A.shape[-2] != B.shape[-2]:
        raise ValueError(f"Invalid B: {B.shape[-2]} rows (must equal A's {A.shape[-2]})")
    return _lstsq(A, B)


def _lstsq(A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
    """:func:`lstsq` without the checks, for callers whose inputs are already valid (no finiteness test, which
    would wait for the device on every call)."""
    return torch.linalg.lstsq(A, B, driver="gelsd" if A.device.type == "cpu" else None).solution
