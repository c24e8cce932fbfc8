"""Experiments of the DASH chapter: accuracy vs iterations, stacked vs looped solvers, a small Shampoo run.

Timings are medians of warm repeats (one untimed warm-up first). Nothing here asserts a time; the chapter and
``bench/dash.py`` report what was measured.
"""

from __future__ import annotations

import functools
import math
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import torch

from .. import validate
from ..device import one_thread, resolve_device, seed_everything
from .optimizer import Shampoo
from .solvers import (
    MAX_DEGREE,
    MAX_ITERS,
    METHODS,
    SCALINGS,
    _check_stack,
    error_or_inf,
    inverse_root,
    reference_root,
    solve_unchecked,
    spd_stack,
)

__all__ = [
    "HELDOUT_SHAMPOO",
    "HeldoutRun",
    "TrainRun",
    "digits_problem",
    "heldout_comparison",
    "error_curve",
    "iterations_to_target",
    "median_time",
    "scaling_iterations",
    "shampoo_factors",
    "solve_loop",
    "solve_stacked",
    "stacking_speedup",
    "train_heldout",
    "train_shampoo",
    "varying_pixels",
]


def median_time(fn: Callable[[], object], repeats: int = 5, warmup: int = 1) -> float:
    """Median wall time (s) of ``fn()`` over ``repeats`` runs after ``warmup`` untimed runs (CUDA synced)."""
    if not callable(fn):
        raise TypeError(f"Invalid fn: {fn!r} (must be a callable with no arguments)")
    repeats = validate.integer("repeats", repeats, 1, 10_000)
    warmup = validate.integer("warmup", warmup, 0, 10_000)
    sync = torch.cuda.synchronize if torch.cuda.is_available() else (lambda: None)
    for _ in range(warmup):
        fn()
    sync()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _solver_args(kw: dict) -> dict:
    unknown = set(kw) - {"method", "iters", "scaling", "eps", "degree"}
    if unknown:
        raise TypeError(f"Invalid keyword(s): {', '.join(sorted(unknown))} (solver options are method, iters, "
                        "scaling, eps, degree)")
    out = {"method": kw.get("method", "ndb"), "iters": kw.get("iters", 10), "scaling": kw.get("scaling", "fro"),
           "eps": kw.get("eps", 0.0), "degree": kw.get("degree", 60)}
    validate.one_of("method", out["method"], METHODS)
    validate.one_of("scaling", out["scaling"], SCALINGS)
    out["iters"] = validate.integer("iters", out["iters"], 1, MAX_ITERS)
    out["degree"] = validate.integer("degree", out["degree"], 1, MAX_DEGREE)
    out["eps"] = validate.number("eps", out["eps"], 0.0, math.inf)
    return out


def solve_stacked(A: torch.Tensor, **kw) -> torch.Tensor:
    """One batched call over the whole (N, B, B) stack (DASH). Arguments as :func:`inverse_root` (p = 4).
    Validation runs once per call, in the loop and in the stack alike, so both pay the same for it."""
    S = _check_stack(A)
    return solve_unchecked(S, 4, **_solver_args(kw))


def solve_loop(A: torch.Tensor, **kw) -> torch.Tensor:
    """A Python loop over blocks, one solver call per (1, B, B) block (Distributed Shampoo's layout)."""
    S = _check_stack(A)
    args = _solver_args(kw)
    return torch.cat([solve_unchecked(S[i : i + 1], 4, **args) for i in range(S.shape[0])])


def error_curve(kappa: float, method: str, scaling: str, iters: list[int], *, n: int = 4, size: int = 64,
                dtype: torch.dtype = torch.float32, seed: int = 0, device=None) -> list[float]:
    """Relative error (vs float64 EVD) of ``inverse_root(A, 4)`` for each iteration count, on logspace spectra."""
    validate.one_of("method", method, ("ndb", "cn"))
    validate.one_of("scaling", scaling, SCALINGS)
    iters = [validate.integer("iters", k, 1, MAX_ITERS) for k in iters]
    A = spd_stack(n, size, kappa, seed=seed, dtype=dtype, device=resolve_device(device))
    ref = reference_root(A, 4)
    return [error_or_inf(inverse_root(A, 4, method=method, iters=k, scaling=scaling), ref) for k in iters]


def iterations_to_target(A: torch.Tensor, ref: torch.Tensor, method: str, target: float, *,
                         scaling: str = "fro", eps: float = 0.0, max_iters: int = 60,
                         start: int | None = None) -> tuple[int, float]:
    """Smallest iteration count (degree for Chebyshev) whose error ≤ ``target``; (−1, best error) if none.

    Newton iterations are searched 1…max_iters; Chebyshev degrees in steps of 10 up to 10·max_iters/3.
    ``start`` (Newton methods only) begins the search there instead of at 1: up from ``start`` while the error
    exceeds ``target``, else down while the count below still reaches it — the same answer as the search from 1
    whenever the error does not increase with the count (a Newton root converges monotonically in exact
    arithmetic, :mod:`.theory`), at a fraction of the products. The error returned is that of the count found.
    """
    validate.one_of("method", method, METHODS)
    _check_stack(A)
    _check_stack(ref)
    target = validate.number("target", target, 0.0, math.inf, low_open=True)
    max_iters = validate.integer("max_iters", max_iters, 1, 200)
    if start is not None:
        start = validate.integer("start", start, 1, max_iters)
        if method not in ("ndb", "cn"):
            raise ValueError(f"Invalid start: {start!r} (only for the Newton methods 'ndb' and 'cn', not {method!r})")
    if method == "evd":
        err = error_or_inf(inverse_root(A, 4, method="evd", eps=eps), ref)
        return (1 if err <= target else -1), err

    def error(k: int) -> float:
        return error_or_inf(inverse_root(A, 4, method=method, iters=k, degree=k, scaling=scaling, eps=eps), ref)

    if start is not None:
        k, err = start, error(start)
        if err <= target:
            while k > 1:
                below = error(k - 1)
                if below > target:
                    break
                k, err = k - 1, below
            return k, err
        best = err
        for k in range(start + 1, max_iters + 1):
            err = error(k)
            best = min(best, err)
            if err <= target:
                return k, err
        return -1, best
    grid = range(10, 10 * max_iters // 3 + 1, 10) if method == "chebyshev" else range(1, max_iters + 1)
    best = math.inf
    for k in grid:
        err = error(k)
        best = min(best, err)
        if err <= target:
            return k, err
    return -1, best


def scaling_iterations(size: int, kappa: float, spectrum: str, *, target: float = 1e-3, n: int = 2, seed: int = 0,
                       start: dict[str, int] | None = None, device=None) -> dict[str, int]:
    """Newton–DB iterations (per call, p = 4, fp32, ε = 0) to a relative error ≤ ``target`` of A^(−1/4) against a
    float64 EVD, with Frobenius (``"fro"``) and multi-power-iteration (``"pim"``) scaling, on a stack of ``n``
    blocks of side ``size`` with the ``spectrum`` of :func:`.solvers.spd_stack` (λ_max = 1, λ_min = 1/κ), Haar
    rotations from ``seed``. ``start`` (per scaling) begins each search there (:func:`iterations_to_target`).
    Returns ``{"fro": k, "pim": k}`` (−1 where 60 iterations do not reach the target)."""
    size = validate.integer("size", size, 2, 1024)
    kappa = validate.number("kappa", kappa, 1.0, 1e8)
    n = validate.integer("n", n, 1, 64)
    target = validate.number("target", target, 0.0, 1.0, low_open=True)
    if start is not None and (not isinstance(start, dict) or set(start) - {"fro", "pim"}):
        raise TypeError(f"Invalid start: {start!r} (must be a dict with keys among 'fro', 'pim')")
    A = spd_stack(n, size, kappa, seed=seed, dtype=torch.float32, device=resolve_device(device), spectrum=spectrum)
    ref = reference_root(A, 4)
    return {sc: iterations_to_target(A, ref, "ndb", target, scaling=sc,
                                     start=None if start is None else start.get(sc))[0]
            for sc in ("fro", "pim")}


def stacking_speedup(method: str, n: int = 16, size: int = 64, *, iters: int = 10, scaling: str = "fro",
                     degree: int = 60, repeats: int = 5, kappa: float = 1e3, device=None) -> tuple[float, float]:
    """(loop seconds, stacked seconds), medians of warm repeats, float32, for one solver on an N×B×B stack.

    An illustration only (wall-clock time is never a verdict): ``bench/dash.py`` is the measurement."""
    validate.one_of("method", method, METHODS)
    _solver_args(dict(method=method, iters=iters, scaling=scaling, degree=degree))
    A = spd_stack(n, size, kappa, dtype=torch.float32, device=resolve_device(device))
    kw = dict(method=method, iters=iters, scaling=scaling, degree=degree, eps=1e-6 if method != "ndb" else 0.0)
    loop = median_time(lambda: solve_loop(A, **kw), repeats)
    stacked = median_time(lambda: solve_stacked(A, **kw), repeats)
    return loop, stacked


# --------------------------------------------------------------------------------------- small training
@functools.lru_cache(maxsize=1)
def _digits():
    """The digits table that ships with scikit-learn (``datasets/data/digits.csv.gz``), read directly: importing
    sklearn itself takes seconds and is not needed for one CSV. Falls back to ``load_digits``."""
    import importlib.util

    import numpy as np

    spec = importlib.util.find_spec("sklearn")
    path = Path(spec.origin).parent / "datasets" / "data" / "digits.csv.gz" if spec and spec.origin else None
    if path is not None and path.exists():
        data = np.loadtxt(path, delimiter=",")
        X, y = data[:, :-1], data[:, -1].astype(np.int64)
    else:  # pragma: no cover - a different sklearn layout
        from sklearn.datasets import load_digits

        X, y = load_digits(return_X_y=True)
    X.setflags(write=False)
    y.setflags(write=False)
    return X, y


def digits_problem(device=None, dtype: torch.dtype = torch.float32) -> tuple[torch.Tensor, torch.Tensor]:
    """sklearn's bundled 8×8 digits (1797 × 64), standardised; labels 0–9."""
    X, y = _digits()
    X = torch.tensor(X, dtype=dtype)  # a copy: the cached table stays read-only
    X = (X - X.mean(0)) / (X.std(0) + 1.0)
    return X.to(resolve_device(device)), torch.tensor(y).to(resolve_device(device))


class TrainRun(NamedTuple):
    """Minibatch training loss per step, the median ms of one ``optimizer.step()``, a label for plots, and
    whether the run diverged (a non-finite loss stops it; ``loss`` then holds the finite steps only)."""

    loss: list[float]
    ms_per_step: float
    label: str
    diverged: bool = False


def _mlp(hidden: int, gen: torch.Generator, device, dtype, inputs: int = 64) -> list[torch.Tensor]:
    def init(rows, cols):
        return (torch.randn(rows, cols, generator=gen, dtype=dtype) / math.sqrt(cols)).to(device).requires_grad_()
    return [init(hidden, inputs), torch.zeros(hidden, dtype=dtype, device=device, requires_grad=True),
            init(hidden, hidden), torch.zeros(hidden, dtype=dtype, device=device, requires_grad=True),
            init(10, hidden), torch.zeros(10, dtype=dtype, device=device, requires_grad=True)]


def train_shampoo(method: str = "ndb", scaling: str = "fro", *, steps: int = 200, iters: int = 10,
                  degree: int = 60, eps: float | None = None, lr: float = 3e-3, block_size: int = 64,
                  hidden: int = 128, batch: int = 256, seed: int = 0, optimizer: str = "shampoo",
                  device=None) -> TrainRun:
    """A 64→hidden→hidden→10 tanh MLP on digits, minibatch cross-entropy, Shampoo (B = ``block_size``) with
    Adam grafting — or plain Adam (``optimizer="adam"``). ε defaults to the paper's: 1e-10 for EVD and
    Chebyshev, 0 for CN/NDB."""
    validate.one_of("method", method, METHODS)
    validate.one_of("scaling", scaling, SCALINGS)
    validate.one_of("optimizer", optimizer, ("shampoo", "adam"))
    steps = validate.integer("steps", steps, 1, 100_000)
    hidden = validate.integer("hidden", hidden, 1)
    batch = validate.integer("batch", batch, 1)
    iters = validate.integer("iters", iters, 1, MAX_ITERS)
    degree = validate.integer("degree", degree, 1, MAX_DEGREE)
    block_size = validate.integer("block_size", block_size, 1)
    seed = validate.integer("seed", seed, 0, 2**63 - 1)
    lr = validate.number("lr", lr, 0.0, math.inf, low_open=True)
    if eps is not None:
        eps = validate.number("eps", eps, 0.0, math.inf)
    validate.memory_guard(4.0 * 8 * (hidden * hidden + 64 * hidden) + 4.0 * 8 * batch * max(hidden, 64),
                          lower="hidden or batch")
    device = resolve_device(device)
    X, y = digits_problem(device)
    gen = seed_everything(seed)
    params = _mlp(hidden, gen, device, torch.float32)
    if optimizer == "adam":
        opt = torch.optim.Adam(params, lr=lr)
    else:
        eps = (1e-10 if method in ("evd", "chebyshev") else 0.0) if eps is None else eps
        opt = Shampoo(params, lr=lr, method=method, scaling=scaling, iters=iters, degree=degree, eps=eps,
                      block_size=block_size, inv_root_freq=1)  # the paper's: a root every step
    with one_thread(device):  # a tiny network: a second intra-op thread only adds hand-off cost
        return _train_loop(params, opt, X, y, gen, steps, batch, device,
                           "Adam" if optimizer == "adam" else f"{method.upper()}-{scaling}"
                           if method in ("ndb", "cn") else method.upper())


def _forward(params, h: torch.Tensor) -> torch.Tensor:
    for W, b in zip(params[0:-2:2], params[1:-2:2], strict=True):
        h = torch.tanh(h @ W.T + b)
    return h @ params[-2].T + params[-1]


def _train_loop(params, opt, X, y, gen, steps: int, batch: int, device, label: str,
                on_step: Callable[[int], None] | None = None) -> TrainRun:
    losses, times, diverged = [], [], False
    for t in range(steps):
        idx = torch.randint(0, X.shape[0], (batch,), generator=gen).to(device)
        loss = torch.nn.functional.cross_entropy(_forward(params, X[idx]), y[idx])
        if not math.isfinite(loss.item()):
            diverged = True
            break
        opt.zero_grad()
        loss.backward()
        t0 = time.perf_counter()
        opt.step()
        times.append(time.perf_counter() - t0)
        losses.append(loss.item())
        if on_step is not None:
            on_step(t + 1)
    ms = 1e3 * statistics.median(times) if times else 0.0
    return TrainRun(losses, ms, label, diverged)


# --------------------------------------------------------------------------------------- held-out comparison
class HeldoutRun(NamedTuple):
    """Held-out cross-entropy at ``eval_steps`` (step 0 = the initialisation), the training run, and its label."""

    eval_steps: list[int]
    heldout: list[float]
    train: TrainRun
    label: str


#: Every Shampoo setting a held-out run passes explicitly (so that a change of :class:`Shampoo`'s defaults cannot
#: move the chapter's rows): the paper's betas (β_G, β_LR, β_graft) = (0.9, 0.95, 0.95), a root every step (the
#: paper's ``inv_root_freq`` for NDB/CN), preconditioning from step 1, no weight decay, stacked blocks, fp32.
HELDOUT_SHAMPOO = {"betas": (0.9, 0.95, 0.95), "inv_root_freq": 1, "start_preconditioning_step": 1,
                   "weight_decay": 0.0, "stacked": True, "degree": 60, "preconditioner_dtype": torch.float32}


def varying_pixels() -> torch.Tensor:
    """Indices of the digits pixels whose variance over the 1797 images is > 0 (61 of 64: three pixels are 0 in
    every image, so an input layer fed them has an exactly singular right factor R = Σ GᵀG)."""
    X, _ = _digits()
    return torch.nonzero(torch.tensor(X.std(0) > 0), as_tuple=False)[:, 0]


def train_heldout(method: str = "ndb", scaling: str = "fro", *, steps: int = 120, eval_every: int = 10,
                  holdout: int = 597, iters: int = 10, eps: float | None = None, lr: float = 1e-3,
                  block_size: int = 64, hidden: int = 64, batch: int = 128, seed: int = 0,
                  optimizer: str = "shampoo", drop_constant: bool = True, device=None) -> HeldoutRun:
    """Train the MLP of :func:`train_shampoo` on a random split of digits and measure the loss on the rest.

    The split (``holdout`` samples held out, the rest trained on), the initialisation and the minibatches are
    drawn from ``seed``, so two methods run with the same seed see the same split, start and minibatches. The
    held-out cross-entropy (no gradient) is taken at step 0 and every ``eval_every`` optimizer steps.
    ``drop_constant`` (default) removes the three pixels that are 0 in every image (:func:`varying_pixels`); every
    Shampoo setting other than the arguments is :data:`HELDOUT_SHAMPOO`, passed explicitly."""
    validate.one_of("method", method, METHODS)
    validate.one_of("scaling", scaling, SCALINGS)
    validate.one_of("optimizer", optimizer, ("shampoo", "adam"))
    steps = validate.integer("steps", steps, 1, 100_000)
    eval_every = validate.integer("eval_every", eval_every, 1, steps)
    holdout = validate.integer("holdout", holdout, 1, 1797 - 1)
    hidden = validate.integer("hidden", hidden, 1, 4096)
    batch = validate.integer("batch", batch, 1, 1797)
    iters = validate.integer("iters", iters, 1, MAX_ITERS)
    block_size = validate.integer("block_size", block_size, 1)
    seed = validate.integer("seed", seed, 0, 2**63 - 1)
    lr = validate.number("lr", lr, 0.0, math.inf, low_open=True)
    if eps is not None:
        eps = validate.number("eps", eps, 0.0, math.inf)
    if not isinstance(drop_constant, bool):
        raise TypeError(f"Invalid drop_constant: {drop_constant!r} (must be a bool)")
    device = resolve_device(device)
    X, y = digits_problem(device)
    if drop_constant:
        X = X[:, varying_pixels().to(device)]
    gen = seed_everything(seed)
    perm = torch.randperm(X.shape[0], generator=gen).to(device)
    Xh, yh, Xt, yt = X[perm[:holdout]], y[perm[:holdout]], X[perm[holdout:]], y[perm[holdout:]]
    params = _mlp(hidden, gen, device, torch.float32, inputs=X.shape[1])
    if optimizer == "adam":
        opt = torch.optim.Adam(params, lr=lr)
        label = "Adam"
    else:
        eps = (1e-10 if method in ("evd", "chebyshev") else 0.0) if eps is None else eps
        opt = Shampoo(params, lr=lr, method=method, scaling=scaling, iters=iters, eps=eps, block_size=block_size,
                      **HELDOUT_SHAMPOO)
        label = f"{method.upper()}-{scaling}" if method in ("ndb", "cn") else method.upper()
    marks, held = [], []

    def evaluate(t: int) -> None:
        if t % eval_every == 0:
            with torch.no_grad():
                held.append(torch.nn.functional.cross_entropy(_forward(params, Xh), yh).item())
            marks.append(t)

    with one_thread(device):
        evaluate(0)
        run = _train_loop(params, opt, Xt, yt, gen, steps, batch, device, label, on_step=evaluate)
    return HeldoutRun(marks, held, run, label)


def shampoo_factors(seed: int = 0, *, at: tuple[int, ...] = (10, 40, 80), eps: float = 1e-4, iters: int = 10,
                    lr: float = 1e-3, hidden: int = 64, batch: int = 128, holdout: int = 597, block_size: int = 64,
                    device=None) -> dict[int, list[torch.Tensor]]:
    """The Shampoo factors L and R of a held-out run: :func:`train_heldout`'s NDB-fro run of ``seed`` (same split,
    initialisation, minibatches and :data:`HELDOUT_SHAMPOO`, constant pixels dropped) replayed, and after each
    optimizer step in ``at`` a float64 copy of every factor stack (N, b, b) of side b > 1, grouped by side:
    ``{step: [stack per side]}``. These are the matrices whose roots the held-out rows' Shampoo computes."""
    seed = validate.integer("seed", seed, 0, 2**63 - 1)
    if not isinstance(at, tuple | list) or not at:
        raise TypeError(f"Invalid at: {at!r} (must be a non-empty tuple of steps ≥ 1)")
    at = tuple(validate.integer("step", t, 1, 100_000) for t in at)
    eps = validate.number("eps", eps, 0.0, math.inf)
    iters = validate.integer("iters", iters, 1, MAX_ITERS)
    lr = validate.number("lr", lr, 0.0, math.inf, low_open=True)
    hidden = validate.integer("hidden", hidden, 1, 4096)
    batch = validate.integer("batch", batch, 1, 1797)
    holdout = validate.integer("holdout", holdout, 1, 1797 - 1)
    block_size = validate.integer("block_size", block_size, 1)
    device = resolve_device(device)
    X, y = digits_problem(device)
    X = X[:, varying_pixels().to(device)]
    gen = seed_everything(seed)
    perm = torch.randperm(X.shape[0], generator=gen).to(device)
    Xt, yt = X[perm[holdout:]], y[perm[holdout:]]
    params = _mlp(hidden, gen, device, torch.float32, inputs=X.shape[1])
    opt = Shampoo(params, lr=lr, method="ndb", scaling="fro", iters=iters, eps=eps, block_size=block_size,
                  **HELDOUT_SHAMPOO)
    out: dict[int, list[torch.Tensor]] = {}

    def grab(t: int) -> None:
        if t in at:
            by_side: dict[int, list[torch.Tensor]] = {}
            for p in params:
                for k, v in opt.state[p].items():
                    if k[:2] in ("L_", "R_") and torch.is_tensor(v) and v.ndim == 3 and v.shape[-1] > 1:
                        by_side.setdefault(v.shape[-1], []).append(v.detach().double().cpu())
            out[t] = [torch.cat(v) for _, v in sorted(by_side.items())]

    with one_thread(device):
        _train_loop(params, opt, Xt, yt, gen, max(at), batch, device, "NDB-fro", on_step=grab)
    return out


def heldout_comparison(configs: tuple[tuple, ...] = (("ndb", "fro"), ("cn", "fro"), ("evd", "fro")),
                       seeds: tuple[int, ...] = (0, 1, 2, 3, 4, 5, 6, 7), device=None,
                       **kw) -> dict[str, list[HeldoutRun]]:
    """:func:`train_heldout` for every (method, scaling) or (method, scaling, ε) in ``configs`` and every seed:
    ``{label: [run per seed]}`` (a config with ε is labelled ``"NDB-fro ε=1e-04"``), runs of one seed paired (same
    split, start and minibatches)."""
    if not isinstance(configs, tuple | list) or not configs or not all(
            isinstance(c, tuple | list) and len(c) in (2, 3) for c in configs):
        raise TypeError(f"Invalid configs: {configs!r} (must be a non-empty tuple of (method, scaling[, eps]))")
    if not isinstance(seeds, tuple | list) or not seeds:
        raise TypeError(f"Invalid seeds: {seeds!r} (must be a non-empty tuple of integers)")
    if "eps" in kw and any(len(c) == 3 for c in configs):
        raise TypeError("Invalid eps: give ε either in every config or as a keyword, not both")
    seeds = tuple(validate.integer("seed", s, 0, 2**63 - 1) for s in seeds)
    out: dict[str, list[HeldoutRun]] = {}
    for cfg in configs:
        method, scaling = cfg[0], cfg[1]
        extra = {"eps": validate.number("eps", cfg[2], 0.0, math.inf)} if len(cfg) == 3 else {}
        runs = [train_heldout(method, scaling, seed=s, device=device, **kw, **extra) for s in seeds]
        out[runs[0].label + (f" ε={cfg[2]:.0e}" if len(cfg) == 3 else "")] = runs
    return out
