"""The DASH chapter's verdict rows, built here so that the seed-robustness test can re-run them.

:func:`seeded_verdicts` builds every row that depends on a random draw (the rotations of the SPD test stacks,
the training run's initialisation and minibatches) for one seed; :func:`deterministic_verdicts` builds the
rows that depend on no random draw (the paper's arithmetic, operation counts, sympy, the Chebyshev
coefficients). The chapter shows both, with ``seed = CHAPTER_SEEDS[0]``. Tolerances are fixed in the code
below, each from the error model in its row's note; no row involves wall-clock time.
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp
import torch

from .. import validate
from ..check import Verdicts
from ..device import one_thread, resolve_device, to_numpy
from ..fit import line_fit
from . import theory as th
from .experiment import solve_loop, solve_stacked, train_shampoo
from .solvers import chebyshev_coefficients, inverse_root, reference_root, relative_error, scale, spd_stack

__all__ = ["CHAPTER_SEEDS", "TRAIN", "deterministic_verdicts", "operation_counts", "seeded_verdicts"]

#: The seed(s) the chapter itself uses (the seed-robustness test draws unseen ones).
CHAPTER_SEEDS = (0,)
#: The training comparison behind the NDB-vs-CN row: a 64→64→64→10 tanh MLP on digits, block 64, lr 1e-3.
TRAIN = {"steps": 40, "lr": 1e-3, "hidden": 64, "batch": 128}


def _err(A: torch.Tensor, **kw) -> float:
    return relative_error(inverse_root(A, 4, **kw), reference_root(A, 4, kw.get("eps", 0.0)))


def operation_counts(n: int = 10, degree: int = 60, size: int = 32, blocks: int = 2) -> dict[str, float]:
    """Matrix products per inverse 4th root, measured with ``torch.utils.flop_counter`` on the actual solvers:
    the flops of batched products (``bmm``) on the (N, B, B) stack, divided by those of one B×B product per
    block (2B³). Frobenius scaling, so no power-iteration products; the Chebyshev coefficients (a float64 DCT
    done once per block, not a matrix product) are left out. Deterministic: counts do not depend on the data."""
    from torch.utils.flop_counter import FlopCounterMode

    n = validate.integer("n", n, 1, 100)
    degree = validate.integer("degree", degree, 2, 1000)
    size = validate.integer("size", size, 1, 256)
    blocks = validate.integer("blocks", blocks, 1, 64)
    A = spd_stack(blocks, size, 10.0, device="cpu")
    out = {}
    for name, kw in (("ndb", dict(method="ndb", iters=n)), ("cn", dict(method="cn", iters=n)),
                     ("chebyshev", dict(method="chebyshev", degree=degree, eps=1e-3))):
        counter = FlopCounterMode(display=False)
        with counter:
            inverse_root(A, 4, scaling="fro", **kw)
        flops = counter.get_flop_counts().get("Global", {})
        bmm = sum(f for op, f in flops.items() if "bmm" in str(op))
        out[name] = bmm / (2.0 * blocks * size**3)
    return out


def deterministic_verdicts() -> Verdicts:
    """Rows without randomness: the paper's ratios, product counts, sympy facts, Chebyshev coefficient decay."""
    with one_thread():
        return _deterministic()


def _deterministic() -> Verdicts:
    v = Verdicts("DASH: counts, algebra and the paper's arithmetic", display=False)
    ratios = th.paper_ratios()
    v.close("abstract v1 '4.83×' = README step times 666 / 138 ms", ratios["headline v1 (DS CN32 / DASH-LW CN16)"],
            4.83, rtol=1e-3, kind="consistency", source="paper",
            note="the paper's own numbers agree (rounding to 3 digits); a GPU ratio cannot be re-measured here")
    v.close("abstract v2 '5.6×' = README step times 666 / 119 ms", ratios["headline v2 (DS CN32 / DASH-GPU CN16)"],
            5.6, rtol=1e-2, kind="consistency", source="paper", note="rounded to 2 digits in the abstract")
    counts = operation_counts()
    v.equal("NDB, p = 4, n = 10: products per root (flop counter)", round(counts["ndb"], 6), 2 * (1 + 3 * 9),
            kind="reproduces", source="paper",
            note="paper: 1 + 3(n−1) bmm per NDB call, two calls for p = 4; measured by torch's flop counter")
    v.equal("CN, p = 4, n = 10: products per root (flop counter)", round(counts["cn"], 6), 4 * 10,
            kind="reproduces", source="paper", note="paper/DS: 4 bmm per iteration for p = 4")
    v.equal("Chebyshev, d = 60: products per root (flop counter)", round(counts["chebyshev"], 6), 60 - 1,
            kind="reproduces", source="paper", note="paper: Clenshaw needs d − 1 bmm")
    ndb, cn = th.derive_ndb_map(), th.derive_cn_map(4)
    v.equal("NDB scalar map: escape rate f′(0) of small eigenvalues", ndb["f_prime_0"], sp.Rational(9, 4),
            kind="consistency", source="derived", note="sympy; fixed points " + str(ndb["fixed_points"]))
    v.equal("CN scalar map: escape rate g′(0) = (5/4)⁴", cn["g_prime_0"], sp.Rational(625, 256),
            kind="consistency", source="derived", note="sympy")
    k = np.arange(50, 401)
    c = to_numpy(chebyshev_coefficients(4, 1e-3, 400)[0])
    slope = line_fit(k, np.log(np.abs(c[k])) + 0.75 * np.log(k))[0]
    v.close("Chebyshev coefficients of (x+a)^(−1/4), a = 1e-3: decay rate = −log ρ (Bernstein ellipse)", slope,
            -math.log(th.bernstein_rho(1e-3)), rtol=0.02, kind="reproduces", source="derived",
            note="fit of log|c_k| + (3/4) log k over k = 50…400 (float64 DCT on 10⁴ nodes) vs the pole at "
                 "t = −1−2a; the fit's curvature from lower-order terms is < 1 %")
    return v


def _seeded(seed: int, device=None) -> Verdicts:
    """The rows of :func:`seeded_verdicts` (about 1 s on one CPU core).

    Solver rows: four fp32 blocks of size 64 with eigenvalues logspace(0, −log₁₀κ) and Haar rotations drawn
    from ``seed``, held to a float64 EVD. Training row: NDB-fro and CN-fro (10 iterations, ε = 0, the paper's
    settings) on the MLP of :data:`TRAIN`, initialisation and minibatches drawn from ``seed``.
    """
    seed = validate.integer("seed", seed, 0, 2**63 - 1)
    device = resolve_device(device)
    v = Verdicts(f"DASH: seeded rows (seed {seed})", display=False)
    A40 = spd_stack(4, 64, 40.0, seed=seed, dtype=torch.float32, device=device)
    A6 = spd_stack(4, 64, 1e6, seed=seed, dtype=torch.float32, device=device)
    lam6 = np.logspace(0, -6, 64)
    s6 = float(np.linalg.norm(lam6))  # ‖A‖_F depends only on the spectrum
    floor = "fp32 EVD floor ≈ 1e-6 at κ = 40 (our prototype measured 6–8e-7); bound 10× above it"
    v.less("κ = 40, NDB-fro, the paper's 10 iterations: relative error", _err(A40, method="ndb", iters=10), 1e-5,
           kind="reproduces", source="paper", note=floor)
    v.less("κ = 40, CN-fro, 10 iterations: relative error", _err(A40, method="cn", iters=10), 1e-5,
           kind="reproduces", source="paper", note=floor)
    esc = th.escape_iterations(lam6[-1] / s6, 9 / 4)
    e_ndb10 = _err(A6, method="ndb", iters=10)
    v.greater("κ = 1e6, NDB-fro, 10 iterations do not converge: relative error", e_ndb10, 0.3,
              kind="reproduces", source="derived",
              note=f"escape estimate log(s/λ_min)/log(9/4) = {esc:.1f} > 10 iterations: the smallest "
                   "eigen-directions (which carry most of ‖A^(−1/4)‖) have not left the plateau")
    v.close("κ = 1e6, NDB-fro, 10 iterations: matrix error = scalar map on the spectrum", e_ndb10,
            th.predicted_error(lam6, "ndb", 10, s6), rtol=0.02, kind="consistency", source="derived",
            note="a matrix polynomial acts on each eigenvalue; fp32 rounding (EVD floor ≈ 2e-3 at κ = 1e6) is "
                 "the only difference, < 1 % of an error ≥ 0.3")
    v.close("κ = 1e6, CN-fro, 15 iterations: matrix error = scalar map", _err(A6, method="cn", iters=15),
            th.predicted_error(lam6, "cn", 15, s6), rtol=0.02, kind="consistency", source="derived",
            note="as above; error ≥ 0.03 against a rounding floor ≈ 2e-3 (they add in quadrature: < 0.3 %)")
    v.less("κ = 1e6, NDB-pim, 20 iterations converge", _err(A6, method="ndb", iters=20, scaling="pim"), 1e-2,
           kind="reproduces", source="derived",
           note=f"≈ 20 iterations escape the plateau (estimate {esc:.1f} + a few quadratic steps); bound 5× the "
                "fp32 EVD floor ≈ 2e-3 at κ = 1e6")
    e_cheb_bad = _err(A40, method="chebyshev", eps=1e-10, scaling="pim")
    v.greater("Chebyshev d = 60 with the paper's ε = 1e-10: relative error", e_cheb_bad, 0.05,
              kind="reproduces", source="derived",
              note="lemma: 1 % accuracy needs d ≈ log(100)/(2√(ε/s)) ≈ 3×10⁵ ≫ 60")
    s40 = to_numpy(scale(A40, "pim")).reshape(-1)
    lam40 = np.logspace(0, -math.log10(40.0), 64)
    v.close("Chebyshev d = 60, ε = 1e-10: matrix error = scalar series on the spectrum", e_cheb_bad,
            th.chebyshev_predicted_error(lam40, s40, 1e-10, 60), rtol=0.05, kind="consistency", source="derived",
            note="the series evaluated on the eigenvalues in float64 (numpy chebval) with the same per-block "
                 "scales; fp32 Clenshaw rounding ≪ 5 % of an error ≥ 0.05")
    v.less("Chebyshev d = 60 with ε = 1e-3 (ε/λ_max ≳ 1e-3): relative error",
           _err(A40, method="chebyshev", eps=1e-3, scaling="pim"), 1e-2, kind="reproduces", source="derived",
           note="lemma: with a = ε/s ≈ 5e-4 the coefficients fall like ρ^(−k), ρ ≈ 1.046; degree 60 gives "
                "about two digits")
    stacked, looped = solve_stacked(A40, method="ndb", iters=10), solve_loop(A40, method="ndb", iters=10)
    v.less("stacked (one batched call) = per-block loop, NDB-fro 10 iterations: relative difference",
           float((stacked - looped).double().norm() / looped.double().norm()), 1e-5, kind="consistency",
           source="derived", note="the same arithmetic in another batch layout; fp32 kernels may round differently "
                                  "(≈ 1e-7 per product)")
    runs = {m: train_shampoo(m, "fro", seed=seed, device=device, **TRAIN) for m in ("ndb", "cn")}
    final = {m: float(np.mean(r.loss[-20:])) for m, r in runs.items()}
    v.greater(f"train loss NDB-fro ÷ CN-fro after {TRAIN['steps']} steps (mean of last 20)",
              final["ndb"] / final["cn"] if final["cn"] > 0 else math.nan, 1.0, kind="differs", source="paper",
              paper="NDB gives the lowest validation perplexity per iteration (README), i.e. ratio ≤ 1",
              note="one-sided, fixed before measuring: here NDB is *worse* per iteration (ratio > 1). Scalar maps "
                   "explain it: at 10 iterations CN escapes at 625/256 per step from 2.5λ/s, NDB at 9/4 from λ/s")
    return v


def seeded_verdicts(seed: int, device=None) -> Verdicts:
    """Every row of the chapter that depends on a random draw, for one ``seed``, computed with one intra-op
    thread on the CPU (small matrices: a second thread only adds hand-off cost, and on a loaded machine
    OpenMP threads waiting for each other slow small ops down by orders of magnitude)."""
    seed = validate.integer("seed", seed, 0, 2**63 - 1)
    device = resolve_device(device)
    with one_thread(device):
        return _seeded(seed, device)
