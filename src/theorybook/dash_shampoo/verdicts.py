"""Every row the DASH chapter shows, built here so that the chapter, the seed-robustness test and the ledger read
the same builders.

:func:`seeded_verdicts` builds the rows that depend on a random draw (the rotations of the SPD test stacks; the
held-out comparison's splits, initialisations and minibatches) for one seed; :func:`deterministic_verdicts`
builds the rows without randomness (operation counts, sympy, the Chebyshev coefficients). The chapter shows
both in one table (:func:`chapter_verdicts`, with ``seed = CHAPTER_SEEDS[0]``). Every tolerance is fixed below
with its provenance (``basis``); no row involves wall-clock time.

The headline (:data:`HELDOUT`): the paper says Newton–DB gives the lowest *validation* perplexity per iteration,
better even than EVD (README). We train the same small network with each solver on the same split, start and
minibatches, measure the held-out loss every 10 steps, and compare per step over :data:`HELDOUT` ``n_seeds``
paired seeds with a Student-t test.
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp
import torch

from .. import validate
from ..check import Control, PaperClaim, Planted, Verdicts
from ..device import one_thread, resolve_device, to_numpy
from ..fit import line_fit
from . import theory as th
from .experiment import HeldoutRun, heldout_comparison, solve_loop, solve_stacked
from .solvers import chebyshev_coefficients, inverse_root, reference_root, relative_error, scale, spd_stack

__all__ = ["CHAPTER_SEEDS", "COMPARISONS", "EPS_HEADLINE", "HELDOUT", "PAPER_ADVANTAGE", "PILOT_EPS", "PAPER_CLAIMS",
           "chapter_verdicts", "deterministic_verdicts",
           "heldout_results", "heldout_seeds", "heldout_stats", "heldout_verdicts", "operation_counts",
           "seeded_verdicts", "t_threshold"]

#: The seed(s) the chapter itself uses (the seed-robustness test draws unseen ones).
CHAPTER_SEEDS = (0,)

#: The held-out comparison behind the headline rows: a 64→64→64→10 tanh MLP on a random 1200/597 split of
#: sklearn's digits, Shampoo with block 64, Adam grafting, lr 1e-3 (the paper's), 10 Newton iterations and the
#: paper's ε per solver (0 for NDB and CN, 1e-10 for EVD), held-out cross-entropy every 10 of 80 steps,
#: ``n_seeds`` paired seeds per chapter seed.
HELDOUT = {"configs": (("ndb", "fro", 1e-4), ("cn", "fro", 1e-4), ("evd", "fro", 1e-4)), "n_seeds": 6,
           "steps": 80, "eval_every": 10, "lr": 1e-3, "hidden": 64, "batch": 128, "holdout": 597}
#: The damping of the headline rows (ε added to L and R before every root, the same for every solver).
EPS_HEADLINE = 1e-4
#: The comparisons the headline makes (method A's held-out loss over method B's), one row each.
COMPARISONS = (("NDB-fro ε=1e-04", "CN-fro ε=1e-04"), ("NDB-fro ε=1e-04", "EVD ε=1e-04"),
               ("EVD ε=1e-04", "CN-fro ε=1e-04"))
#: The pilot behind the headline rows (bench/dash_shampoo_eps.py, seeds 9001–9010, the same 80-step runs without
#: the three constant pixels): paired mean held-out loss ratio − 1 (%) and its standard error, at ε = 1e-4.
PILOT_EPS = {"NDB-CN": (0.006, 0.0008), "NDB-EVD": (1.43, 0.03), "EVD-CN": (-1.40, 0.03)}
#: The smallest advantage "lowest validation perplexity" is read as (our reading: the paper's numbers could not be
#: read): a held-out loss 1 % below the competitor's.
PAPER_ADVANTAGE = -1.0
#: False-alarm probability of the family of held-out rows (Bonferroni over :data:`COMPARISONS`).
ALPHA = 1e-3

PAPER_CLAIMS: tuple[PaperClaim, ...] = (
    PaperClaim("stacking", "Stacking same-size preconditioner blocks into 3D tensors (batched matmul) substantially "
               "improves GPU utilisation.", quoted_only=True,
               why="a GPU wall-clock claim; wall-clock time is never a verdict here, and the CPU timings of "
                   "bench/dash.py are shown as measurements, not tested", reason_class="paper-scale GPU"),
    PaperClaim("solvers", "Two new inverse-root solvers for Shampoo: the Newton–DB iteration and Chebyshev "
               "polynomial approximation evaluated with Clenshaw's algorithm."),
    PaperClaim("scaling", "The first in-depth analysis of how matrix scaling affects Shampoo's convergence "
               "(README: Frobenius-norm scaling is suboptimal and needs more iterations).", quoted_only=True,
               why="the paper's scaling analysis could not be read, and its claim is about Shampoo's convergence in "
                   "the paper's training runs (1024-blocks on GPUs). The chapter shows Frobenius against "
                   "multi-power-iteration error curves at its 64-blocks; a pilot (4 fp32 blocks, logspace spectra, "
                   "κ = 40 and 10³) needed the same NDB iterations to 1e-3 with both scalings at B = 64, and one "
                   "more with Frobenius at B = 256, where ‖A‖_F/(2λ_max) ≈ 2–3 — the direction the README states, "
                   "too small at these sizes for a test",
               reason_class="paper-scale GPU"),
    PaperClaim("speedup", "Up to 4.83× (v1) / 5.6× (v2) faster optimizer steps than Distributed Shampoo.",
               quoted_only=True,
               why="GPU step times (8×H100); the ratios are the README's 666/138 and 666/119 ms, quoted, "
                   "not re-measured", reason_class="paper-scale GPU"),
    PaperClaim("ndb_best", "Newton–DB gives the lowest validation perplexity per iteration of all solvers, better "
               "even than EVD.", where="abstract + README"),
)


def t_threshold(n: int, m: int = 1, alpha: float = ALPHA) -> float:
    """Two-sided Student-t threshold for a paired mean over ``n`` seeds (n − 1 degrees of freedom), Bonferroni
    over ``m`` rows: ``P(max |T_i| > t) ≤ alpha`` under the null of no difference."""
    from scipy.stats import t as student_t

    n = validate.integer("n", n, 2, 10_000)
    m = validate.integer("m", m, 1, 10_000)
    alpha = validate.number("alpha", alpha, 0.0, 1.0, low_open=True, high_open=True)
    return float(student_t.ppf(1.0 - alpha / (2.0 * m), n - 1))


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
    """Rows without randomness: product counts of our code, sympy facts, Chebyshev coefficient decay."""
    with one_thread():
        return _deterministic()


def _deterministic() -> Verdicts:
    v = Verdicts("DASH: counts and algebra", display=False)
    counts = operation_counts()
    v.equal("our NDB, p = 4, n = 10: products per root (flop counter) = the paper's 2(1 + 3(n−1))",
            round(counts["ndb"], 6), 2 * (1 + 3 * 9), kind="consistency", source="derived",
            note="our implementation against the authors' count (1 + 3(n−1) bmm per NDB call, two calls for "
                 "p = 4); an off-by-one iteration would change it by 6")
    v.equal("our CN, p = 4, n = 10: products per root (flop counter) = 4n", round(counts["cn"], 6), 4 * 10,
            kind="consistency", source="derived", note="DS's coupled Newton: 4 bmm per iteration for p = 4")
    v.equal("our Chebyshev, d = 60: products per root (flop counter) = d − 1", round(counts["chebyshev"], 6),
            60 - 1, kind="consistency", source="derived", note="Clenshaw's recursion needs d − 1 bmm")
    ndb, cn = th.derive_ndb_map(), th.derive_cn_map(4)
    v.equal("NDB scalar map: escape rate f′(0) of small eigenvalues", ndb["f_prime_0"], sp.Rational(9, 4),
            kind="consistency", source="derived", note="sympy; fixed points " + str(ndb["fixed_points"]))
    v.equal("CN scalar map: escape rate g′(0) = (5/4)⁴", cn["g_prime_0"], sp.Rational(625, 256),
            kind="consistency", source="derived", note="sympy")
    k = np.arange(50, 401)
    c = to_numpy(chebyshev_coefficients(4, 1e-3, 400)[0])
    slope = line_fit(k, np.log(np.abs(c[k])) + 0.75 * np.log(k))[0]
    v.close("Chebyshev coefficients of (x+a)^(−1/4), a = 1e-3: decay rate = −log ρ (Bernstein ellipse)", slope,
            -math.log(th.bernstein_rho(1e-3)), rtol=0.02, kind="consistency", source="derived",
            basis="model: the lower-order terms of the coefficient asymptotics curve the fit by < 1 % over "
                  "k = 50…400 (float64 DCT on 10⁴ nodes, round-off ≪ |c_400|); 2 % is twice that",
            note="checks the lemma behind the Chebyshev rows: the rate is set by the pole at t = −1 − 2a")
    return v


# ------------------------------------------------------------------------------------------ held-out headline
def heldout_seeds(seed: int, n_seeds: int | None = None) -> tuple[int, ...]:
    """The paired training seeds of one chapter/robustness seed: ``100·seed + k``, k < ``n_seeds`` (default
    :data:`HELDOUT`'s)."""
    seed = validate.integer("seed", seed, 0, 2**56)
    n_seeds = HELDOUT["n_seeds"] if n_seeds is None else validate.integer("n_seeds", n_seeds, 2, 100)
    return tuple(100 * seed + k for k in range(n_seeds))


def heldout_results(seed: int, device=None, *, n_seeds: int | None = None,
                    steps: int | None = None) -> dict[str, list[HeldoutRun]]:
    """The runs of :data:`HELDOUT` for ``seed``: ``{label: [run per paired seed]}`` (about 8 s on one core).
    ``n_seeds``/``steps`` override :data:`HELDOUT`'s (for cheap tests; the chapter uses the defaults)."""
    kw = {k: HELDOUT[k] for k in ("steps", "eval_every", "lr", "hidden", "batch", "holdout")}
    if steps is not None:
        kw["steps"] = validate.integer("steps", steps, 1, 100_000)
        kw["eval_every"] = min(kw["eval_every"], kw["steps"])
    return heldout_comparison(HELDOUT["configs"], heldout_seeds(seed, n_seeds), device=device, **kw)


def _check_heldout(heldout) -> dict[str, list[HeldoutRun]]:
    labels = {x for pair in COMPARISONS for x in pair}
    if not isinstance(heldout, dict) or not labels <= set(heldout):
        raise TypeError(f"Invalid heldout: {type(heldout).__name__} (must be the dict of heldout_results, with "
                        f"runs for {sorted(labels)})")
    sizes = {len(heldout[k]) if isinstance(heldout[k], list | tuple) else -1 for k in labels}
    if len(sizes) != 1 or min(sizes) < 2 or not all(isinstance(r, HeldoutRun) for k in labels for r in heldout[k]):
        raise ValueError("Invalid heldout: every solver needs the same number (≥ 2) of HeldoutRun, one per seed")
    return heldout


def heldout_stats(results: dict[str, list[HeldoutRun]], a: str, b: str) -> dict[str, object]:
    """Paired comparison of held-out loss per step: for each seed ``r = mean_t L_a(t)/L_b(t) − 1`` over the
    evaluation steps after step 0 (both start from the same weights); returns the per-seed ``r`` (%), their
    ``mean`` (%), standard error ``se`` (%) and Student ``t = mean/se``."""
    if not isinstance(results, dict):
        raise TypeError(f"Invalid results: {type(results).__name__} (must be the dict of heldout_results)")
    if a not in results or b not in results:
        raise ValueError(f"Invalid comparison {a!r} vs {b!r} (results have {sorted(results)})")
    ra, rb = results[a], results[b]
    if len(ra) != len(rb) or len(ra) < 2:
        raise ValueError(f"Invalid results: {len(ra)} and {len(rb)} runs (must be paired, ≥ 2 seeds)")
    r = np.array([100.0 * (np.mean(np.asarray(x.heldout[1:]) / np.asarray(y.heldout[1:])) - 1.0)
                  for x, y in zip(ra, rb, strict=True)])
    mean, se = float(r.mean()), float(r.std(ddof=1) / math.sqrt(len(r)))
    t = mean / se if se > 0 else (0.0 if mean == 0 else math.copysign(math.inf, mean))
    return {"r": r, "mean": mean, "se": se, "t": t, "n": len(r)}


def heldout_verdicts(results: dict[str, list[HeldoutRun]], *, claims: bool = False) -> Verdicts:
    """The headline rows from the runs of :func:`heldout_results` (ε = :data:`EPS_HEADLINE` for every solver).

    The directions were pre-registered on the pilot (:data:`PILOT_EPS`, seeds 9001–9010): at ε = 1e-4 NDB and CN
    train alike and NDB's held-out loss is higher than EVD's. Each ``differs`` row puts the paper's reading (NDB
    1 % lower, :data:`PAPER_ADVANTAGE`) through its test and plants that advantage in the measured curves."""
    results = _check_heldout(results)
    if not isinstance(claims, bool):
        raise TypeError(f"Invalid claims: {claims!r} (must be a bool)")
    v = Verdicts("DASH: held-out loss per step at ε = 1e-4, Newton–DB against coupled Newton and EVD",
                 display=False, claims=PAPER_CLAIMS if claims else ())
    a, b = COMPARISONS[0]
    n = len(results[a])
    steps = HELDOUT["steps"]

    def planted(x: str, y: str) -> float:
        """The same statistic with x's curves replaced by y's lowered 1 % (the paper's effect, planted)."""
        fake = [r._replace(heldout=[h * (1.0 + PAPER_ADVANTAGE / 100.0) for h in q.heldout])
                for r, q in zip(results[x], results[y], strict=True)]
        return heldout_stats({x: fake, y: results[y]}, x, y)["mean"]

    def shown(st, x, y) -> str:
        return (f"{x} vs {y}: {st['mean']:+.3f} ± {st['se']:.3f} % (per seed "
                f"{', '.join(f'{q:+.2f}' for q in st['r'])} %)")

    st = heldout_stats(results, a, b)
    m0, se0 = PILOT_EPS["NDB-CN"]
    v.greater(f"NDB vs CN at ε = 1e-4: held-out loss ratio − 1 (mean over {steps} steps and {n} paired seeds, %) "
              "— NDB not lower by half a percent", st["mean"], -0.5, kind="differs", source="paper",
              tests="ndb_best", paper=PAPER_ADVANTAGE, paper_shown="NDB lowest: −1 % (our reading of 'lowest')",
              planted=Planted("NDB's curves replaced by CN's lowered 1 %", planted(a, b),
                              effect="a 1 % lower held-out loss for NDB at every evaluation, on the same runs"),
              basis=f"pilot: seeds 9001–9010 gave {m0:+.2f} ± {se0:.3f} %; −0.5 % is > 100 standard errors below "
                    "it and half the planted effect",
              note=shown(st, a, b) + ". At ε = 1e-4 both roots are accurate and the two solvers train alike; the "
                   "difference of the ε = 0 runs (NDB worse by ≈ 6 %) is a property of the undamped roots (see the "
                   "ε scan)")
    a2, b2 = COMPARISONS[1]
    st2 = heldout_stats(results, a2, b2)
    m1, se1 = PILOT_EPS["NDB-EVD"]
    v.greater("NDB vs EVD at ε = 1e-4: held-out loss ratio − 1 (%) — NDB higher by more than half a percent",
              st2["mean"], 0.5, kind="differs", source="paper", tests="ndb_best", paper=PAPER_ADVANTAGE,
              paper_shown="NDB better even than EVD: −1 % (our reading)",
              planted=Planted("NDB's curves replaced by EVD's lowered 1 %", planted(a2, b2),
                              effect="a 1 % lower held-out loss for NDB than EVD, on the same runs"),
              basis=f"pilot: seeds 9001–9010 gave {m1:+.2f} ± {se1:.2f} %, direction pre-registered there; 0.5 % "
                    "is > 30 standard errors below it",
              note=shown(st2, a2, b2) + ". NDB's 10 iterations leave the damped small eigenvalues unconverged at "
                   "ε = 1e-4; at ε = 1e-2 the pilot finds the paper's order (NDB below EVD)")
    a3, b3 = COMPARISONS[2]
    st3 = heldout_stats(results, a3, b3)
    m2, se2 = PILOT_EPS["EVD-CN"]
    v.less("EVD vs CN at ε = 1e-4: held-out loss ratio − 1 (%) — the exact root trains better than CN's",
           st3["mean"], -0.5, kind="consistency", source="derived",
           basis=f"pilot: seeds 9001–9010 gave {m2:+.2f} ± {se2:.2f} %; −0.5 % is > 30 standard errors above it",
           note=shown(st3, a3, b3))
    return v


# ------------------------------------------------------------------------------------------------ solver rows
def _solver_rows(v: Verdicts, seed: int, device) -> None:
    """Solver rows: four fp32 blocks of size 64 with eigenvalues logspace(0, −log₁₀κ) and Haar rotations drawn
    from ``seed``, held to a float64 EVD."""
    A40 = spd_stack(4, 64, 40.0, seed=seed, dtype=torch.float32, device=device)
    A6 = spd_stack(4, 64, 1e6, seed=seed, dtype=torch.float32, device=device)
    lam6 = np.logspace(0, -6, 64)
    s6 = float(np.linalg.norm(lam6))  # ‖A‖_F depends only on the spectrum
    floor = ("model: the fp32 EVD floor ≈ 1e-6 at κ = 40 (the digest's prototype measured 6–8e-7 on 8 blocks of "
             "256); the bound is 10× above it")
    s40 = scale(A40, "fro")
    start = s40.rsqrt().sqrt() * torch.eye(64, dtype=A40.dtype, device=device)  # s: (N, 1, 1)
    e_cheb57 = _err(A40, method="chebyshev", degree=57, eps=1e-3, scaling="pim")
    v.less("κ = 40, NDB-fro, the paper's 10 iterations: relative error of A^(−1/4)",
           _err(A40, method="ndb", iters=10), 1e-5, kind="reproduces", source="paper", tests="solvers",
           basis=floor,
           control=[Control("Chebyshev, degree 57 (the same 56 matrix products), ε = 1e-3, pim scaling", e_cheb57,
                            why="the paper's other new solver at NDB's cost in matrix products: a sceptic asks "
                                "whether any polynomial in A with 56 products is as accurate, or the Newton "
                                "structure is what buys the digits",
                            tuned="degree matched to NDB's 2(1 + 3·9) = 56 products; ε = 1e-3, the damping at which "
                                  "the chapter's Chebyshev rows work (the paper's 1e-10 fails outright, a row below)"),
                    Control("the iteration's start s^(−1/4)·I (no iteration)",
                            relative_error(start, reference_root(A40, 4)),
                            why="the do-nothing method: the scaled identity NDB starts from",
                            tuned="none needed: no parameter", weak="fails by construction (0 iterations)")],
           note="Newton–DB, run twice (A^(1/2), then its inverse square root), computes the inverse 4th root")
    v.less("κ = 40, CN-fro (Distributed Shampoo's solver), 10 iterations: relative error",
           _err(A40, method="cn", iters=10), 1e-5, kind="consistency", source="derived", basis=floor,
           note="the baseline the held-out comparison uses is accurate on a benign spectrum too")
    esc = th.escape_iterations(lam6[-1] / s6, 9 / 4)
    e_ndb10 = _err(A6, method="ndb", iters=10)
    e_pim20 = _err(A6, method="ndb", iters=20, scaling="pim")
    pred10 = th.predicted_error(lam6, "ndb", 10, s6)
    v.greater("κ = 1e6, NDB-fro, 10 iterations do not converge: relative error", e_ndb10, 0.3,
              kind="consistency", source="derived",
              basis=f"model: the scalar map predicts {pred10:.2f} on this spectrum; 0.3 is below it by more than "
                    "the fp32 EVD floor ≈ 2e-3",
              control=Control("NDB-pim, 20 iterations", e_pim20),
              note=f"escape estimate log(s/λ_min)/log(9/4) = {esc:.1f} > 10 iterations: the smallest "
                   "eigen-directions (which carry most of ‖A^(−1/4)‖) have not left the plateau")
    v.close("κ = 1e6, NDB-fro, 10 iterations: matrix error = scalar map on the spectrum", e_ndb10, pred10,
            rtol=0.02, kind="consistency", source="derived",
            basis="model: a matrix polynomial acts on each eigenvalue; fp32 rounding (EVD floor ≈ 2e-3 at "
                  "κ = 1e6) is the only difference, < 1 % of an error ≥ 0.3",
            note="checks the lemma that explains the plateau")
    v.close("κ = 1e6, CN-fro, 15 iterations: matrix error = scalar map", _err(A6, method="cn", iters=15),
            th.predicted_error(lam6, "cn", 15, s6), rtol=0.02, kind="consistency", source="derived",
            basis="model: error ≥ 0.03 against a rounding floor ≈ 2e-3; they add in quadrature: < 0.3 %")
    v.less("κ = 1e6, NDB-pim, 20 iterations converge", e_pim20, 1e-2, kind="consistency", source="derived",
           basis="model: 5× the fp32 EVD floor ≈ 2e-3 at κ = 1e6",
           control=Control("NDB-fro, 10 iterations (the paper's count)", e_ndb10),
           note=f"≈ 20 iterations escape the plateau (estimate {esc:.1f} + a few quadratic steps)")
    e_cheb_bad = _err(A40, method="chebyshev", eps=1e-10, scaling="pim")
    e_cheb_ok = _err(A40, method="chebyshev", eps=1e-3, scaling="pim")
    v.greater("Chebyshev d = 60 with the paper's ε = 1e-10: relative error", e_cheb_bad, 0.05,
              kind="consistency", source="derived",
              basis="model: the lemma's degree for 1 % accuracy, log(100)/(2√(ε/s)) ≈ 3×10⁵ ≫ 60",
              control=Control("Chebyshev d = 60 with ε = 1e-3", e_cheb_ok))
    s40p = to_numpy(scale(A40, "pim")).reshape(-1)
    lam40 = np.logspace(0, -math.log10(40.0), 64)
    v.close("Chebyshev d = 60, ε = 1e-10: matrix error = scalar series on the spectrum", e_cheb_bad,
            th.chebyshev_predicted_error(lam40, s40p, 1e-10, 60), rtol=0.05, kind="consistency", source="derived",
            basis="model: the series evaluated on the eigenvalues in float64 (numpy chebval) with the same "
                  "per-block scales; fp32 Clenshaw rounding ≪ 5 % of an error ≥ 0.05")
    v.less("Chebyshev d = 60 with ε = 1e-3 (ε/λ_max ≳ 1e-3): relative error", e_cheb_ok, 1e-2,
           kind="consistency", source="derived",
           basis="model: with a = ε/s ≈ 5e-4 the coefficients fall like ρ^(−k), ρ ≈ 1.046: degree 60 gives "
                 "about two digits",
           control=Control("Chebyshev d = 60 with the paper's ε = 1e-10", e_cheb_bad))
    stacked, looped = solve_stacked(A40, method="ndb", iters=10), solve_loop(A40, method="ndb", iters=10)
    v.less("stacked (one batched call) = per-block loop, NDB-fro 10 iterations: relative difference",
           float((stacked - looped).double().norm() / looped.double().norm()), 1e-5, kind="consistency",
           source="derived", basis="model: the same arithmetic in another batch layout; fp32 kernels may round "
                                   "differently (≈ 1e-7 per product, 56 products)",
           note="DASH's layout changes the time, not the result")


def _seeded(seed: int, device=None, heldout: dict[str, list[HeldoutRun]] | None = None) -> Verdicts:
    v = Verdicts(f"DASH: seeded rows (seed {seed})", display=False)
    _solver_rows(v, seed, device)
    v.extend(heldout_verdicts(heldout if heldout is not None else heldout_results(seed, device)))
    return v


def seeded_verdicts(seed: int, device=None, heldout: dict[str, list[HeldoutRun]] | None = None) -> Verdicts:
    """Every row of the chapter that depends on a random draw, for one ``seed`` (about 9 s on one CPU core),
    computed with one intra-op thread on the CPU (small matrices: a second thread only adds hand-off cost).
    ``heldout`` passes the runs of :func:`heldout_results` already made for this seed."""
    seed = validate.integer("seed", seed, 0, 2**56)
    if heldout is not None:
        _check_heldout(heldout)
    device = resolve_device(device)
    with one_thread(device):
        return _seeded(seed, device, heldout)


def chapter_verdicts(seed: int, device=None, heldout: dict[str, list[HeldoutRun]] | None = None) -> Verdicts:
    """The chapter's table: the deterministic rows and the seeded rows of ``seed``, with :data:`PAPER_CLAIMS`."""
    v = Verdicts("DASH at CPU scale", claims=PAPER_CLAIMS)
    v.extend(deterministic_verdicts())
    v.extend(seeded_verdicts(seed, device, heldout))
    return v
