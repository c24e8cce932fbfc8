"""The headline experiment: a two-layer ReLU MLP on sparse parity, a small repeated data set against fresh samples
at equal compute, timed to a target test accuracy (torch; our design, at CPU scale).

``f(x) = Σ_j a_j ReLU(w_jᵀx)`` on ``(d, k)``-sparse parity ``y = x₁⋯x_k``, logistic loss, SGD with batch ``B``
and learning rate ``η`` for both layers. Every model of a seed starts from the same ``(W₀, a₀)``; the three
*regimes* differ only in where their mini-batches come from:

* ``"repeated"`` — a fixed set of ``N`` points, each mini-batch drawn from it with replacement (many epochs);
* ``"fresh"`` — ``B`` new points every step (``T·B`` distinct points: the same compute);
* ``"fresh-control"`` — a second, independent fresh stream: what "repeated beats fresh" must not be
  distinguishable from if the repetition does nothing.

Each regime runs at every second-layer init scale (``a₀ × scale``, same direction): the layer-wise-schedule
explanation says the repeated set wins because its sampling bias grows ``‖a‖`` early, so a second layer that
starts large (the [secondary] intervention) should leave nothing to win.

The test accuracy (on ``test_size`` fresh points, the population proxy) is measured every ``eval_every`` steps;
``steps_to_target`` is the first such step with accuracy ≥ ``target`` (−1: not within ``steps``).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import torch

from ..device import resolve_device
from ..validate import integer, memory_guard, number
from .dynamics import _gen, _mlp_grads, _seed, _signs, single_threaded

__all__ = ["REGIMES", "RaceRun", "mlp_race", "speedup"]

REGIMES = ("repeated", "fresh", "fresh-control")


class RaceRun(NamedTuple):
    """``steps_to_target[l, r, s]`` for init scale ``scales[l]``, regime ``REGIMES[r]``, seed ``s`` (−1: not
    reached); ``accuracy[l, r, s, e]`` and ``ratio[l, r, s, e]`` (``‖a‖₂/‖W‖_F``) at step ``eval_steps[e]``."""

    n_small: int
    scales: tuple[float, ...]
    eval_steps: torch.Tensor
    steps_to_target: torch.Tensor
    accuracy: torch.Tensor
    ratio: torch.Tensor
    target: float


@single_threaded
def mlp_race(n_small: int = 2048, *, d: int = 12, k: int = 3, width: int = 128, batch: int = 64, lr: float = 0.2,
             steps: int = 1200, scales: tuple[float, ...] = (1.0, 4.0), seeds: int = 12, seed: int = 0,
             eval_every: int = 20, target: float = 0.9, test_size: int = 1024, lr_a: tuple[float, ...] | None = None,
             reuse: int = 1, device: Any = None) -> RaceRun:
    """Train every (init scale, regime, seed) model in one batch and time each to ``target`` test accuracy.

    ``lr_a``: the second layer's learning-rate multiplier per entry of ``scales`` (default 1 for each), so
    ``scales=(1, 1), lr_a=(1, 4)`` races the default against a ×4 second-layer learning rate from the same draws.
    ``reuse``: each fresh mini-batch (both fresh streams) is used for ``reuse`` consecutive steps — batch reuse, the
    rival explanation the paper rules out; ``1`` (default) draws a new one every step (the same draws as before the
    option existed)."""
    n = integer("n_small", n_small, 1, 10**7)
    dd = integer("d", d, 1, 4096)
    kk = integer("k", k, 1, dd)
    m = integer("width", width, 1, 65_536)
    B = integer("batch", batch, 1, 65_536)
    eta = number("lr", lr, 0.0, 100.0, low_open=True)
    T = integer("steps", steps, 1, 100_000)
    if not isinstance(scales, (list, tuple)) or not scales:
        raise TypeError(f"Invalid scales: {scales!r} (must be a non-empty tuple of numbers)")
    sc = tuple(number("scales", c, 0.0, 1e3) for c in scales)
    if lr_a is None:
        la = (1.0,) * len(sc)
    elif not isinstance(lr_a, (list, tuple)) or len(lr_a) != len(sc):
        raise TypeError(f"Invalid lr_a: {lr_a!r} (must be a tuple as long as scales, {len(sc)})")
    else:
        la = tuple(number("lr_a", c, 0.0, 1e3, low_open=True) for c in lr_a)
    S = integer("seeds", seeds, 1, 1000)
    s0 = _seed(seed)
    ev = integer("eval_every", eval_every, 1, T)
    tgt = number("target", target, 0.0, 1.0, low_open=True)
    nt = integer("test_size", test_size, 1, 10**6)
    ru = integer("reuse", reuse, 1, T)
    dev = resolve_device(device)
    L, R = len(sc), len(REGIMES)
    K = L * R * S
    memory_guard(4.0 * (K * (3 * m * dd + 4 * B * m) + S * n * dd + nt * (dd + K * m) + 2 * K * (T // ev + 1)),
                 lower="n_small, seeds, width, batch or test_size")
    gen = _gen(s0)
    f32 = torch.float32
    W0 = torch.randn(S, m, dd, generator=gen) / math.sqrt(dd)
    a0 = torch.randn(S, m, generator=gen) / math.sqrt(m)
    # model order (scale, regime, seed): index = (l·R + r)·S + s
    W = W0.transpose(1, 2).repeat(L * R, 1, 1).contiguous().to(dev)  # stored as Wᵀ: (K, d, m)
    a = torch.cat([a0.repeat(R, 1) * c for c in sc]).to(dev)
    mult_a = torch.tensor([c for c in la for _ in range(R * S)], dtype=f32, device=dev)[:, None]
    data = _signs((S * n, dd), gen, f32).reshape(S, n, dd)
    Xt = _signs((nt, dd), gen, f32).to(dev)
    yt = Xt[:, :kk].prod(-1)
    n_eval = T // ev + 1
    eval_steps = torch.arange(n_eval) * ev
    acc = torch.empty(K, n_eval, dtype=f32, device=dev)
    ratio = torch.empty(K, n_eval, dtype=f32, device=dev)

    def measure(e: int) -> None:
        ft = torch.bmm(torch.relu(torch.einsum("nd,kdm->knm", Xt, W)), a[..., None]).squeeze(-1)
        acc[:, e] = ((ft * yt) > 0).to(f32).mean(1)
        ratio[:, e] = a.norm(dim=1) / W.flatten(1).norm(dim=1)

    measure(0)
    ar = torch.arange(S)[:, None]
    for t in range(T):
        rep = data[ar, torch.randint(0, n, (S, B), generator=gen)]  # (S, B, d)
        if t % ru == 0:
            fr = _signs((2 * S * B, dd), gen, f32).reshape(2, S, B, dd)
        X = torch.cat([rep[None], fr]).reshape(1, R * S, B, dd).expand(L, R * S, B, dd).reshape(K, B, dd).to(dev)
        y = X[..., :kk].prod(-1)
        grad_a, grad_W = _mlp_grads(X, X.transpose(1, 2), y, W, a)
        a = a - eta * mult_a * grad_a
        W = W - eta * grad_W
        if (t + 1) % ev == 0:
            measure((t + 1) // ev)
    if not bool(torch.isfinite(ratio).all()):
        raise ValueError(f"Invalid lr: {eta:g} (training diverged to non-finite weights; lower lr or the scales)")
    hit = acc >= tgt
    first = torch.where(hit.any(1), hit.to(torch.int8).argmax(1), -1).cpu()
    steps_to = torch.where(first >= 0, eval_steps[first.clamp_min(0)], torch.full_like(first, -1))
    shape = (L, R, S)
    return RaceRun(n, sc, eval_steps, steps_to.reshape(shape), acc.reshape(*shape, n_eval),
                   ratio.reshape(*shape, n_eval), tgt)


def _median_censored(x: torch.Tensor) -> float:
    """Median with −1 (not reached) ranked above everything (exact while fewer than half are censored)."""
    y = x.to(torch.float64).clone()
    y[y < 0] = math.inf
    return float(y.median())


def speedup(run: RaceRun, scale_index: int = 0, regime: str = "repeated") -> float:
    """``median steps of 'fresh' / median steps of regime`` at one init scale (> 1: the regime is faster). Runs
    that miss the target rank above every finished run; NaN when half or more of both miss it."""
    if not isinstance(run, RaceRun):
        raise TypeError(f"Invalid run: {type(run).__name__} (must be a RaceRun)")
    li = integer("scale_index", scale_index, 0, len(run.scales) - 1)
    if regime not in REGIMES:
        raise ValueError(f"Invalid regime: {regime!r} (must be one of {REGIMES})")
    ref = _median_censored(run.steps_to_target[li, 1])
    other = _median_censored(run.steps_to_target[li, REGIMES.index(regime)])
    if math.isinf(ref) and math.isinf(other):
        return math.nan
    return ref / other
