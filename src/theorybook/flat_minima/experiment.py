"""The chapter-scale study of claim 1: many independent instances, both ERMs, and one held-out measurement of the
population risk of the flat ERM, the sharp ERM and the flat minima SA-GD reaches (claim 1's witnesses and a
flat minimum from a generic start, for the chapter's illustration)."""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np
import torch

from ..device import one_thread, resolve_device, to_numpy
from ..validate import integer, memory_guard, number
from .dynamics import sa_gd
from .instance import HELDOUT_STREAM, HeldOut, _generator, _sharpness_raw, chapter_rho, heldout_risks

__all__ = ["HELDOUT_POINTS", "Claim1Study", "claim1_study"]

#: The points whose population risk is measured on the held-out draws, in the order of ``Claim1Study.heldout``.
HELDOUT_POINTS = ("flat ERM", "sharp ERM w = 0", "SA-GD from a random start", "SA-GD from 0", "the random start")


# -- claim 1 on many instances -------------------------------------------------------------------------------
class Claim1Study(NamedTuple):
    """Per-instance numbers (arrays of length ``instances``) and, on the first instance with an unseen coordinate,
    the held-out risks of :data:`HELDOUT_POINTS` and the SA-GD end points' ``F̂`` and ``S_ρ/S_ρ(0)``."""

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
    heldout: HeldOut  # F at HELDOUT_POINTS on that instance, measured on the same held-out draws
    mc_unseen: int  # #unseen of that instance
    sagd_empirical: np.ndarray  # F̂ at SA-GD's end points (random start, 0)
    sagd_sharpness: np.ndarray  # S_ρ(w_T)/S_ρ(0) at SA-GD's end points (random start, 0)
    steps: int  # SA-GD's steps


def claim1_study(d: int = 4096, n: int = 10, rho: float | None = None, c: float = 0.8, instances: int = 500,
                 seed: int = 0, mc_samples: int = 10_000, steps: int = 2**15, device: Any = None) -> Claim1Study:
    """Draw ``instances`` independent instances (in chunks, from one CPU generator) and measure ``F̂``, ``S_ρ``
    and ``F`` at both ERMs. On the first instance with an unseen coordinate, run SA-GD (η = 1, exact inner max,
    ``steps`` steps) from 0 and from a random start — ``c·ξ/‖ξ‖``, ``ξ ~ N(0, I_d)`` (generator seeded with
    ``(seed, HELDOUT_STREAM + 1)``), sign flipped to ≥ 0 on the seen coordinates, where SA-GD's exact inner max is
    implemented — and measure ``F`` of the flat ERM, the sharp ERM, both SA-GD end points and the random start on
    ``mc_samples`` held-out draws (:func:`~.instance.heldout_risks`, the same draws for all five)."""
    d = integer("d", d, 1)
    n = integer("n", n, 1)
    r = chapter_rho(d) if rho is None else number("rho", rho, 0.0, math.inf, low_open=True)
    cc = number("c", c, 0.0, 1.0)
    N = integer("instances", instances, 1)
    s = integer("seed", seed, 0)
    mcs = integer("mc_samples", mc_samples, 2)
    T = integer("steps", steps, 0, 2**20)
    memory_guard(9.0 * min(N, 64) * n * d + 64.0 * N, lower="d, n or instances")
    if d * r * r + cc * cc > 1.0 + 1e-12:
        raise ValueError(f"Invalid rho/c: d·ρ² + c² = {d * r * r + cc * cc:.4g} (must be ≤ 1 so that every flat "
                         "ERM lies in the unit ball)")
    dev = resolve_device(device)
    with one_thread(dev):  # many mid-sized ops: a second CPU thread only adds synchronisation
        return _claim1(d, n, r, cc, N, s, mcs, T, dev)


def _claim1(d: int, n: int, r: float, cc: float, N: int, s: int, mcs: int, T: int, dev: torch.device) -> Claim1Study:
    gen = _generator(s)
    out: dict[str, list[np.ndarray]] = {k: [] for k in ("unseen", "fe", "fs", "fp", "se", "sp", "ss", "sw", "ma")}
    first_flat = first_Z = None
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
            first_flat, first_k, first_Z = w[j], int(k[j]), Z[j]
    if first_flat is None:
        raise ValueError(f"Invalid seed: {s} — no instance has an unseen coordinate (choose another seed, a larger d "
                         "or a smaller n)")
    flat = first_flat.to("cpu")
    a = first_Z.to("cpu").mean(0)
    state = int(np.random.SeedSequence((s, HELDOUT_STREAM + 1)).generate_state(1, np.uint64)[0]) % (2**63 - 1)
    xi = torch.randn(d, generator=_generator(state), dtype=torch.float64)
    w0 = cc * xi / xi.norm()
    w0 = torch.where(a > 0, w0.abs(), w0)
    tr = sa_gd(first_Z.to("cpu"), torch.stack([w0, torch.zeros_like(w0)]), 1.0, r, T)
    ends = torch.as_tensor(tr.w, dtype=torch.float64)
    pts = torch.stack([flat, torch.zeros_like(flat), ends[0], ends[1], w0])
    held = heldout_risks(pts, mcs, s)
    s0 = float(a.max()) * r * r / 2  # S_ρ of the sharp ERM w = 0
    cat = {k: np.concatenate(v) for k, v in out.items()}
    return Claim1Study(d, n, r, cc, cat["unseen"].astype(np.int64), cat["fe"], cat["fs"], cat["fp"], cat["se"],
                       cat["sp"], cat["ss"], cat["sw"], cat["ma"], held, first_k, np.asarray(tr.empirical[:, -1]),
                       np.asarray(tr.sharpness[:, -1]) / s0, T)
