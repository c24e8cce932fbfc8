"""Fused compute kernels, installed as ``theorybook.kernels``.

Each kernel has a plain torch reference in ``theorybook`` and a parity test. Dispatch happens in
:mod:`theorybook.sweep` (x^k/k) and :func:`theorybook.sam_saddle.dynamics.sam_sweep` (SAM on the 2-D quadratic
saddle): a Triton kernel on CUDA with Triton installed, the numba kernels of :mod:`theorybook.kernels.cpu` on CPU
for sweeps big enough to pay for their compilation; everywhere else the torch reference runs, with identical
semantics.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["poly_sweep_kernel", "sam_sweep_kernel", "triton_available", "FUSED_METHODS", "cpu_poly_sweep",
           "cpu_sam_sweep"]

FUSED_METHODS = ("gd", "heavy_ball", "rmsprop", "adam")


def cpu_poly_sweep(method: str, cell_steps: float) -> Callable | None:
    """The fused CPU sweep (numba, one compiled loop per cell) for ``method``, or ``None`` when it does not apply
    (unknown method, numba missing, ``THEORYBOOK_CPU_FUSED=0``, or fewer than ``MIN_CELL_STEPS`` cell-steps)."""
    from .cpu import cpu_poly_sweep as _pick

    return _pick(method, cell_steps)


def cpu_sam_sweep(cell_steps: float) -> Callable | None:
    """The fused CPU SAM sweep on the 2-D quadratic saddle (numba), or ``None`` when it does not apply (numba
    missing, ``THEORYBOOK_CPU_FUSED=0``, or fewer than ``MIN_CELL_STEPS`` cell-steps)."""
    from .cpu import cpu_sam_sweep as _pick

    return _pick(cell_steps)


def triton_available() -> bool:
    """True when Triton imports (it is an optional dependency: ``pip install .[kernels]``)."""
    try:
        import triton  # noqa: F401
    except ImportError:
        return False
    return True


def poly_sweep_kernel(method: str) -> Callable | None:
    """The fused sweep for ``method`` on x^k/k, or ``None`` when there is none (unknown method, no Triton).

    The callable has the signature used by :func:`theorybook.sweep.poly_sweep`'s dispatch:
    ``fn(kt, x0t, hp, steps, threshold=None, tail=0, dtype=None) -> SweepStats`` (see
    :func:`theorybook.kernels.poly.poly_sweep_fused`).
    """
    if method not in FUSED_METHODS or not triton_available():
        return None
    from .poly import fused_for  # imported lazily: the module compiles Triton kernels (needs triton)

    return fused_for(method)


def sam_sweep_kernel() -> Callable | None:
    """The fused deterministic-SAM sweep on the 2-D quadratic saddle, or ``None`` without Triton.

    Signature: ``fn(w0, rho, lr, momentum, steps, *, lam, normalized, threshold=None, tail=0) -> SAMSweep``
    (see :func:`theorybook.kernels.sam.sam_quadratic_fused`); used by
    :func:`theorybook.sam_saddle.dynamics.sam_sweep`'s dispatch on CUDA.
    """
    if not triton_available():
        return None
    from .sam import sam_quadratic_fused  # imported lazily: the module compiles Triton kernels (needs triton)

    return sam_quadratic_fused
