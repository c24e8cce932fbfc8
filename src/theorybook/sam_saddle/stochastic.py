"""The noisy quadratic saddle's stochastic experiments: first escape steps (Theorem 3) and Monte-Carlo second
moments from the saddle (Theorem 2, Corollary 1), with :mod:`.dynamics`' SAM step.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import torch

from .. import validate
from .dynamics import (
    GradFn,
    _cell_bytes,
    _init,
    _lam_vector,
    _NoiseStream,
    _probe,
    _setup,
    _stepper,
    _steps,
    device_arg,
)

__all__ = ["escape_steps", "MSDResult", "monte_carlo_msd"]


def escape_steps(
    grad_fn: GradFn,
    w0,
    lr,
    rho,
    steps: int,
    radius: float,
    *,
    center=None,
    normalized: bool = False,
    momentum=0.0,
    noise=None,
    seed: int | None = None,
    dtype: torch.dtype | None = None,
    device: str | torch.device | None = None,
) -> torch.Tensor:
    """First step t ≥ 1 with ‖w_t − center‖ ≥ ``radius`` for every cell (−1: not within ``steps``).

    Same dynamics and broadcasting as :func:`simulate_sam` (default unnormalised, the theory's SAM); only the
    state and the first-passage step are kept, and the ascent/descent cosine is not computed. To give
    independent noise to cells (e.g. batch sizes), give ``w0`` an axis for them: the draws ξ_t have ``w0``'s
    shape.
    """
    if not callable(grad_fn):
        raise TypeError(f"Invalid grad_fn: {grad_fn!r} (must be callable)")
    steps = _steps(steps)
    r = validate.number("radius", radius, 0.0, math.inf, low_open=True)
    r2 = r * r  # inf for a huge radius: then nothing escapes (−1), no OverflowError
    s = _setup(w0, lr, rho, momentum, noise, seed, dtype, device, normalized)
    _probe(grad_fn, s)
    validate.memory_guard(8 * _cell_bytes(s), lower="the number of cells")
    c = torch.zeros(s.w0.shape[-1], dtype=s.w0.dtype, device=s.w0.device) if center is None else \
        validate.finite_tensor("center", center).to(s.w0.device, s.w0.dtype)
    update = _stepper(s, grad_fn, normalized, track_cos=False, steps=steps)
    state = _init(s)
    hit = torch.full(s.cells, -1, dtype=torch.int64, device=s.w0.device)
    with torch.no_grad():
        for t in range(1, steps + 1):
            state = update(state, t - 1)
            dw = state.w - c
            # d = 2 written out: one addition, bitwise the same as .sum(-1) and ~3× cheaper on a trailing pair
            dist2 = dw[..., 0] * dw[..., 0] + dw[..., 1] * dw[..., 1] if dw.shape[-1] == 2 else dw.square().sum(-1)
            out = dist2 >= r2
            hit = torch.where((hit < 0) & out, t, hit)
    return hit


class MSDResult(NamedTuple):
    """Monte-Carlo second moments of noisy unnormalised SAM started at the saddle of a quadratic.

    ``t``: continuous times k·η at the recorded steps k = 0, every, … (n,); ``msd``, ``se``: mean of w_j² over
    paths and its standard error, shape (n, R, nB, d) for R radii ρ, nB batch sizes, d directions; ``gap``,
    ``gap_se``: the paired (common-random-number) difference msd[ρ = rho[0]] − msd[ρ] and its standard error,
    same shape; ``w``: every path at the recorded steps, (n, n_paths, R, nB, d).
    """

    t: torch.Tensor
    msd: torch.Tensor
    se: torch.Tensor
    gap: torch.Tensor
    gap_se: torch.Tensor
    w: torch.Tensor


def monte_carlo_msd(lam, rho, lr, batch, steps: int, n_paths: int, *, seed: int = 0, every: int = 1,
                    drift: str = "linear", device: str | torch.device | None = None) -> MSDResult:
    r"""Theorem 2's experiment: ``n_paths`` SGD/SAM paths from the saddle of ℓ = ½Σλ_j w_j² with gradient noise
    N(0, diag|λ|/B) on the descent gradient, every (path, ρ, B) cell in one program.

    The step is the SAM algorithm, unnormalised: :math:`g=\Lambda w`, :math:`w^p=w+\rho g`,
    :math:`w\leftarrow w-\eta(\Lambda w^p+\sigma\xi)` with σ = sqrt(|λ|/B) — :func:`simulate_sam`'s update with
    ``w0`` of shape (n_paths, 1, nB, d), without the cosine. The draws ξ are independent across paths and batch
    sizes and shared across ρ (common random numbers, so the gap between ρ's is paired).

    ``drift="full"`` runs gradient descent on the SAM *objective* ℓ(w + ρ∇ℓ(w)) instead,
    :math:`w\leftarrow w-\eta((I+\rho\Lambda)\Lambda w^p+\sigma\xi)`, whose drift is the printed
    λ(1+ρλ)² of Theorem 2 (the chapter's planted instance of the paper's formula); ``drift="expanded"`` uses
    its first-order expansion λ(1+2ρλ), whose SGD − SAM variance gap is Corollary 1's printed 2ηt²|λ|³ρ/B to
    leading order in t at every ρ (the squared drift's own gap is (2 − ρ|λ|)ηt²|λ|³ρ/B).
    """
    validate.one_of("drift", drift, ("linear", "full", "expanded"))
    lam_t = _lam_vector(lam)
    rho_t = validate.finite_tensor("rho", rho).reshape(-1).to("cpu", torch.float64)
    validate.in_range("rho", rho_t, 0.0, math.inf)
    b_t = validate.finite_tensor("batch", batch).reshape(-1).to("cpu", torch.float64)
    validate.positive("batch", b_t)
    lr_f = validate.number("lr", lr, 0.0, math.inf, low_open=True)
    steps = _steps(steps)
    n_paths = validate.integer("n_paths", n_paths, 2)
    seed = validate.integer("seed", seed, 0, 2**62)
    every = validate.integer("every", every, 1)
    if steps % every:
        raise ValueError(f"Invalid every: {every} (must divide steps = {steps})")
    d, n = lam_t.shape[0], steps // every + 1
    cell = n_paths * rho_t.numel() * b_t.numel() * d * 8
    validate.memory_guard(cell * (n + 8), lower="steps (or raise every), n_paths or the number of ρ, B")
    dev = device_arg(device)
    lam_d = lam_t.to(dev)
    rho_d = rho_t.reshape(-1, 1, 1).to(dev)
    noise = torch.sqrt(lam_t.abs() / b_t.reshape(-1, 1)).to(dev)  # (nB, d)
    shape = (n_paths, 1, b_t.numel(), d)
    stream = _NoiseStream(shape, steps, torch.Generator().manual_seed(seed), torch.float64, dev)
    w = torch.zeros(n_paths, rho_t.numel(), b_t.numel(), d, dtype=torch.float64, device=dev)
    hist = torch.empty((n, *w.shape), dtype=torch.float64, device=dev)
    hist[0] = w
    with torch.no_grad():
        for k in range(1, steps + 1):
            xi = stream.next()
            wp = w + rho_d * (lam_d * w)
            if drift == "linear":
                g = lam_d * wp
            elif drift == "full":
                g = lam_d * wp * (1 + rho_d * lam_d)
            else:
                g = lam_d * (wp + rho_d * lam_d * w)
            w = w - lr_f * (g + noise * xi)
            if k % every == 0:
                hist[k // every] = w
    if not bool(torch.isfinite(hist[-1]).all()):
        raise ValueError(f"Invalid arguments: the Monte-Carlo paths diverged (lr = {lr_f:g}, max ρ = "
                         f"{float(rho_t.max()):g}); lower lr or rho")
    w2 = hist.square()
    dgap = w2[:, :, :1] - w2
    root_n = math.sqrt(n_paths)
    t = torch.arange(0, steps + 1, every, dtype=torch.float64, device=dev) * lr_f
    return MSDResult(t, w2.mean(1), w2.std(1) / root_n, dgap.mean(1), dgap.std(1) / root_n, hist)
