"""Every row the DASH chapter shows, built here so that the chapter, the seed-robustness test and the ledger read
the same builders.

:func:`seeded_verdicts` builds the rows that depend on a random draw (the rotations of the SPD test stacks; the
held-out comparison's splits, initialisations and minibatches) for one seed; :func:`deterministic_verdicts`
builds the rows without randomness (operation counts, sympy, the Chebyshev coefficients). The chapter shows
both in one table (:func:`chapter_verdicts`, with ``seed = CHAPTER_SEEDS[0]``). Every tolerance is fixed below
with its provenance (``basis``); no row involves wall-clock time.

The headline (:data:`HELDOUT`): the paper says Newton–DB attains the lowest *validation* perplexity per iteration
of all tested methods, better even than EVD (abstract, README). We train the same small network with each solver
on the same split, start and minibatches, measure the held-out loss every 10 steps, and compare per step over
:data:`HELDOUT` ``n_seeds`` paired seeds, at three dampings ε — each solver at the *same* effective damping:
Distributed Shampoo's EVD (ours too) adds ε twice, so EVD runs at ε/2 and computes (A + εI)^(−1/4), the root NDB
and CN compute at ε.
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp
import torch

from .. import validate
from ..check import Control, PaperClaim, Planted, Scan, Verdicts
from ..device import one_thread, resolve_device, to_numpy
from ..fit import line_fit
from . import theory as th
from .experiment import HeldoutRun, heldout_comparison, scaling_iterations, solve_loop, solve_stacked
from .solvers import (
    chebyshev_coefficients,
    evd_root,
    inverse_root,
    reference_root,
    relative_error,
    scale,
    spd_stack,
)

__all__ = ["CHAPTER_SEEDS", "COMPARISONS", "EVD_DAMPING", "HELDOUT", "LABELS", "PAPER_ADVANTAGE", "PAPER_CLAIMS",
           "PILOT_EPS", "SCALING", "chapter_verdicts", "deterministic_verdicts", "heldout_results", "heldout_seeds",
           "heldout_stats", "heldout_verdicts", "operation_counts", "scaling_prediction", "scaling_table",
           "seeded_verdicts", "t_threshold"]

#: The seed(s) the chapter itself uses (the seed-robustness test draws unseen ones).
CHAPTER_SEEDS = (0,)

#: The held-out comparison behind the headline rows: a 61→64→64→10 tanh MLP on a random 1200/597 split of
#: sklearn's digits (the three constant pixels dropped), Shampoo with block 64, Adam grafting, lr 1e-3 (the
#: paper's), 10 Newton iterations, held-out cross-entropy every 10 of 80 steps, ``n_seeds`` paired seeds per
#: chapter seed, at each damping of ``eps``: NDB-fro and CN-fro at ε, EVD at ε·:data:`EVD_DAMPING` (matched: the
#: same (A + εI)^(−1/4)). Light (1e-6: the iterative roots are not converged in 10 iterations), practical (1e-4)
#: and heavy (1e-2) damping.
HELDOUT = {"eps": (1e-6, 1e-4, 1e-2), "n_seeds": 4, "steps": 80, "eval_every": 10, "lr": 1e-3, "hidden": 64,
           "batch": 128, "holdout": 597}
#: EVD's ε relative to NDB's and CN's: our EVD, like Distributed Shampoo's, takes eigh(A + εI) and adds
#: ε − min(λ_min, 0) again, so its root is (A + 2εI)^(−1/4); at ε/2 it is (A + εI)^(−1/4) (a consistency row checks it).
EVD_DAMPING = 0.5
#: The solvers' labels in :func:`heldout_results`, and the comparisons the headline makes (method A's held-out loss
#: over method B's), one row each.
LABELS = ("NDB-fro", "CN-fro", "EVD")
COMPARISONS = (("NDB-fro", "CN-fro"), ("NDB-fro", "EVD"))
#: The pilot behind the headline rows (bench/dash_shampoo_eps.py, seeds 9001–9010, the same 80-step runs at matched
#: damping): paired mean held-out loss ratio − 1 (%) and its standard error, per comparison and ε.
PILOT_EPS: dict[str, dict[float, tuple[float, float]]] = {
    "NDB-CN": {1e-6: (3.34, 0.12), 1e-4: (0.006, 0.0008), 1e-2: (-1e-7, 5e-7)},
    "NDB-EVD": {1e-6: (3.08, 0.11), 1e-4: (0.006, 0.0008), 1e-2: (5e-7, 5e-7)},
}
#: The smallest advantage "lowest validation perplexity" is read as (our reading: the paper's numbers could not be
#: read): a held-out loss 1 % below the competitor's.
PAPER_ADVANTAGE = -1.0
#: False-alarm probability of the family of held-out rows (Bonferroni over :data:`COMPARISONS`).
ALPHA = 1e-3
#: The scaling row (the README: Frobenius-norm scaling needs more iterations): NDB iterations per call to a relative
#: error ``target`` of A^(−1/4), Frobenius against multi-power-iteration scaling, fp32, ``n`` block(s) of side
#: ``size`` with a flat spectrum linspace(1/κ, 1) (‖A‖_F ≈ λ_max·√(B/3)), the logspace(0, −log₁₀κ) spectrum of
#: the same κ and B as control; ``scan`` the block sizes shown; ``extra`` the threshold (iterations).
SCALING = {"size": 256, "kappa": 1e3, "target": 1e-3, "n": 1, "scan": (64, 128, 256), "extra": 2}

PAPER_CLAIMS: tuple[PaperClaim, ...] = (
    PaperClaim("stacking", "Stacking same-size preconditioner blocks into 3D tensors (batched matmul) substantially "
               "improves GPU utilisation.", quoted_only=True,
               why="a GPU wall-clock claim; wall-clock time is never a verdict here, and the CPU timings of "
                   "bench/dash.py are shown as measurements, not tested", reason_class="paper-scale GPU"),
    PaperClaim("solvers", "A new inverse-root solver for Shampoo: the Newton–DB iteration (the first of the "
               "abstract's two new solvers)."),
    PaperClaim("chebyshev", "The abstract's second new inverse-root solver: Chebyshev polynomial approximation "
               "evaluated with Clenshaw's algorithm.", quoted_only=True,
               why="the readable sources state no accuracy, degree-cost trade-off or training result for it (the "
                   "validation numbers could not be read, and the authors' run script comments Chebyshev out of "
                   "the final sweep), so any pass mark would be ours, not the paper's. The chapter measures it "
                   "against our lemma instead (consistency rows: at the run configuration's ε = 1e-10 and degree "
                   "60 it is far from the root, at ε = 1e-3 within 1 %), and as a control on the Newton–DB row "
                   "at NDB's 56 products",
               reason_class="paper text unread"),
    PaperClaim("scaling", "A first in-depth analysis of how matrix scaling critically affects Shampoo convergence; "
               "its conclusion in the README: Frobenius-norm scaling is suboptimal and needs more iterations."),
    PaperClaim("speedup", "Up to 4.83× (v1) / 5.6× (v2) faster optimizer steps than Distributed Shampoo.",
               quoted_only=True,
               why="GPU step times (8×H100); the ratios are the README's 666/138 and 666/119 ms, quoted, "
                   "not re-measured", reason_class="paper-scale GPU"),
    PaperClaim("ndb_best", "Newton–DB attains the lowest validation perplexity per iteration among all tested "
               "methods (README: better even than EVD).", headline=True),
)


def scaling_prediction(size: int, kappa: float, spectrum: str, target: float | None = None) -> dict[str, int]:
    """The scalar map's NDB iteration counts (:func:`.theory.predicted_error`, float64) to ``target`` on the spectrum
    of ``spd_stack(…, spectrum=spectrum)``, with s = ‖λ‖ (Frobenius) and s = 2λ_max (power iteration, λ̂_max = 1)."""
    size = validate.integer("size", size, 2, 1024)
    kappa = validate.number("kappa", kappa, 1.0, 1e8)
    validate.one_of("spectrum", spectrum, ("flat", "logspace"))
    target = SCALING["target"] if target is None else validate.number("target", target, 0.0, 1.0, low_open=True)
    lam = (np.linspace(1.0 / kappa, 1.0, size) if spectrum == "flat"
           else np.logspace(0.0, -math.log10(kappa), size))
    out = {}
    for sc, s in (("fro", float(np.linalg.norm(lam))), ("pim", 2.0)):
        out[sc] = next((k for k in range(1, 61) if th.predicted_error(lam, "ndb", k, s) <= target), 60)
    return out


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


def heldout_results(seed: int, device=None, *, n_seeds: int | None = None, steps: int | None = None,
                    eps: tuple[float, ...] | None = None) -> dict[float, dict[str, list[HeldoutRun]]]:
    """The runs of :data:`HELDOUT` for ``seed``: ``{ε: {label: [run per paired seed]}}`` with the labels of
    :data:`LABELS` — NDB-fro and CN-fro at ε, EVD at ε·:data:`EVD_DAMPING` (the same effective damping). About 7 s
    per ε on one core. ``n_seeds``/``steps``/``eps`` override :data:`HELDOUT`'s (for cheap tests; the chapter uses
    the defaults)."""
    kw = {k: HELDOUT[k] for k in ("steps", "eval_every", "lr", "hidden", "batch", "holdout")}
    if steps is not None:
        kw["steps"] = validate.integer("steps", steps, 1, 100_000)
        kw["eval_every"] = min(kw["eval_every"], kw["steps"])
    if eps is None:
        eps = HELDOUT["eps"]
    elif not isinstance(eps, tuple | list) or not eps:
        raise TypeError(f"Invalid eps: {eps!r} (must be a non-empty tuple of dampings > 0)")
    eps = tuple(validate.number("eps", e, 0.0, 1.0, low_open=True) for e in eps)
    seeds = heldout_seeds(seed, n_seeds)
    out = {}
    for e in eps:
        runs = heldout_comparison((("ndb", "fro", e), ("cn", "fro", e), ("evd", "fro", e * EVD_DAMPING)), seeds,
                                  device=device, **kw)
        out[e] = dict(zip(LABELS, runs.values(), strict=True))
    return out


def _check_heldout(heldout) -> dict[float, dict[str, list[HeldoutRun]]]:
    if not isinstance(heldout, dict) or not heldout:
        raise TypeError(f"Invalid heldout: {type(heldout).__name__} (must be the dict of heldout_results: "
                        "{ε: {label: runs}})")
    sizes = set()
    for e, runs in heldout.items():
        validate.number("ε (a key of heldout)", e, 0.0, 1.0, low_open=True)
        if not isinstance(runs, dict) or not set(LABELS) <= set(runs):
            raise TypeError(f"Invalid heldout[{e!r}]: must map each of {list(LABELS)} to its runs")
        for k in LABELS:
            if not isinstance(runs[k], list | tuple) or not all(isinstance(r, HeldoutRun) for r in runs[k]):
                raise ValueError(f"Invalid heldout[{e!r}][{k!r}]: must be a list of HeldoutRun, one per seed")
            sizes.add(len(runs[k]))
    if len(sizes) != 1 or min(sizes) < 2:
        raise ValueError("Invalid heldout: every solver at every ε needs the same number (≥ 2) of runs, one per seed")
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


def heldout_verdicts(results: dict[float, dict[str, list[HeldoutRun]]], *, claims: bool = False) -> Verdicts:
    """The headline rows from the runs of :func:`heldout_results`: NDB against CN and against EVD, each at the same
    effective damping, over the dampings of the scan.

    Each row's statistic is the *lowest* paired mean held-out loss ratio − 1 over the scan's dampings (NDB's best
    showing); its test, "NDB is not 0.5 % below the competitor at any damping", is what we measure instead of the
    paper's "NDB lowest". The paper's reading (NDB 1 % lower, :data:`PAPER_ADVANTAGE`) goes through the test, and so
    does the paper's effect planted in NDB's own arm: at every damping, NDB's curves replaced by the competitor's
    lowered 1 %. Thresholds and dampings were fixed on the pilot (:data:`PILOT_EPS`, seeds 9001–9010)."""
    results = _check_heldout(results)
    if not isinstance(claims, bool):
        raise TypeError(f"Invalid claims: {claims!r} (must be a bool)")
    v = Verdicts("DASH: held-out loss per step at matched damping, Newton–DB against coupled Newton and EVD",
                 display=False, claims=PAPER_CLAIMS if claims else ())
    eps = tuple(sorted(results))
    n = len(results[eps[0]][LABELS[0]])
    steps = HELDOUT["steps"]

    def planted(at: dict[str, list[HeldoutRun]], x: str, y: str) -> float:
        """The statistic with x's curves replaced by y's lowered 1 % (the paper's effect, in x's arm)."""
        fake = [r._replace(heldout=[h * (1.0 + PAPER_ADVANTAGE / 100.0) for h in q.heldout])
                for r, q in zip(at[x], at[y], strict=True)]
        return heldout_stats({x: fake, y: at[y]}, x, y)["mean"]

    def planted_ppl(at: dict[str, list[HeldoutRun]], x: str, y: str) -> float:
        """The statistic with x's curves replaced by y's perplexity lowered 1 % (y's loss − ln 1.01 nats)."""
        fake = [r._replace(heldout=[h - math.log1p(-PAPER_ADVANTAGE / 100.0) for h in q.heldout])
                for r, q in zip(at[x], at[y], strict=True)]
        return heldout_stats({x: fake, y: at[y]}, x, y)["mean"]

    names = {"CN-fro": "CN", "EVD": "EVD"}
    for a, b in COMPARISONS:
        st = {e: heldout_stats(results[e], a, b) for e in eps}
        means = tuple(st[e]["mean"] for e in eps)
        plant = min(planted(results[e], a, b) for e in eps)
        key = f"NDB-{names[b]}"
        pilot = PILOT_EPS.get(key, {})
        pilot_txt = "; ".join(f"ε = {e:g}: {m:+.2g} ± {se:.1g} %" for e, (m, se) in pilot.items())
        shown = "; ".join(f"ε = {e:g}: {st[e]['mean']:+.3f} ± {st[e]['se']:.3f} %" for e in eps)
        ppl = min(planted_ppl(results[e], a, b) for e in eps)
        v.greater(f"NDB vs {names[b]}, each at the same effective damping: the lowest over ε ∈ "
                  f"{{{', '.join(f'{e:g}' for e in eps)}}} of the held-out loss ratio − 1 (mean over {steps} steps "
                  f"and {n} paired seeds, %) — NDB not 0.5 % below {names[b]} at any damping",
                  min(means), -0.5, kind="differs", source="paper", tests="ndb_best", paper=PAPER_ADVANTAGE,
                  paper_shown=f"NDB lowest{' (better even than EVD)' if b == 'EVD' else ''}: −1 % (our reading of "
                              "'lowest')",
                  planted=Planted(f"at every ε, NDB's curves replaced by {names[b]}'s lowered 1 %", plant,
                                  effect=f"the paper's effect at our reading's size: a held-out loss 1 % below "
                                         f"{names[b]}'s at every evaluation, in NDB's arm, on the same runs"),
                  scan=Scan("ε (matched damping)", eps, means) if len(eps) >= 3 else None,
                  basis=f"pilot: seeds 9001–9010 gave {pilot_txt or 'see bench/results/dash_shampoo_eps.json'}; "
                        "−0.5 % is half the planted effect and many pilot standard errors below every pilot mean",
                  note=f"per ε, mean ± s.e.: {shown}. "
                       + ("EVD runs at ε/2: Distributed Shampoo's EVD adds ε twice, so its root is then "
                          "(A + εI)^(−1/4), like NDB's. " if b == "EVD" else "")
                       + "At light damping NDB's 10 iterations leave the small eigen-directions of the factors "
                         "unconverged and NDB trains worse; once the roots converge (ε ≥ 1e-4) the solvers compute "
                         "the same root and train alike. Resolution (sceptic's review): the −0.5 % threshold sees "
                         "an advantage of ≥ 0.5 % in held-out loss; the paper's unit is perplexity, and 1 % lower "
                         f"perplexity (loss − ln 1.01 nats) planted the same way gives {ppl:+.2f} % (caught at "
                         "these losses); an advantage under 0.5 % in loss would be missed")
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
    v.less("κ = 40: NDB-fro with the paper's 10 iterations computes A^(−1/4) to the fp32 floor (relative error)",
           _err(A40, method="ndb", iters=10), 1e-5, kind="not_specific", source="paper", tests="solvers",
           basis=floor,
           control=[Control("CN-fro (Distributed Shampoo's coupled Newton), the same 10 iterations",
                            _err(A40, method="cn", iters=10),
                            why="the solver the paper replaces: does NDB compute the root where DS's solver does "
                                "not?",
                            tuned="the paper's setting for both: 10 iterations, Frobenius scaling, ε = 0 (CN needs "
                                  "40 products to NDB's 56)"),
                    Control("Chebyshev, degree 57 (the same 56 matrix products), ε = 1e-3, pim scaling", e_cheb57,
                            why="the paper's other new solver at NDB's cost in matrix products: a sceptic asks "
                                "whether any polynomial in A with 56 products is as accurate, or the Newton "
                                "structure is what buys the digits",
                            tuned="degree matched to NDB's 2(1 + 3·9) = 56 products; ε = 1e-3, the damping at which "
                                  "the chapter's Chebyshev rows work (the paper's 1e-10 fails outright, a row below)"),
                    Control("the iteration's start s^(−1/4)·I (no iteration)",
                            relative_error(start, reference_root(A40, 4)),
                            why="the do-nothing method: the scaled identity NDB starts from",
                            tuned="none needed: no parameter", weak="fails by construction (0 iterations)")],
           note="Newton–DB, run twice (A^(1/2), then its inverse square root), computes the inverse 4th root. CN, the "
                "solver it replaces, does so too, in fewer products: the row shows NDB works, not that it beats CN")
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
    A64 = spd_stack(4, 64, 1e6, seed=seed, dtype=torch.float64, device=device)
    ref = reference_root(A64, 4, 1e-4)
    v.less("EVD at ε/2 computes (A + εI)^(−1/4), the root NDB and CN compute at ε (κ = 1e6, ε = 1e-4, float64): "
           "relative error", relative_error(evd_root(A64, 4, 0.5e-4), ref), 1e-9, kind="consistency",
           source="derived",
           basis="model: float64 eigh, eigenvalue error ≈ 1e-16·λ_max against ε = 1e-4: ≈ 1e-12 in the root; 1e-9 "
                 "leaves a factor 1000",
           control=Control("EVD at ε, as Distributed Shampoo configures it", relative_error(evd_root(A64, 4, 1e-4),
                                                                                           ref)),
           note="the damping convention behind the held-out rows: our EVD, like DS's, takes eigh(A + εI) and adds "
                "ε − min(λ_min, 0) again, so at ε it computes (A + 2εI)^(−1/4)")
    stacked, looped = solve_stacked(A40, method="ndb", iters=10), solve_loop(A40, method="ndb", iters=10)
    v.less("stacked (one batched call) = per-block loop, NDB-fro 10 iterations: relative difference",
           float((stacked - looped).double().norm() / looped.double().norm()), 1e-5, kind="consistency",
           source="derived", basis="model: the same arithmetic in another batch layout; fp32 kernels may round "
                                   "differently (≈ 1e-7 per product, 56 products)",
           note="DASH's layout changes the time, not the result")


def scaling_table(seed: int, device=None) -> dict[str, dict[int, dict[str, int]]]:
    """The counts behind the scaling row for ``seed``: ``{spectrum: {B: {"fro": k, "pim": k}}}`` for the flat and
    logspace spectra of :data:`SCALING` at each block size of its scan — Newton–DB iterations per call (fp32) to a
    relative error ``SCALING["target"]`` (:func:`.experiment.scaling_iterations`, each search started at the scalar
    map's count, :func:`scaling_prediction`). About 1.5 s on one core."""
    seed = validate.integer("seed", seed, 0, 2**56)
    device = resolve_device(device)
    out: dict[str, dict[int, dict[str, int]]] = {}
    with one_thread(device):
        for spectrum in ("flat", "logspace"):
            out[spectrum] = {}
            for b in SCALING["scan"]:
                k = scaling_iterations(b, SCALING["kappa"], spectrum, target=SCALING["target"], n=SCALING["n"],
                                       seed=seed, start=scaling_prediction(b, SCALING["kappa"], spectrum),
                                       device=device)
                if min(k.values()) < 0:
                    raise RuntimeError(f"NDB did not reach {SCALING['target']:g} in 60 iterations at B = {b} "
                                       f"({spectrum})")
                out[spectrum][b] = k
    return out


def _check_scaling(table) -> dict[str, dict[int, dict[str, int]]]:
    ok = isinstance(table, dict) and all(
        isinstance(table.get(sp_), dict) and all(
            isinstance(table[sp_].get(b), dict) and all(isinstance(table[sp_][b].get(sc), int) and
                                                        not isinstance(table[sp_][b].get(sc), bool)
                                                        for sc in ("fro", "pim"))
            for b in SCALING["scan"]) for sp_ in ("flat", "logspace"))
    if not ok:
        raise TypeError(f"Invalid scaling: {type(table).__name__} (must be the dict of scaling_table: "
                        "{spectrum: {B: {'fro': k, 'pim': k}}})")
    return table


def _scaling_row(v: Verdicts, table: dict[str, dict[int, dict[str, int]]]) -> None:
    """The README's scaling claim, where it can show: NDB iterations to 1e-3 with Frobenius against
    multi-power-iteration scaling on a flat spectrum (‖A‖_F ≫ λ_max), the logspace spectrum as control."""
    size, kappa = SCALING["size"], SCALING["kappa"]
    scan = tuple(table["flat"][b]["fro"] - table["flat"][b]["pim"] for b in SCALING["scan"])
    flat = table["flat"][size]["fro"] - table["flat"][size]["pim"]
    log = table["logspace"][size]["fro"] - table["logspace"][size]["pim"]
    lam_f, lam_l = np.linspace(1 / kappa, 1, size), np.logspace(0, -math.log10(kappa), size)
    ratio_f, ratio_l = (float(np.linalg.norm(x)) for x in (lam_f, lam_l))
    pf, pl = scaling_prediction(size, kappa, "flat"), scaling_prediction(size, kappa, "logspace")
    esc_f, esc_l = (math.log(r / 2) / math.log(9 / 4) for r in (ratio_f, ratio_l))
    v.greater(f"Frobenius scaling needs more NDB iterations where ‖A‖_F ≫ λ_max: extra iterations per call (fp32) "
              f"to a relative error {SCALING['target']:g} of A^(−1/4) over multi-power-iteration scaling, flat "
              f"spectrum linspace(1/κ, 1), κ = {kappa:g}, B = {size}", flat, SCALING["extra"], kind="reproduces",
              source="paper", tests="scaling", scan=Scan("B (flat spectrum)", SCALING["scan"], scan),
              control=Control(f"the logspace(0, −3) spectrum of the same κ and B = {size} "
                              f"(‖A‖_F/λ_max = {ratio_l:.2f} against the flat spectrum's {ratio_f:.2f})", log,
                              why="the sceptic's rival: Frobenius scaling costs the same iteration or so on any "
                                  "spectrum — a fixed overhead, not the over-estimate of λ_max the README blames "
                                  "(the logspace spectra of the pilot needed at most one more)",
                              tuned="same B, κ, target, fp32, seed and iteration search; only the spacing of the "
                                    "eigenvalues differs"),
              basis=f"model: the scalar maps need {pf['fro']} (fro) and {pf['pim']} (pim) iterations on the flat "
                    f"spectrum, {pl['fro']} and {pl['pim']} on the logspace one (escape: log(‖A‖_F/2λ_max)/log(9/4) "
                    f"= {esc_f:.1f} and {esc_l:.1f} "
                    "extra); the threshold 2 is the digest's pre-registered one, and pilot seeds 9001–9002 measured "
                    "these counts with ≥ 1.5× margin to the target at the count below",
              note="tests the README's sentence through the iterations of one inverse root, not Shampoo's training "
                   "convergence (the paper's analysis could not be read). ‖A‖_F/λ_max grows like √(B/3) on a flat "
                   "spectrum, so the Frobenius scale over-estimates the top eigenvalue and every eigenvalue starts "
                   "further from 1; a factor dominated by a few eigenvalues (‖A‖_F ≈ λ_max) hides the effect")


def _seeded(seed: int, device=None, heldout: dict[float, dict[str, list[HeldoutRun]]] | None = None,
            scaling: dict[str, dict[int, dict[str, int]]] | None = None) -> Verdicts:
    v = Verdicts(f"DASH: seeded rows (seed {seed})", display=False)
    _solver_rows(v, seed, device)
    _scaling_row(v, scaling if scaling is not None else scaling_table(seed, device))
    v.extend(heldout_verdicts(heldout if heldout is not None else heldout_results(seed, device)))
    return v


def seeded_verdicts(seed: int, device=None, heldout: dict[float, dict[str, list[HeldoutRun]]] | None = None,
                    scaling: dict[str, dict[int, dict[str, int]]] | None = None) -> Verdicts:
    """Every row of the chapter that depends on a random draw, for one ``seed`` (about 25 s on one CPU core),
    computed with one intra-op thread on the CPU (small matrices: a second thread only adds hand-off cost).
    ``heldout`` and ``scaling`` pass the runs of :func:`heldout_results` and the counts of :func:`scaling_table`
    already made for this seed."""
    seed = validate.integer("seed", seed, 0, 2**56)
    if heldout is not None:
        _check_heldout(heldout)
    if scaling is not None:
        _check_scaling(scaling)
    device = resolve_device(device)
    with one_thread(device):
        return _seeded(seed, device, heldout, scaling)


def chapter_verdicts(seed: int, device=None, heldout: dict[float, dict[str, list[HeldoutRun]]] | None = None,
                     scaling: dict[str, dict[int, dict[str, int]]] | None = None) -> Verdicts:
    """The chapter's table: the deterministic rows and the seeded rows of ``seed``, with :data:`PAPER_CLAIMS`."""
    v = Verdicts("DASH at CPU scale", claims=PAPER_CLAIMS)
    v.extend(deterministic_verdicts())
    v.extend(seeded_verdicts(seed, device, heldout, scaling))
    return v
