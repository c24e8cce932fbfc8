"""The chapter-scale study of claim 1: many independent instances, both ERMs, one Monte Carlo."""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np
import torch

from ..device import one_thread, resolve_device, to_numpy
from ..validate import integer, memory_guard, number
from .instance import MonteCarlo, _generator, _sharpness_raw, chapter_rho, population_risk_mc

__all__ = ["Claim1Study", "claim1_study"]


# -- claim 1 on many instances -------------------------------------------------------------------------------
class Claim1Study(NamedTuple):
    """Per-instance numbers (arrays of length ``instances``) and the one Monte-Carlo check."""

    d: int
    n: int
    rho: float
    c: float
    unseen: np.ndarray  # #unseen per instance
    flat_emp: np.ndarray  # F̂ at the flat ERM — only the instances with an unseen coordinate (unseen > 0)
    flat_sharp: np.ndarray  # S_ρ at the flat ERM (same instances)
    flat_pop: np.ndarray  # F at the flat ERM (closed form ½Σφ; same instances)
    sharp_emp: np.ndarray  # F̂(0)
    sharp_pop: np.ndarray  # F(0)
    sharp_sharp: np.ndarray  # S_ρ(0) (closed form)
    sharp_witness: np.ndarray  # F̂(−ρ e_{i*}) evaluated from the samples (a witness of S_ρ(0))
    max_a: np.ndarray
    mc: MonteCarlo  # F of the first instance's flat ERM by Monte Carlo
    mc_unseen: int  # #unseen of that instance
    mc_sharp: MonteCarlo  # F of the sharp ERM w = 0 by the same Monte Carlo (claim 1's control)


def claim1_study(d: int = 4096, n: int = 10, rho: float | None = None, c: float = 0.8, instances: int = 500,
                 seed: int = 0, mc_samples: int = 10_000, device: Any = None) -> Claim1Study:
    """Draw ``instances`` independent instances (in chunks, from one CPU generator) and measure ``F̂``, ``S_ρ``
    and ``F`` at both ERMs; estimate ``F`` of the first usable flat ERM by Monte Carlo."""
    d = integer("d", d, 1)
    n = integer("n", n, 1)
    r = chapter_rho(d) if rho is None else number("rho", rho, 0.0, math.inf, low_open=True)
    cc = number("c", c, 0.0, 1.0)
    N = integer("instances", instances, 1)
    s = integer("seed", seed, 0)
    mcs = integer("mc_samples", mc_samples, 2)
    memory_guard(9.0 * min(N, 64) * n * d + 64.0 * N, lower="d, n or instances")
    if d * r * r + cc * cc > 1.0 + 1e-12:
        raise ValueError(f"Invalid rho/c: d·ρ² + c² = {d * r * r + cc * cc:.4g} (must be ≤ 1 so that every flat "
                         "ERM lies in the unit ball)")
    dev = resolve_device(device)
    with one_thread(dev):  # many mid-sized ops: a second CPU thread only adds synchronisation
        return _claim1(d, n, r, cc, N, s, mcs, dev)


def _claim1(d: int, n: int, r: float, cc: float, N: int, s: int, mcs: int, dev: torch.device) -> Claim1Study:
    gen = _generator(s)
    out: dict[str, list[np.ndarray]] = {k: [] for k in ("unseen", "fe", "fs", "fp", "se", "sp", "ss", "sw", "ma")}
    first_flat = None
    first_k = 0
    for start in range(0, N, 64):
        b = min(64, N - start)
        Z = torch.randint(0, 2, (b, n, d), generator=gen, dtype=torch.uint8).to(dev, torch.float64)
        a = Z.mean(-2)
        seen = a > 0
        k = (~seen).sum(-1)
        ok = k > 0
        w = torch.where(seen, torch.full_like(a, r), -cc / torch.sqrt(k.clamp(min=1).to(a.dtype)).unsqueeze(-1))
        zero = torch.zeros_like(a)
        witness = zero.scatter(-1, a.argmax(-1, keepdim=True), -r)  # −ρ e_{i*}, a maximiser of F̂(0 + v)
        # F̂ at the three points, sample by sample: (b, n, d) @ (b, d, 3) → (b, n, 3), mean over the n samples
        pts = torch.stack([w, zero, witness], -1)
        emp = (Z @ (0.5 * torch.clamp(pts, max=0.0) ** 2)).mean(-2)
        fe, fs, fp = emp[:, 0], _sharpness_raw(w, a, r), 0.5 * (0.5 * torch.clamp(w, max=0.0) ** 2).sum(-1)
        out["fe"].append(to_numpy(fe[ok]))
        out["fs"].append(to_numpy(fs[ok]))
        out["fp"].append(to_numpy(fp[ok]))
        out["se"].append(to_numpy(emp[:, 1]))
        out["sp"].append(to_numpy(0.5 * (0.5 * torch.clamp(zero, max=0.0) ** 2).sum(-1)))
        out["ss"].append(to_numpy(_sharpness_raw(zero, a, r)))
        out["sw"].append(to_numpy(emp[:, 2]))
        out["ma"].append(to_numpy(a.amax(-1)))
        out["unseen"].append(to_numpy(k))
        if first_flat is None and bool(ok.any()):
            j = int(torch.nonzero(ok)[0])
            first_flat, first_k = w[j], int(k[j])
    if first_flat is None:
        raise ValueError(f"Invalid seed: {s} — no instance has an unseen coordinate (choose another seed, a larger d "
                         "or a smaller n)")
    mc = population_risk_mc(first_flat, mcs, s + 1)
    mc_sharp = population_risk_mc(torch.zeros_like(first_flat), mcs, s + 2)
    cat = {k: np.concatenate(v) for k, v in out.items()}
    return Claim1Study(d, n, r, cc, cat["unseen"].astype(np.int64), cat["fe"], cat["fs"], cat["fp"], cat["se"],
                       cat["sp"], cat["ss"], cat["sw"], cat["ma"], mc, first_k, mc_sharp)
