"""Robust-lottery LP benchmark: our dual-form LP (HiGHS) vs cvxpy on the same problem, and the vertex-form LP.

    python bench/robust_lotteries.py            # m ∈ {50, 200} × K ∈ {4, 16}; vertex form at K = 4
    python bench/robust_lotteries.py --full     # adds m = 800 (the issue's whole grid; minutes, GBs of LP)
    python bench/robust_lotteries.py --quick    # m ∈ {20, 50}, K = 4: a few seconds

Instances: K slices with margins ``M_k = tanh(u_k,i − u_k,j)`` for random utilities, w₀ = Dirichlet(1), ρ = 0.3.
For each (m, K) the methods run interleaved round-robin after one warm call each; medians over ``--repeats``.
The dual LP has m(2K + 2) + m + 1 variables and K·m² non-zeros; the vertex form has ≤ K!·m rows (K = 4 only).
cvxpy (the optional ``bench`` extra) is skipped with a message when it is not installed. Writes
bench/results/robust_lotteries.json with |Δvalue| against the dual LP and the time ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import platform
import statistics
import time

import numpy as np

from theorybook.robust_lotteries import robust_lottery


def parse(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="m ∈ {20, 50}, K = 4")
    ap.add_argument("--full", action="store_true", help="also m = 800")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--rho", type=float, default=0.3)
    ap.add_argument("--out", default=str(pathlib.Path(__file__).parent / "results" / "robust_lotteries.json"))
    return ap.parse_args(argv)


def instance(K: int, m: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    u = rng.normal(size=(K, m))
    Ms = np.tanh(u[:, :, None] - u[:, None, :])
    return Ms, rng.dirichlet(np.ones(K))


def cvxpy_value(Ms: np.ndarray, w0: np.ndarray, rho: float):
    """The same robust LP written in cvxpy (dual form for each opponent), solved by cvxpy's default LP solver."""
    import cvxpy as cp

    K, m, _ = Ms.shape
    p, t = cp.Variable(m, nonneg=True), cp.Variable()
    a, nu = cp.Variable(m), cp.Variable(m, nonneg=True)
    lam, mu = cp.Variable((K, m), nonneg=True), cp.Variable((K, m), nonneg=True)
    C = cp.vstack([Ms[k].T @ p for k in range(K)])  # (K, m): c_kj = (M_kᵀ p)_j
    cons = [cp.sum(p) == 1, lam + mu == cp.vstack([nu] * K),
            cp.vstack([a] * K) - lam + mu <= C,
            t <= a + w0 @ (mu - lam) - 2 * rho * nu]
    prob = cp.Problem(cp.Maximize(t), cons)
    prob.solve()
    return float(prob.value)


def main(argv=None) -> dict:
    args = parse(argv)
    ms = (20, 50) if args.quick else (50, 200, 800) if args.full else (50, 200)
    Ks = (4,) if args.quick else (4, 16)
    try:
        import cvxpy  # noqa: F401

        have_cvxpy = True
    except ImportError:
        have_cvxpy = False
        print("cvxpy not installed (optional `bench` extra): its column is skipped")
    rows = []
    for K in Ks:
        for m in ms:
            Ms, w0 = instance(K, m)
            methods = {"dual (HiGHS)": lambda Ms=Ms, w0=w0: robust_lottery(Ms, w0, args.rho).value}
            if K <= 4:
                methods["vertex (HiGHS)"] = lambda Ms=Ms, w0=w0: robust_lottery(Ms, w0, args.rho, form="vertex").value
            if have_cvxpy:
                methods["cvxpy"] = lambda Ms=Ms, w0=w0: cvxpy_value(Ms, w0, args.rho)
            values = {name: f() for name, f in methods.items()}  # warm call
            times: dict[str, list[float]] = {name: [] for name in methods}
            for _ in range(args.repeats):
                for name, f in methods.items():
                    t0 = time.perf_counter()
                    f()
                    times[name].append(time.perf_counter() - t0)
            med = {name: statistics.median(v) for name, v in times.items()}
            base = values["dual (HiGHS)"]
            row = {"m": m, "K": K, "median_s": med, "value": values,
                   "abs_dvalue_vs_dual": {n: abs(v - base) for n, v in values.items()},
                   "time_ratio_vs_dual": {n: med[n] / med["dual (HiGHS)"] for n in med}}
            rows.append(row)
            cells = (f"{n}: {med[n] * 1e3:9.1f} ms (|Δ| {row['abs_dvalue_vs_dual'][n]:.1e})" for n in med)
            print(f"m={m:4d} K={K:2d} " + "  ".join(cells))
    out = {"machine": {"platform": platform.platform(), "cpus": os.cpu_count(),
                       "loadavg": os.getloadavg() if hasattr(os, "getloadavg") else None},
           "rho": args.rho, "repeats": args.repeats, "rows": rows}
    path = pathlib.Path(args.out)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=1))
    return out


if __name__ == "__main__":
    main()
