"""The federated-LoRA baselines a federated-learning reader expects, sending at most CoLoRA's message (torch).

Every client ``i`` holds task ``i``'s data ``(X_il, y_il)``. A federated method shares some adapter parameters
(averaged by the server every round, so one message per client and round has the size of the shared block) and
keeps the rest on the client. At rank ``r`` and width ``d``:

============  ===================================  =========================  =====================
method        adapter of client i                  shared (message per round)  personal
============  ===================================  =========================  =====================
CoLoRA        ``A R_i Bᵀ`` (A, B orthonormal)      A, B: ``2dr``               ``R_i``: ``r²``
FedAvg-LoRA   ``U Vᵀ``                              U, V: ``2dr``               —
FFA-LoRA      ``A₀ Bᵀ``, ``A₀`` frozen, rank ``2r``  B: ``d·2r = 2dr``           —
FedSA-LoRA    ``U V_iᵀ`` (rank ``r``)               U: ``dr``                   ``V_i``: ``dr``
per-client    ``U_i V_iᵀ``                          nothing (0)                 ``U_i, V_i``: ``2dr``
============  ===================================  =========================  =====================

FFA-LoRA freezes the (random, shared by seed) down-projection and averages only the other factor; at rank ``2r`` its
message has the same ``2dr`` numbers as CoLoRA's and FedAvg-LoRA's. The personalised FedSA-LoRA (federated training
only, :func:`federated_train`) runs at CoLoRA's rank ``r``: its message (``dr``) is within CoLoRA's, and at rank
``2r`` its personal ``V_i`` (``2dr`` = 64 numbers at the chapter's scale) would interpolate a client's 64 samples —
a capacity CoLoRA does not have.

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

import collections
from collections.abc import Iterator
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

__all__ = ["FED_METHODS", "FL_CELLS", "FL_METHODS", "HeteroSweep", "communicated", "federated_train", "ffa_lora_fit",
           "fedavg_lora_fit", "fl_cell", "fl_message_size", "heterogeneity_sweep"]

#: The methods compared at equal communication (CoLoRA first).
FED_METHODS = ("colora", "fedavg", "ffa", "per_client")
#: The chapter's heterogeneity sweep: core heterogeneity η at τ = 0, then subspace heterogeneity τ at η = 1.
ETAS = (0.0, 0.05, 0.1, 0.2, 0.5, 1.0)
TAUS_FED = (0.0, 0.05, 0.1, 0.2, 0.3, 0.5)
NS_FED = (24, 64, 128)
FFA_SEED = 12345


def communicated(d: int, r: int, method: str = "colora") -> int:
    """Numbers each client sends per round (the shared block): ``2dr`` for CoLoRA, FedAvg-LoRA and FFA-LoRA at rank
    ``2r``; ``dr`` for FedSA-LoRA at rank ``r`` (only ``U`` is averaged); 0 for per-client LoRA."""
    d = integer("d", d, 1)
    r = integer("r", r, 1, d)
    m = one_of("method", method, (*FED_METHODS, "fedsa"))
    return {"per_client": 0, "fedsa": d * r}.get(m, 2 * d * r)


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


# -- federated training: rounds of local gradient steps, the server averaging the shared block ---------------------
#: Every federated method, CoLoRA first: FedAvg-LoRA, FFA-LoRA (rank 2r), the personalised FedSA-LoRA (a shared
#: factor U and a personal V_i, at CoLoRA's rank r) and per-client LoRA (local training only).
FL_METHODS = ("colora", "fedavg", "ffa", "fedsa", "per_client")
#: The common budget of every federated method: rounds, local full-batch gradient steps per round, and the step-size
#: grid each method is tuned over (by its own validation MSE, :func:`fl_cell`). 200 rounds (was 100): on pilot seeds
#: 9001–9002 (``bench/colora_fl.py --budget``) the errors of federated CoLoRA and FedSA-LoRA at their validated step
#: sizes were still falling between 100 and 200 rounds (CoLoRA's by up to an order of magnitude on some replicates)
#: and changed little from 200 to 300 — the budget is the same for every method.
ROUNDS, LOCAL_STEPS = 200, 5
FL_GRID = (0.01, 0.02, 0.05, 0.1)
#: Validation samples per client for the step-size choice.
N_VAL = 32


def _fl_init(method: str, b: int, k: int, d: int, r: int, device: Any) -> dict[str, torch.Tensor]:
    """The common initialisation (seeded, the same for every replicate): one factor random ``N(0, 1/d)``, the other
    zero (``ΔW = 0``, as LoRA starts); CoLoRA's core ``R_i = 0`` with both ``A, B`` random."""
    g = torch.Generator().manual_seed(FFA_SEED + 1)
    kw = {"generator": g, "dtype": THEORY_DTYPE}
    q = 2 * r if method == "ffa" else r
    U = (torch.randn(d, q, **kw) / np.sqrt(d)).to(device).expand(b, k, d, q).clone()
    if method == "colora":
        B = (torch.randn(d, r, **kw) / np.sqrt(d)).to(device).expand(b, k, d, r).clone()
        return {"A": U, "B": B, "R": torch.zeros(b, k, r, r, dtype=THEORY_DTYPE, device=device)}
    if method == "ffa":
        return {"A0": _ffa_frozen(d, q, device).expand(b, k, d, q), "B": torch.zeros(b, k, d, q, dtype=THEORY_DTYPE,
                                                                                      device=device)}
    return {"U": U, "V": torch.zeros(b, k, d, q, dtype=THEORY_DTYPE, device=device)}


def fl_message_size(method: str, d: int, r: int) -> int:
    """The numbers in the shared block of :func:`federated_train`'s state for ``method``, counted from the tensors
    it averages (a check of :func:`communicated`)."""
    m = one_of("method", method, FL_METHODS)
    d = integer("d", d, 2)
    r = integer("r", r, 1, d // 2)
    memory_guard(8.0 * 4 * d * r, lower="d or r")
    p = _fl_init(m, 1, 1, d, r, resolve_device(None))
    return sum(p[key][0, 0].numel() for key in _SHARED[m])


def _fl_delta(method: str, p: dict[str, torch.Tensor]) -> torch.Tensor:
    if method == "colora":
        return p["A"] @ p["R"] @ p["B"].transpose(-1, -2)
    if method == "ffa":
        return p["A0"] @ p["B"].transpose(-1, -2)
    return p["U"] @ p["V"].transpose(-1, -2)


def _fl_grads(method: str, p: dict[str, torch.Tensor], G: torch.Tensor) -> dict[str, torch.Tensor]:
    """Gradients of the factors from ``G = ∂L/∂ΔW`` (b, k, d, d)."""
    if method == "colora":
        A, R, B = p["A"], p["R"], p["B"]
        return {"A": G @ B @ R.transpose(-1, -2), "B": G.transpose(-1, -2) @ A @ R,
                "R": A.transpose(-1, -2) @ G @ B}
    if method == "ffa":
        return {"B": G.transpose(-1, -2) @ p["A0"]}
    return {"U": G @ p["V"], "V": G.transpose(-1, -2) @ p["U"]}


#: The blocks the server averages each round (the message); the rest stays on the client.
_SHARED = {"colora": ("A", "B"), "fedavg": ("U", "V"), "ffa": ("B",), "fedsa": ("U",), "per_client": ()}


def _fl_rounds(method: str, X: torch.Tensor, y: torch.Tensor, r: int, lr: torch.Tensor, rounds: int,
               local_steps: int) -> Iterator[torch.Tensor]:
    """The adapters ``ΔW_i`` (g·b, k, d, d) after each round of :func:`_fl_run`'s federated training (a generator:
    ``bench/colora_fl.py --budget`` reads the errors along the way)."""
    b, k, n, d, _ = X.shape
    g = lr.shape[0] // b
    Xf = X.reshape(b, k, n, d * d)
    XfT = Xf.transpose(-1, -2)
    p = _fl_init(method, g * b, k, d, r, X.device)
    trainable = [key for key in p if key != "A0"]
    step = lr.reshape(g * b, 1, 1, 1)
    for _ in range(rounds):
        for _ in range(local_steps):
            w = _fl_delta(method, p).reshape(g, b, k, d * d).permute(1, 2, 3, 0)  # (b, k, d², g)
            res = Xf @ w - y.unsqueeze(-1)  # (b, k, n, g)
            G = ((2.0 / n) * (XfT @ res)).permute(3, 0, 1, 2).reshape(g * b, k, d, d)
            gr = _fl_grads(method, p, G)
            for key in trainable:
                p[key] = p[key] - step * gr[key]
        for key in _SHARED[method]:
            p[key] = p[key].mean(1, keepdim=True).expand_as(p[key]).clone()
        yield _fl_delta(method, p)


def _fl_run(method: str, X: torch.Tensor, y: torch.Tensor, r: int, lr: torch.Tensor, rounds: int,
            local_steps: int) -> torch.Tensor:
    """Federated training on a batch ``X`` (b, k, n, d, d), ``y`` (b, k, n) with the step sizes ``lr`` (g·b,), grid
    major (entry ``i·b + j`` runs batch entry ``j`` at the ``i``-th step size): each round every client takes
    ``local_steps`` full-batch gradient steps on ``L_i = (1/n) Σ_l (⟨X_il, ΔW_i⟩ − y_il)²`` from the server's shared
    block and its own personal one, then the server averages the shared block over the clients. Returns the adapters
    ``ΔW_i`` (g·b, k, d, d). The ``g`` runs on one batch entry read its data in one product per step (the data are
    not copied per step size: the step is memory-bound)."""
    return collections.deque(_fl_rounds(method, X, y, r, lr, rounds, local_steps), maxlen=1)[0]


def federated_train(X: Any, y: Any, rank: int, method: str = "colora", *, lr: float = 0.02, rounds: int = ROUNDS,
                    local_steps: int = LOCAL_STEPS) -> torch.Tensor:
    """One federated method (:data:`FL_METHODS`) on ``X`` (k, n, d, d), ``y`` (k, n): the clients' adapters
    ``ΔW_i`` (k, d, d) after ``rounds`` rounds of ``local_steps`` local gradient steps of size ``lr``."""
    X, y, r, _ = _check_data(X, y, rank, 1)
    m = one_of("method", method, FL_METHODS)
    lr = number("lr", lr, 0.0, 10.0, low_open=True)
    rounds = integer("rounds", rounds, 1, 10_000)
    local_steps = integer("local_steps", local_steps, 1, 1000)
    if m == "ffa" and 2 * r > X.shape[-1]:
        raise ValueError(f"Invalid rank: {r} (FFA-LoRA uses rank 2r ≤ d = {X.shape[-1]})")
    with one_thread(X.device):
        lr_t = torch.full((1,), lr, dtype=X.dtype, device=X.device)
        return _fl_run(m, X.unsqueeze(0), y.unsqueeze(0), r, lr_t, rounds, local_steps)[0]


def fl_errors(X: torch.Tensor, y: torch.Tensor, M: torch.Tensor, r: int, lrs: dict[str, float],
              methods: tuple[str, ...] = FL_METHODS, rounds: int = ROUNDS, local_steps: int = LOCAL_STEPS
              ) -> dict[str, np.ndarray]:
    """Median-over-clients relative error of each federated method at its step size ``lrs[method]`` on a batch
    (b, k, n, d, d) (unvalidated core)."""
    b = X.shape[0]
    out = {}
    with one_thread(X.device):
        for m in methods:
            lr = torch.full((b,), float(lrs[m]), dtype=X.dtype, device=X.device)
            Mh = _fl_run(m, X, y, r, lr, rounds, local_steps)
            err = torch.linalg.matrix_norm(Mh - M) / torch.linalg.matrix_norm(M)
            out[m] = to_numpy(err.median(dim=1).values)
    return out


def fl_validation(X: torch.Tensor, y: torch.Tensor, Xv: torch.Tensor, yv: torch.Tensor, r: int, method: str,
                  grid: tuple[float, ...] = FL_GRID, rounds: int = ROUNDS,
                  local_steps: int = LOCAL_STEPS) -> np.ndarray:
    """Validation MSE (mean over clients and the batch) of ``method`` at each step size of ``grid``, all step sizes in
    one batched run: shape (len(grid),). Diverged runs score ``inf``."""
    b, k, n, d, _ = X.shape
    g = len(grid)
    rep = lambda T: T.repeat(g, *([1] * (T.ndim - 1)))  # noqa: E731 - stack the grid along the batch
    lr = torch.tensor(grid, dtype=X.dtype, device=X.device).repeat_interleave(b)
    with one_thread(X.device):
        Mh = _fl_run(method, X, y, r, lr, rounds, local_steps)
        Mv = Xv.reshape(b, k, -1, d * d)
        pred = (rep(Mv) @ Mh.reshape(g * b, k, d * d, 1)).squeeze(-1)
        mse = ((pred - rep(yv)) ** 2).mean(dim=(1, 2)).reshape(g, b).mean(1)
    out = to_numpy(mse)
    return np.where(np.isfinite(out), out, np.inf)


#: The headline's cells (η, τ, n): the claim's world and the two control worlds (a single global adapter is the
#: right model; dissimilar subspaces with data enough for each client's own LoRA).
FL_CELLS = {"heterogeneous": (1.0, 0.0, 64), "homogeneous": (0.0, 0.0, 64), "dissimilar": (1.0, 0.5, 128)}
FL_ROUNDS = ROUNDS


def fl_cell(eta: float, tau: float, n: int, *, seed: int = CHAPTER_SEEDS[0], reps: int = 3, k: int = K, d: int = D,
            r: int = RANK, sigma: float = SIGMA, grid: Any = FL_GRID, rounds: int = FL_ROUNDS,
            local_steps: int = LOCAL_STEPS, device: Any = None) -> dict[str, Any]:
    """Every federated method on one world (η, τ, n), ``reps`` replicates: each method's step size is chosen per
    replicate from ``grid`` by its validation MSE on :data:`N_VAL` held-out samples per client (the same grid,
    rounds and local steps for all); returns, per method, the chosen step sizes, the validation MSE over the grid and
    the median-over-clients relative error at the chosen step size, and CoLoRA's alternating least squares on the
    same training samples (``"colora_als"``)."""
    eta, tau = number("eta", eta, 0.0, 1.0), number("tau", tau, 0.0)
    n, reps = integer("n", n, 1), integer("reps", reps, 1)
    grid = tuple(number("grid", g, 0.0, 10.0, low_open=True) for g in np.atleast_1d(np.asarray(grid, dtype=object)))
    rounds, local_steps = integer("rounds", rounds, 1, 10_000), integer("local_steps", local_steps, 1, 1000)
    k, d = integer("k", k, 1), integer("d", d, 2)
    r = integer("r", r, 1, d // 2)
    sigma = number("sigma", sigma, 0.0)
    if not grid:
        raise ValueError("Invalid grid: empty (must hold ≥ 1 step size)")
    memory_guard(8.0 * len(grid) * reps * k * (n + N_VAL) * d * d * 4, lower="reps, k, n, d or the grid")
    dev = resolve_device(device)
    Bt = _batch_eta(k, d, r, n + N_VAL, tau, sigma, integer("seed", seed, 0), reps, eta, dev)
    X, y, Xv, yv = Bt.X[:, :, :n], Bt.y[:, :, :n], Bt.X[:, :, n:], Bt.y[:, :, n:]
    out: dict[str, Any] = {"eta": eta, "tau": tau, "n": n, "grid": list(grid), "rounds": rounds,
                           "local_steps": local_steps}
    g = len(grid)
    rep = lambda T: T.repeat(g, *([1] * (T.ndim - 1)))  # noqa: E731 - stack the grid along the batch
    lr_all = torch.tensor(grid, dtype=X.dtype, device=dev).repeat_interleave(reps)
    Mv = Xv.reshape(reps, k, -1, d * d)
    with one_thread(dev):
        for m in FL_METHODS:  # one batched run over (step size, replicate); each replicate keeps its best step size
            Mh = _fl_run(m, X, y, r, lr_all, rounds, local_steps)  # (g·reps, k, d, d)
            pred = (rep(Mv) @ Mh.reshape(g * reps, k, d * d, 1)).squeeze(-1)
            val = to_numpy(((pred - rep(yv)) ** 2).mean(dim=(1, 2)).reshape(g, reps)).T  # (reps, g)
            val = np.where(np.isfinite(val), val, np.inf)
            pick = [int(np.argmin(v)) for v in val]
            Mb = Mh.reshape(g, reps, k, d, d)[pick, list(range(reps))]
            err = to_numpy((torch.linalg.matrix_norm(Mb - Bt.M) / torch.linalg.matrix_norm(Bt.M)).median(1).values)
            out[m] = {"lr": [grid[i] for i in pick], "val": val.tolist(), "error": [float(e) for e in err]}
        Mals = _altmin(X, y, r, ITERS, False)[0]
        out["colora_als"] = {"error": [float(e) for e in to_numpy(
            (torch.linalg.matrix_norm(Mals - Bt.M) / torch.linalg.matrix_norm(Bt.M)).median(1).values)]}
    return out


def fl_ratio(cell: dict[str, Any]) -> float:
    """max over replicates of federated CoLoRA's error ÷ the best federated baseline's (FedAvg-, FFA-, FedSA-LoRA,
    per-client LoRA)."""
    e = np.asarray(cell["colora"]["error"])
    best = np.min([cell[m]["error"] for m in FL_METHODS[1:]], axis=0)
    return float((e / best).max())
