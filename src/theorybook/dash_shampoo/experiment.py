"""Experiments of the DASH chapter: accuracy vs iterations, stacked vs looped solvers, a small Shampoo run.

Timings are medians of warm repeats (one untimed warm-up first). Nothing here asserts a time; the chapter and
``bench/dash.py`` report what was measured.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable
from typing import NamedTuple

import torch

from .. import validate
from ..device import resolve_device, seed_everything
from .optimizer import Shampoo
from .solvers import METHODS, SCALINGS, inverse_root, reference_root, relative_error, solve_unchecked, spd_stack

__all__ = [
    "TrainRun",
    "digits_problem",
    "error_curve",
    "iterations_to_target",
    "median_time",
    "solve_loop",
    "solve_stacked",
    "stacking_speedup",
    "train_shampoo",
]


def median_time(fn: Callable[[], object], repeats: int = 5, warmup: int = 1) -> float:
    """Median wall time (s) of ``fn()`` over ``repeats`` runs after ``warmup`` untimed runs (CUDA synced)."""
    validate.integer("repeats", repeats, 1)
    validate.integer("warmup", warmup, 0)
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
    return {"method": kw.get("method", "ndb"), "iters": kw.get("iters", 10), "scaling": kw.get("scaling", "fro"),
            "eps": kw.get("eps", 0.0), "degree": kw.get("degree", 60)}


def solve_stacked(A: torch.Tensor, **kw) -> torch.Tensor:
    """One batched call over the whole (N, B, B) stack (DASH). Arguments as :func:`inverse_root` (p = 4);
    validation is not timed (it runs once in :func:`inverse_root`, so the loop and the stack pay the same)."""
    return solve_unchecked(A, 4, **_solver_args(kw))


def solve_loop(A: torch.Tensor, **kw) -> torch.Tensor:
    """A Python loop over blocks, one solver call per (1, B, B) block (Distributed Shampoo's layout)."""
    args = _solver_args(kw)
    return torch.cat([solve_unchecked(A[i : i + 1], 4, **args) for i in range(A.shape[0])])


def error_curve(kappa: float, method: str, scaling: str, iters: list[int], *, n: int = 4, size: int = 64,
                dtype: torch.dtype = torch.float32, seed: int = 0, device=None) -> list[float]:
    """Relative error (vs float64 EVD) of ``inverse_root(A, 4)`` for each iteration count, on logspace spectra."""
    validate.one_of("method", method, ("ndb", "cn"))
    validate.one_of("scaling", scaling, SCALINGS)
    A = spd_stack(n, size, kappa, seed=seed, dtype=dtype, device=resolve_device(device))
    ref = reference_root(A, 4)
    return [relative_error(inverse_root(A, 4, method=method, iters=k, scaling=scaling), ref) for k in iters]


def iterations_to_target(A: torch.Tensor, ref: torch.Tensor, method: str, target: float, *,
                         scaling: str = "fro", eps: float = 0.0, max_iters: int = 60) -> tuple[int, float]:
    """Smallest iteration count (degree for Chebyshev) whose error ≤ ``target``; (−1, best error) if none.

    Newton iterations are searched 1…max_iters; Chebyshev degrees in steps of 10 up to 10·max_iters/3.
    """
    validate.one_of("method", method, METHODS)
    validate.positive("target", target)
    if method == "evd":
        err = relative_error(inverse_root(A, 4, method="evd", eps=eps), ref)
        return (1 if err <= target else -1), err
    grid = range(10, 10 * max_iters // 3 + 1, 10) if method == "chebyshev" else range(1, max_iters + 1)
    best = math.inf
    for k in grid:
        err = relative_error(inverse_root(A, 4, method=method, iters=k, degree=k, scaling=scaling, eps=eps), ref)
        best = min(best, err)
        if err <= target:
            return k, err
    return -1, best


def stacking_speedup(method: str, n: int = 16, size: int = 64, *, iters: int = 10, scaling: str = "fro",
                     degree: int = 60, repeats: int = 5, kappa: float = 1e3, device=None) -> tuple[float, float]:
    """(loop seconds, stacked seconds), medians of warm repeats, float32, for one solver on an N×B×B stack."""
    validate.one_of("method", method, METHODS)
    A = spd_stack(n, size, kappa, dtype=torch.float32, device=resolve_device(device))
    kw = dict(method=method, iters=iters, scaling=scaling, degree=degree, eps=1e-6 if method != "ndb" else 0.0)
    loop = median_time(lambda: solve_loop(A, **kw), repeats)
    stacked = median_time(lambda: solve_stacked(A, **kw), repeats)
    return loop, stacked


# --------------------------------------------------------------------------------------- small training
def digits_problem(device=None, dtype: torch.dtype = torch.float32) -> tuple[torch.Tensor, torch.Tensor]:
    """sklearn's bundled 8×8 digits (1797 × 64), standardised; labels 0–9."""
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    X = torch.as_tensor(X, dtype=dtype)
    X = (X - X.mean(0)) / (X.std(0) + 1.0)
    return X.to(resolve_device(device)), torch.as_tensor(y).to(resolve_device(device))


class TrainRun(NamedTuple):
    """Minibatch training loss per step, the median ms of one ``optimizer.step()``, and a label for plots."""

    loss: list[float]
    ms_per_step: float
    label: str


def _mlp(hidden: int, gen: torch.Generator, device, dtype) -> list[torch.Tensor]:
    def init(rows, cols):
        return (torch.randn(rows, cols, generator=gen, dtype=dtype) / math.sqrt(cols)).to(device).requires_grad_()
    return [init(hidden, 64), torch.zeros(hidden, dtype=dtype, device=device, requires_grad=True),
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
    validate.one_of("optimizer", optimizer, ("shampoo", "adam"))
    validate.integer("steps", steps, 1)
    validate.integer("hidden", hidden, 1)
    validate.integer("batch", batch, 1)
    device = resolve_device(device)
    X, y = digits_problem(device)
    gen = seed_everything(seed)
    params = _mlp(hidden, gen, device, torch.float32)
    if optimizer == "adam":
        opt = torch.optim.Adam(params, lr=lr)
    else:
        eps = (1e-10 if method in ("evd", "chebyshev") else 0.0) if eps is None else eps
        opt = Shampoo(params, lr=lr, method=method, scaling=scaling, iters=iters, degree=degree, eps=eps,
                      block_size=block_size)
    losses, times = [], []
    for _ in range(steps):
        idx = torch.randint(0, X.shape[0], (batch,), generator=gen).to(device)
        h = X[idx]
        for W, b in zip(params[0:-2:2], params[1:-2:2], strict=True):
            h = torch.tanh(h @ W.T + b)
        loss = torch.nn.functional.cross_entropy(h @ params[-2].T + params[-1], y[idx])
        opt.zero_grad()
        loss.backward()
        t0 = time.perf_counter()
        opt.step()
        times.append(time.perf_counter() - t0)
        losses.append(loss.item())
    label = "Adam" if optimizer == "adam" else f"{method.upper()}-{scaling}" if method in ("ndb", "cn") \
        else method.upper()
    return TrainRun(losses, 1e3 * statistics.median(times), label)
