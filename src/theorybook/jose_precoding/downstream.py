"""The downstream experiment (issue 34): does control in the JoSE latent learn faster than in the full action space?

Design, fixed before measuring (the bench ``bench/jose_precoding.py`` runs it at full scale and commits the results):

* **Task.** Reach two fixed joint targets from rest at the extended posture within ``horizon`` MuJoCo steps (with the
  chapter's velocity noise); a candidate's score is the mean final |q − q*| over both targets (rad).
* **Policy.** Linear in ``φ = (q* − q, 0.05·v, 1)``: ``a = clip(½ + B W φ, 0, 1)``. Arms: ``full`` (``B = I``,
  ``W`` 16 × 9 = 144 parameters), ``jose`` (``B`` = JoSE-4 at the start posture, ``W`` 4 × 9), ``pca`` (the top-4
  PCA synergies of the full-space reaching controller's activations, the SAR proxy), ``random`` (a Haar-random
  orthonormal 16 × 4 frame per seed: the ablation "any 4-D latent"), and ``null`` (the full space again, with an
  independent random stream: the do-nothing control of the paired test).
* **Learner.** The cross-entropy method: ``population`` candidates per iteration from ``N(μ, σ²)`` (μ = 0, σ = 0.5
  at the start), elites = top quarter, σ floor 0.02. The **evaluation budget is matched**: every arm scores
  ``population × iterations`` candidates on the same 2 targets.
* **Learning speed.** Per seed and arm, the best-so-far score after each iteration; its mean over iterations (the
  area under the learning curve, AUC; lower = faster). Primary test: the paired one-sided t statistic of
  ``AUC(full) − AUC(arm)`` over the seeds, at false-alarm 1e-3. Secondary: the speed-up = budget / rollouts for
  the arm's median curve to reach the full space's median final score — the paper's "≈ 2–3× faster" is of this
  kind.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import torch

from ..device import resolve_device, to_numpy
from ..validate import integer, number
from .core import jose

__all__ = ["ARMS", "TARGETS", "CEMResult", "cem_reaching", "compress", "learning_speed"]

ARMS = ("full", "jose", "pca", "random", "null")
TARGETS = ((0.6, 0.5, 0.4, 0.3), (0.2, 0.7, 0.1, 0.5))
_STREAM = {"full": 0, "jose": 0, "pca": 0, "random": 0, "null": 1}


class CEMResult(NamedTuple):
    """Best-so-far score (rad) after each CEM iteration, per arm: ``curves[arm]`` is seeds × iterations;
    ``rollouts`` the cumulative evaluations (candidates × targets) after each iteration."""

    seeds: tuple[int, ...]
    arms: tuple[str, ...]
    rollouts: np.ndarray
    curves: dict


_BASES: dict = {}


def _bases(f, k: int, device) -> dict:
    """JoSE-k at the start posture and the top-k PCA synergies (deterministic; cached per k).

    Always computed on the CPU in float64, whatever ``device``: the CEM that uses them runs in numpy and MuJoCo, so
    the downstream curves do not depend on the device (a CUDA eigensolver's last-ulp differences could otherwise
    flip an elite ranking and the chapter's re-run would not reproduce the committed curves)."""
    from .experiment import NOISE, POSTURES, POWER, _finger, _noise_cov, pca_synergies, reach_activations

    del device  # see the docstring
    device = torch.device("cpu")
    key = (k, "cpu")
    if key not in _BASES:
        start = np.asarray(POSTURES["extended"])
        f = _finger(NOISE, device) if f.device != device else f
        Theta = to_numpy(jose(f.G(start), _noise_cov(NOISE, device), POWER, k=k).precoder)
        pcs = to_numpy(pca_synergies(reach_activations(40, 50, seed=0, device=device), k))
        _BASES[key] = {"jose": Theta, "pca": pcs}
    return _BASES[key]


def cem_reaching(seeds=(0,), *, arms: tuple[str, ...] = ("full", "jose"), k: int = 4, iterations: int = 8,
                 population: int = 16, horizon: int = 40, device=None) -> CEMResult:
    """Run the CEM reaching experiment (module docstring) for every seed and arm; arms share the seed (paired)."""
    from .experiment import NOISE, POSTURES, _finger

    seeds = tuple(integer("seed", s, 0) for s in seeds)
    if not seeds:
        raise ValueError("Invalid seeds: () (need at least one)")
    if isinstance(arms, str) or not isinstance(arms, (tuple, list)) or not arms:
        raise TypeError(f"Invalid arms: {arms!r} (must be a non-empty tuple of {ARMS})")
    for a in arms:
        if a not in ARMS:
            raise ValueError(f"Invalid arms: {a!r} (must be one of {ARMS})")
    k = integer("k", k, 1, 16)
    iterations = integer("iterations", iterations, 1, 200)
    population = integer("population", population, 4, 512)
    horizon = integer("horizon", horizon, 1, 2000)
    if len(seeds) * len(arms) * iterations * population * horizon > 5e8:
        raise ValueError("Invalid scale: seeds × arms × iterations × population × horizon > 5e8 MuJoCo steps")
    dev = resolve_device(device)
    f = _finger(NOISE, dev)
    import mujoco

    m, d = f.model, f.data
    start = np.asarray(POSTURES["extended"])
    targets = np.asarray(TARGETS)
    fixed = _bases(f, k, dev) if {"jose", "pca"} & set(arms) else {}

    def score(W: np.ndarray, basis: np.ndarray | None, rng: np.random.Generator) -> float:
        err = 0.0
        for tgt in targets:
            d.qpos[:] = start
            d.qvel[:] = 0.0
            for _ in range(horizon):
                phi = np.concatenate([tgt - d.qpos, 0.05 * d.qvel, [1.0]])
                u = W @ phi
                d.ctrl[:] = np.clip(0.5 + (u if basis is None else basis @ u), 0.0, 1.0)
                mujoco.mj_step(m, d)
                d.qvel[:] += NOISE * rng.standard_normal(4)
            err += float(np.abs(d.qpos - tgt).mean())
        return err / len(targets)

    n_elite = max(2, population // 4)
    curves: dict = {a: [] for a in arms}
    for s in seeds:
        for arm in arms:
            rng = np.random.default_rng([s, _STREAM[arm]])
            if arm == "random":
                basis = np.linalg.qr(np.random.default_rng([s, 2]).standard_normal((16, k)))[0]
            else:
                basis = fixed.get(arm)
            dim = 16 if basis is None else k
            mu, sd = np.zeros((dim, 9)), np.full((dim, 9), 0.5)
            best, curve = np.inf, []
            for _ in range(iterations):
                cand = mu + sd * rng.standard_normal((population, dim, 9))
                sc = np.array([score(c, basis, rng) for c in cand])
                el = cand[np.argsort(sc, kind="stable")[:n_elite]]
                mu, sd = el.mean(0), el.std(0) + 0.02
                best = min(best, float(sc.min()))
                curve.append(best)
            curves[arm].append(curve)
    rollouts = np.arange(1, iterations + 1) * population * len(targets)
    return CEMResult(seeds, tuple(arms), rollouts, {a: np.array(c) for a, c in curves.items()})


def compress(curves, factor: float) -> np.ndarray:
    """The paper's speed-up planted in an arm's own best-so-far curves (seeds × iterations): after ``j`` iterations
    the planted arm has what the arm had after ``factor·j`` (rounded up), capped at its own final value — a
    ``factor``× speed-up in rollouts that never invents progress beyond the budget."""
    c = np.asarray(curves, dtype=float)
    if c.ndim != 2 or c.shape[1] < 1 or not np.isfinite(c).all():
        raise ValueError(f"Invalid curves: shape {c.shape} (must be finite seeds × iterations)")
    factor = number("factor", factor, 1.0, 100.0)
    j = np.arange(1, c.shape[1] + 1)
    idx = np.minimum(np.ceil(factor * j - 1e-9).astype(int), c.shape[1]) - 1
    return c[:, idx]


class Speed(NamedTuple):
    """Learning-speed statistics of one arm against the full space (module docstring)."""

    auc: np.ndarray        # per seed
    t: float               # paired one-sided t of AUC(full) − AUC(arm); > 0: the arm learns faster
    mean_diff: float
    speedup: float         # budget / rollouts for the arm's median curve to reach the full space's median final
    final: np.ndarray      # per seed


def learning_speed(res: CEMResult) -> dict:
    """:class:`Speed` for every arm of ``res`` (``res`` must contain ``"full"`` and ≥ 2 seeds). The speed-up uses
    the median learning curve over seeds; it is 0 when the arm's median curve never reaches the full space's median
    final score within the budget (the full space itself: 1 by definition)."""
    if not isinstance(res, CEMResult):
        raise TypeError(f"Invalid res: {type(res).__name__} (must be a CEMResult)")
    if "full" not in res.curves or len(res.seeds) < 2:
        raise ValueError("Invalid res: needs the 'full' arm and at least 2 seeds")
    full = res.curves["full"]
    auc_full = full.mean(1)
    level = float(np.median(full, 0)[-1])
    budget = float(res.rollouts[-1])
    out = {}
    for arm, c in res.curves.items():
        auc = c.mean(1)
        diff = auc_full - auc
        sd = float(diff.std(ddof=1))
        t = float(diff.mean() / (sd / np.sqrt(diff.size))) if sd > 0 else (0.0 if diff.mean() == 0 else np.inf)
        hit = np.nonzero(np.median(c, 0) <= level)[0]
        speed = budget / float(res.rollouts[hit[0]]) if hit.size else 0.0
        out[arm] = Speed(auc, t, float(diff.mean()), speed, c[:, -1])
    return out
