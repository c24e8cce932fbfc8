"""The federated-LoRA baselines a federated-learning reader expects, at equal communicated parameters (torch).

Every client ``i`` holds task ``i``'s data ``(X_il, y_il)``. A federated method shares some adapter parameters
(averaged by the server every round, so one message per client and round has the size of the shared block) and
keeps the rest on the client. At rank ``r`` and width ``d``:

============  ===================================  =========================  =====================
method        adapter of client i                  shared (message per round)  personal
============  ===================================  =========================  =====================
CoLoRA        ``A R_i Bᵀ`` (A, B orthonormal)      A, B: ``2dr``               ``R_i``: ``r²``
FedAvg-LoRA   ``U Vᵀ``                              U, V: ``2dr``               —
FFA-LoRA      ``A₀ Bᵀ``, ``A₀`` frozen, rank ``2r``  B: ``d·2r = 2dr``           —
per-client    ``U_i V_iᵀ``                          nothing (0)                 ``U_i, V_i``: ``2dr``
============  ===================================  =========================  =====================

FFA-LoRA freezes the (random, shared by seed) down-projection and averages only the other factor; at rank ``2r`` its
message has the same ``2dr`` numbers as CoLoRA's and FedAvg-LoRA's.

**Each baseline gets its best case** [our choice]: FedAvg with one local step per round is gradient descent on the
pooled objective ``Σ_i Σ_l (y_il − ⟨X_il, ΔW⟩)²`` of its shared parameters, so instead of running it with a step
size and a number of rounds we compute the pooled objective's minimiser directly: FedAvg-LoRA by the alternating
least squares of :func:`~theorybook.colora.experiment.colora_fit` with one core for all tasks (one global rank-r
matrix), FFA-LoRA by one pooled least-squares solve in B (it is linear in B), per-client LoRA by the alternating
solver on each task alone. No client drift, no step size to tune — the limit FedAvg approaches from below.
CoLoRA uses the same pooled least squares; in a federation its A- and B-steps would need the clients' normal
equations ((dr)² numbers) or many gradient rounds, which this idealisation does not charge to it either.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import torch

from ..device import THEORY_DTYPE, one_thread, resolve_device, to_numpy
from ..validate import integer, memory_guard, number, one_of
from .experiment import (
    CHAPTER_SEEDS,
    ITERS,
    RANK,
    SIGMA,
    D,
    Fit,
    K,
    _altmin,
    _batch_eta,
    _check_data,
    _orth,
    _solve,
)

__all__ = ["FED_METHODS", "HeteroSweep", "communicated", "ffa_lora_fit", "fedavg_lora_fit",
           "heterogeneity_sweep"]

#: The methods compared at equal communication (CoLoRA first).
FED_METHODS = ("colora", "fedavg", "ffa", "per_client")
#: The chapter's heterogeneity sweep: core heterogeneity η at τ = 0, then subspace heterogeneity τ at η = 1.
ETAS = (0.0, 0.05, 0.1, 0.2, 0.5, 1.0)
TAUS_FED = (0.0, 0.05, 0.1, 0.2, 0.3, 0.5)
NS_FED = (24, 64, 128)
FFA_SEED = 12345


def communicated(d: int, r: int, method: str = "colora") -> int:
    """Numbers each client sends per round (the shared block): ``2dr`` for CoLoRA, FedAvg-LoRA and FFA-LoRA at
    rank ``2r``; 0 for per-client LoRA."""
    d = integer("d", d, 1)
    r = integer("r", r, 1, d)
    m = one_of("method", method, FED_METHODS)
    return 0 if m == "per_client" else 2 * d * r


def _ffa_frozen(d: int, rank: int, device: Any) -> torch.Tensor:
    g = torch.Generator().manual_seed(FFA_SEED)
    return _orth(torch.randn(d, rank, generator=g, dtype=THEORY_DTYPE)).to(device)


def _ffa(X: torch.Tensor, y: torch.Tensor, rank: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """FFA-LoRA on a batch ``X`` (b, k, n, d, d): ``ΔW = A₀ Bᵀ``, B by pooled least squares
    (``⟨X, A₀Bᵀ⟩ = ⟨XᵀA₀, B⟩``, ``d·rank`` unknowns). Returns ``(M (b, k, d, d), A₀, B (b, d, rank))``."""
    b, k, n, d, _ = X.shape
    A0 = _ffa_frozen(d, rank, X.device)
    G = (X.transpose(-1, -2) @ A0).reshape(b, k * n, d * rank)  # row-major vec(B) over (d, rank)
    Bm = _solve(G, y.reshape(b, k * n)).reshape(b, d, rank)
    M = (A0 @ Bm.transpose(-1, -2)).unsqueeze(1).expand(b, k, d, d)
    return M, A0, Bm


def ffa_lora_fit(X: Any, y: Any, rank: int) -> Fit:
    """FFA-LoRA: the frozen shared ``A₀`` (d, rank) (orthonormal, fixed seed) and the averaged ``B`` fitted by pooled
    least squares — one global ``ΔW = A₀ Bᵀ``. Pass ``rank = 2r`` for CoLoRA's message size."""
    X, y, r, _ = _check_data(X, y, rank, 1)
    with one_thread(X.device):
        M, A0, Bm = _ffa(X.unsqueeze(0), y.unsqueeze(0), r)
    return Fit(M[0], A0, Bm[0], torch.eye(r, dtype=X.dtype, device=X.device)[None], A0[None])


def fedavg_lora_fit(X: Any, y: Any, rank: int, *, iters: int = ITERS) -> Fit:
    """FedAvg-LoRA at its best case: the minimiser of the pooled objective of one global ``U Vᵀ`` (alternating least
    squares with one core for all tasks, module docstring)."""
    from .experiment import colora_fit

    return colora_fit(X, y, rank, iters=iters, shared_core=True)


def federated_errors(X: torch.Tensor, y: torch.Tensor, M: torch.Tensor, r: int, iters: int = ITERS,
                     methods: tuple[str, ...] = FED_METHODS) -> dict[str, np.ndarray]:
    """Median-over-clients relative error of each method on a batch (b, k, n, d, d) (unvalidated core)."""
    b, k, n, d, _ = X.shape
    out = {}
    for m in methods:
        if m == "colora":
            Mh = _altmin(X, y, r, iters, False)[0]
        elif m == "fedavg":
            Mh = _altmin(X, y, r, iters, True)[0]
        elif m == "ffa":
            Mh = _ffa(X, y, 2 * r)[0]
        else:
            Mh = _altmin(X.reshape(b * k, 1, n, d, d), y.reshape(b * k, 1, n), r, iters, False)[0].reshape(b, k, d, d)
        err = torch.linalg.matrix_norm(Mh - M) / torch.linalg.matrix_norm(M)
        out[m] = to_numpy(err.median(dim=1).values)
    return out


class HeteroSweep(NamedTuple):
    """``eta_errors[η, method, n, rep]`` at τ = 0 and ``tau_errors[τ, method, n, rep]`` at η = 1 (methods in
    :data:`FED_METHODS` order; medians over clients)."""

    etas: tuple[float, ...]
    taus: tuple[float, ...]
    ns: tuple[int, ...]
    eta_errors: np.ndarray
    tau_errors: np.ndarray


def heterogeneity_sweep(etas: Any = ETAS, taus: Any = TAUS_FED, ns: Any = NS_FED, *, k: int = K, d: int = D,
                        r: int = RANK, sigma: float = SIGMA, iters: int = ITERS, reps: int = 3,
                        seed: int = CHAPTER_SEEDS[0], device: Any = None) -> HeteroSweep:
    """The four methods across core heterogeneity η (τ = 0) and subspace heterogeneity τ (η = 1), for each ``n``.

    Replicate ``j`` uses the seed ``seed·1000003 + j`` in every cell, so the comparisons are paired."""
    etas = tuple(number("etas", x, 0.0, 1.0) for x in np.atleast_1d(np.asarray(etas, dtype=object)))
    taus = tuple(number("taus", x, 0.0) for x in np.atleast_1d(np.asarray(taus, dtype=object)))
    ns = tuple(integer("ns", x, 1) for x in np.atleast_1d(np.asarray(ns, dtype=object)))
    if not etas or not taus or not ns:
        raise ValueError("Invalid etas/taus/ns: must be non-empty")
    k, d = integer("k", k, 1), integer("d", d, 1)
    r = integer("r", r, 1, d)
    sigma = number("sigma", sigma, 0.0)
    iters = integer("iters", iters, 1, 1000)
    reps, seed = integer("reps", reps, 1), integer("seed", seed, 0)
    memory_guard(8.0 * reps * k * max(ns) * d * d * 8, lower="reps, k, n or d")
    dev = resolve_device(device)
    E = np.full((len(etas), len(FED_METHODS), len(ns), reps), np.nan)
    T = np.full((len(taus), len(FED_METHODS), len(ns), reps), np.nan)
    with one_thread(dev):
        for out, grid, kind in ((E, etas, "eta"), (T, taus, "tau")):
            for a, v in enumerate(grid):
                for c, n in enumerate(ns):
                    eta, tau = (v, 0.0) if kind == "eta" else (1.0, v)
                    B = _batch_eta(k, d, r, n, tau, sigma, seed, reps, eta, dev)
                    for mi, e in federated_errors(B.X, B.y, B.M, r, iters).items():
                        out[a, FED_METHODS.index(mi), c] = e
    return HeteroSweep(etas, taus, ns, E, T)
