"""Exact Bayesian regret R_T by backward induction: a plain per-(n, h) numpy loop vs the batched torch pass.

    python bench/thompson_online.py              # T ∈ {100, 200, 400} × grid ∈ {801, 3201}, 3 repeats
    python bench/thompson_online.py --quick      # T ∈ {50, 100} × grid ∈ {401, 801}

Both sides solve the same model (chapter "Thompson Sampling is regularised greed"): V_{h−1}(·, n+1) is the
piecewise-linear interpolant on a uniform m-grid, its Gaussian expectation Σ_k c_k ψ̃(m − g_k, δ_n) is a
convolution, and V_h(m, n) = V_{h−1}(m, n) + r(x) + x·(E V_{h−1}(m + δ_n Z, n+1) − V_{h−1}(m, n)) for Thompson
sampling (x = Φ(m/s_n)) and the Bayes-optimal policy (the better of pull and stay). The numpy reference walks
(h, n) one row at a time with its own per-n kernel (numpy's pocketfft, exact kernel width per n); the torch pass
(`solve_bandit`) does all n of a step, both policies, in one batched FFT. Its caches are cleared before every
timed call, so both sides build their kernels each time. One thread each (numpy's FFT is single-threaded; torch
is set to 1 thread), warm, interleaved, medians over ``--repeats``; max |ΔR_T| over T and both policies.
Writes bench/results/thompson_online.json.
"""

from __future__ import annotations

import argparse
import json
import math
import pathlib
import statistics
import sys
import time

import numpy as np
import torch
from scipy.special import erfc

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from _machine import machine_info  # noqa: E402

from theorybook.device import to_numpy  # noqa: E402
from theorybook.thompson_online import dynamics  # noqa: E402
from theorybook.thompson_online.dynamics import solve_bandit  # noqa: E402

POLICIES = ("ts", "optimal")
ZMAX = 8.0


def _Phi(z):
    return 0.5 * erfc(-z / math.sqrt(2.0))


def _phi(z):
    return np.exp(-0.5 * z * z) / math.sqrt(2.0 * math.pi)


def reference(T: int, G: int, policy: str, v0: float = 1.0, v: float = 1.0) -> np.ndarray:
    """R_0 … R_T of one policy by a per-(h, n) loop in numpy (the model of `theorybook.thompson_online.dynamics`)."""
    half = 6.0 * math.sqrt(v0)
    dx = 2.0 * half / (G - 1)
    m = (np.arange(G) - (G - 1) // 2) * dx
    i0 = (G - 1) // 2
    n = np.arange(T + 2, dtype=np.float64)
    s = 1.0 / np.sqrt(1.0 / v0 + n / v)
    delta = np.sqrt(np.maximum(s[:-1] ** 2 - s[1:] ** 2, 0.0))
    kernels = []
    for k in range(T):
        w = min(G - 1, math.ceil(ZMAX * delta[k] / dx))
        L = 1 << (G + w).bit_length()
        u = np.abs(np.arange(-w, w + 1) * dx)
        kap = delta[k] * _phi(u / delta[k]) - u * _Phi(-u / delta[k])
        kpad = np.zeros(L)
        kpad[np.arange(-w, w + 1) % L] = kap
        kernels.append((L, np.fft.rfft(kpad)))
    z = m[None, :] / s[:T + 1, None]  # per-n arrays computed once, outside the loop
    e_pos = m * _Phi(z) + s[:T + 1, None] * _phi(z)
    x_ts = _Phi(z)
    V = np.zeros((T + 1, G))
    R = np.zeros(T + 1)
    for h in range(1, T + 1):
        for k in range(T - h + 1):
            F = V[k + 1]
            Fp = np.concatenate([F[:1], F, F[-1:]])
            c = (Fp[2:] - 2.0 * Fp[1:-1] + Fp[:-2]) / dx
            L, Kf = kernels[k]
            cont = F + np.fft.irfft(np.fft.rfft(c, L) * Kf, L)[:G]
            gain = cont - V[k]
            if policy == "ts":
                x = x_ts[k]
                V[k] = V[k] + e_pos[k] - x * m + x * gain
            else:
                V[k] = V[k] + e_pos[k] + np.minimum(gain - m, 0.0)
        R[h] = V[0, i0]
    return R


def ours(T: int, G: int) -> np.ndarray:
    dynamics._SOLVED.clear()
    dynamics._kernels.cache_clear()
    return to_numpy(solve_bandit(T, policies=POLICIES, grid=G, device="cpu").regret)


def reference_all(T: int, G: int) -> list[np.ndarray]:
    return [reference(T, G, p) for p in POLICIES]


def timed(fn, *args):
    t0 = time.perf_counter()
    out = fn(*args)
    return time.perf_counter() - t0, out


def parse(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="T ∈ {50, 100} × grid ∈ {401, 801}")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default=str(pathlib.Path(__file__).parent / "results" / "thompson_online.json"))
    return ap.parse_args(argv)


def main(argv=None) -> dict:
    args = parse(argv)
    torch.set_num_threads(1)
    Ts, grids = ((50, 100), (401, 801)) if args.quick else ((100, 200, 400), (801, 3201))
    info = machine_info()
    info["threads"] = "1 (torch.set_num_threads(1); numpy's pocketfft is single-threaded)"
    rows = []
    for G in grids:
        for T in Ts:
            ref = np.stack([reference(T, G, p) for p in POLICIES])  # warm both sides once
            tor = ours(T, G)
            t_ref, t_tor = [], []
            for _ in range(args.repeats):  # interleaved
                t_ref.append(timed(reference_all, T, G)[0])
                t_tor.append(timed(ours, T, G)[0])
            mr, mt = statistics.median(t_ref), statistics.median(t_tor)
            row = {"T": T, "grid": G, "policies": list(POLICIES), "numpy_loop_s": mr, "torch_batched_s": mt,
                   "speedup": mr / mt, "max_abs_dR": float(np.abs(ref - tor).max()),
                   "R_T": {p: float(tor[i, T]) for i, p in enumerate(POLICIES)}}
            rows.append(row)
            print(f"T = {T:4d}  grid = {G:5d}   numpy loop {mr * 1e3:9.1f} ms   torch batched {mt * 1e3:8.1f} ms   "
                  f"ratio {mr / mt:6.1f}×   max|ΔR| {row['max_abs_dR']:.1e}", flush=True)
    out = {"benchmark": "thompson_online backward induction", "machine": info, "repeats": args.repeats,
           "load_avg_end": [round(x, 2) for x in __import__("os").getloadavg()], "rows": rows}
    if not args.quick:
        pathlib.Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        pathlib.Path(args.out).write_text(json.dumps(out, indent=2) + "\n")
        print(f"wrote {args.out}")
    return out


if __name__ == "__main__":
    main()
