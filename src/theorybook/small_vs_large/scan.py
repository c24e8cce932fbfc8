"""The race as a regime scan, and full-batch GD against the data-set size (torch; our design, at CPU scale).

:func:`race_point` runs :func:`~.race.mlp_race` for several independent seed sets at one (parity dimension d, N)
and returns the per-seed **paired log speed-ups** ``log(steps_fresh / steps_regime)`` (same W₀, a₀ for every regime
of a seed): of the repeated set (the paper's effect), of a second fresh stream (the control: chance alone) and of the
repeated set at second-layer init ×4 (the mechanism's ablation). A run that misses the target within ``steps`` is
counted at ``steps + eval_every`` (a conservative clip, shown with the censored count).

:func:`paired_stats` turns them into a mean, a standard error and a z-score (CLT over independent seeds);
:func:`full_batch_race` times full-batch GD to a target test accuracy for several data-set sizes N (the scaled-down
form of the paper's (20, 6)-parity experiment, N = 2¹⁴ against 2²⁰).
"""

from __future__ import annotations

import math
from typing import Any

import torch

from ..device import resolve_device
from ..validate import integer, memory_guard, number
from .dynamics import _gen, _mlp_grads, _seed, _signs, single_threaded
from .race import mlp_race

__all__ = ["full_batch_race", "paired_stats", "race_point"]


def _clip_steps(x: torch.Tensor, cap: float) -> torch.Tensor:
    y = x.to(torch.float64).clone()
    y[y < 0] = cap
    return y


@single_threaded
def race_point(d: int, n_small: int, *, seed_sets: tuple[int, ...], seeds: int = 12, device: Any = None,
               **race_kw: Any) -> dict[str, Any]:
    """One point of the scan: ``len(seed_sets)`` independent races of ``seeds`` paired seeds each at (d, N).

    Returns per-seed paired log speed-ups (lists, seed sets concatenated) ``rep`` (repeated vs fresh, init ×1),
    ``ctrl`` (second fresh stream vs fresh, ×1), ``rep_x4`` and ``ctrl_x4`` (the same at init ×4), the per-set
    median-ratio speed-ups ``set_speedup`` and ``set_speedup_control``, and the censored count."""
    dd = integer("d", d, 2, 4096)
    n = integer("n_small", n_small, 1, 10**7)
    if not isinstance(seed_sets, (list, tuple)) or not seed_sets:
        raise TypeError(f"Invalid seed_sets: {seed_sets!r} (must be a non-empty tuple of seeds)")
    sets = tuple(_seed(s) for s in seed_sets)
    kw = {"k": 4, "width": 64, "batch": 64, "lr": 0.5, "steps": 1200, "scales": (1.0, 4.0), "eval_every": 10,
          "target": 0.9, "test_size": 1024, **race_kw}
    cap = float(kw["steps"] + kw["eval_every"])
    out: dict[str, Any] = {"rep": [], "ctrl": [], "rep_x4": [], "ctrl_x4": [], "set_speedup": [],
                           "set_speedup_control": [], "censored": 0, "steps_fresh_median": []}
    for s in sets:
        r = mlp_race(n, d=dd, seeds=seeds, seed=s, device=device, **kw)
        st = _clip_steps(r.steps_to_target, cap)  # (scale, regime, seed)
        lg = st.log()
        out["rep"] += (lg[0, 1] - lg[0, 0]).tolist()
        out["ctrl"] += (lg[0, 1] - lg[0, 2]).tolist()
        out["rep_x4"] += (lg[1, 1] - lg[1, 0]).tolist()
        out["ctrl_x4"] += (lg[1, 1] - lg[1, 2]).tolist()
        med = st.median(-1).values
        out["set_speedup"].append(float(med[0, 1] / med[0, 0]))
        out["set_speedup_control"].append(float(med[0, 1] / med[0, 2]))
        out["steps_fresh_median"].append(float(med[0, 1]))
        out["censored"] += int((r.steps_to_target < 0).sum())
    return out


def paired_stats(x: Any) -> dict[str, float]:
    """Mean, standard error (sample sd/√n) and z = mean/SE of per-seed paired log speed-ups; ``speedup`` = e^mean."""
    t = torch.as_tensor(x, dtype=torch.float64).reshape(-1)
    if t.numel() < 2 or not bool(torch.isfinite(t).all()):
        raise ValueError(f"Invalid x: {t.numel()} values (need ≥ 2 finite paired log speed-ups)")
    m = float(t.mean())
    se = float(t.std()) / math.sqrt(t.numel())
    return {"mean": m, "se": se, "z": m / se if se > 0 else (math.inf if m > 0 else 0.0), "speedup": math.exp(m),
            "n": int(t.numel())}


@single_threaded
def full_batch_race(ns: tuple[int, ...] = (512, 2048, 8192, 32768), *, d: int = 16, k: int = 4, width: int = 64,
                    lr: float = 0.5, steps: int = 1500, scale: float = 1.0, seeds: int = 3, seed: int = 0,
                    eval_every: int = 10, target: float = 0.9, test_size: int = 2048,
                    device: Any = None) -> dict[str, Any]:
    """Full-batch GD on ``N`` points of (d, k)-parity for each N of ``ns``: steps to ``target`` test accuracy per
    seed (−1: not within ``steps``). Every N starts from the same (W₀, a₀) per seed; each N has its own data set."""
    if not isinstance(ns, (list, tuple)) or not ns:
        raise TypeError(f"Invalid ns: {ns!r} (must be a non-empty tuple of data-set sizes)")
    nn = tuple(integer("ns", n, 1, 10**7) for n in ns)
    dd = integer("d", d, 2, 4096)
    kk = integer("k", k, 1, dd)
    m = integer("width", width, 1, 65_536)
    eta = number("lr", lr, 0.0, 100.0, low_open=True)
    T = integer("steps", steps, 1, 100_000)
    sc = number("scale", scale, 0.0, 1e3)
    S = integer("seeds", seeds, 1, 1000)
    s0 = _seed(seed)
    ev = integer("eval_every", eval_every, 1, T)
    tgt = number("target", target, 0.0, 1.0, low_open=True)
    nt = integer("test_size", test_size, 1, 10**6)
    dev = resolve_device(device)
    memory_guard(4.0 * S * (max(nn) * (dd + 3 * m) + nt * (dd + m)), lower="ns, seeds, width or test_size")
    gen = _gen(s0)
    f32 = torch.float32
    W0 = (torch.randn(S, m, dd, generator=gen) / math.sqrt(dd)).transpose(1, 2).contiguous()
    a0 = torch.randn(S, m, generator=gen) / math.sqrt(m) * sc
    Xt = _signs((nt, dd), gen, f32).to(dev)
    yt = Xt[:, :kk].prod(-1)
    out: dict[str, Any] = {"ns": list(nn), "steps": [], "final_acc": []}
    for n in nn:
        X = _signs((S * n, dd), gen, f32).reshape(S, n, dd).to(dev)
        y = X[..., :kk].prod(-1)
        XT = X.transpose(1, 2)
        W, a = W0.clone().to(dev), a0.clone().to(dev)
        hit = torch.full((S,), -1, dtype=torch.int64)
        acc = torch.zeros(S)
        for t in range(T + 1):
            if t % ev == 0:
                ft = torch.bmm(torch.relu(torch.einsum("nd,sdm->snm", Xt, W)), a[..., None]).squeeze(-1)
                acc = ((ft * yt) > 0).to(f32).mean(1).cpu()
                hit = torch.where((hit < 0) & (acc >= tgt), torch.full_like(hit, t), hit)
                if bool((hit >= 0).all()):
                    break
            if t == T:
                break
            ga, gW = _mlp_grads(X, XT, y, W, a)
            a = a - eta * ga
            W = W - eta * gW
        out["steps"].append(hit.tolist())
        out["final_acc"].append(acc.tolist())
    return out
