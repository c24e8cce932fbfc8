"""A grid search whose range bounds itself: Grasp-style parameter-free SGD (our reconstruction of Zhao, Yan,
Attia, Koren, Zhang & Zhao, ICML 2026, arXiv 2604.16888). Only the paper's abstract and opening could be read: the
grid, the budget split and the scoring rule below are ours [reconstruction]; the tuned-SGD rate is standard.

Public API (arguments validated; bad input raises ``ValueError``/``TypeError`` naming parameter, value and range):

``anchor_step(loss0, grad0)`` — η̄ = 2F(x₀)/‖∇F(x₀)‖²; ``grasp_grid(T, eta_bar)`` — η̄·2^{−k}, k = 0…⌈log₂T⌉;
``target_rate(L, delta, sigma, T)``, ``sgd_step(L, delta, sigma, T)`` — the tuned-SGD rate and step [standard].
``robust_regression(sigma, c, ...)``/``problem_grid(sigmas, cs, ...)`` — the non-convex test problems (exact F, ∇F).
``run_sgd``, ``grasp``, ``oracle``, ``dog``, ``adagrad_norm``, ``unbiased_sq_norm`` — the methods.
``chapter_run(seed)``, ``seeded_verdicts(seed)``, ``deterministic_verdicts()`` — the chapter's experiment and rows.
Sympy derivations: :mod:`theorybook.grasp.theory`. Widget: :func:`theorybook.grasp.widgets.explorer`.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import NamedTuple

import torch

from ..check import Verdicts, z_threshold
from ..device import one_thread, to_numpy
from ..validate import integer
from .convex import (
    BASES,
    ChainQuadratic,
    ConvexGrasp,
    ConvexOracle,
    ConvexRun,
    ConvexStudy,
    chain_quadratic,
    convex_study,
    grasp_convex,
    loglog_slope,
    oracle_convex,
    run_convex,
)
from .experiment import (
    GraspResult,
    OracleResult,
    RobustRegression,
    SGDRun,
    _grad_norm,
    adagrad_norm,
    dog,
    exact_anchor,
    grasp,
    oracle,
    problem_grid,
    robust_regression,
    run_sgd,
    unbiased_sq_norm,
)
from .theory import (
    anchor_step,
    derive_self_bounding,
    derive_sgd_tuning,
    derive_ustat_bias,
    grasp_grid,
    grid_size,
    sgd_step,
    target_rate,
)

__all__ = [
    "GraspResult", "OracleResult", "RobustRegression", "SGDRun", "ChapterRun", "adagrad_norm", "anchor_step",
    "chapter_problem", "chapter_run", "deterministic_verdicts", "derive_self_bounding", "derive_sgd_tuning",
    "derive_ustat_bias", "dog", "exact_anchor", "grasp", "grasp_grid", "grid_size", "oracle", "peers",
    "problem_grid", "robust_regression", "run_sgd", "seeded_verdicts", "sgd_step", "smoothness_bound",
    "target_rate", "unbiased_sq_norm", "CHAPTER_SEEDS", "CS", "SIGMAS", "N_POOL", "DIM", "SEEDS", "T_VERDICT",
    "T_CURVE", "DEFAULT_ETA", "FUZZ_BASE", "BASES", "ChainQuadratic", "ConvexGrasp", "ConvexOracle", "ConvexRun",
    "ConvexStudy", "chain_quadratic", "convex_study", "chapter_convex", "grasp_convex", "loglog_slope",
    "oracle_convex", "run_convex", "CONVEX_D", "CONVEX_TS", "CONVEX_SLOPE_GAP",
]

# The chapter's scale (CPU; the seed-robustness test re-runs `seeded_verdicts` 20 times). GPU: raise N_POOL, SEEDS.
SIGMAS = (0.3, 3.0)
CS = (2.0**-10, 1.0, 2.0**10)  # ≈ 10⁻³, 1, 10³; powers of two so that c·f is exact in floating point
N_POOL = 2000
DIM = 20
SEEDS = 8
T_VERDICT = 2**10
T_CURVE = (2**8, 2**10, 2**12)
DEFAULT_ETA = 0.01
POOL_SEED = 0
# The convex experiment: Nesterov's chain quadratic in d = 2000 (≫ T, the worst-case regime), exact gradients.
CONVEX_D = 2000
CONVEX_TS = (64, 128, 256, 512, 1024)
CONVEX_SLOPE_GAP = 0.25  # fixed before measuring: Grasp-AC-SA's log–log slope must be steeper than Grasp-GD's by this
CHAPTER_SEEDS = (2026,)

# Cheap arguments for tests/test_api_fuzz.py (every public callable is fuzzed with bad values).
FUZZ_BASE = {
    "robust_regression": {"sigma": 0.3, "n": 50, "d": 3},
    "problem_grid": {"sigmas": [0.3], "cs": [1.0], "n": 50, "d": 3},
    "run_sgd": {"etas": [0.01], "T": 8, "seeds": 2},
    "grasp": {"T": 64, "seeds": 2},
    "oracle": {"T": 4, "seeds": 2},
    "exact_anchor": {},
    "chapter_run": {"seed": 1, "T": 64, "seeds": 2},
    "seeded_verdicts": {"seed": 1, "T": 64, "seeds": 2},
    "peers": {"seed": 1, "T": 8, "seeds": 2},
    "dog": {"x0": torch.ones(3, dtype=torch.float64), "T": 5},
    "adagrad_norm": {"x0": torch.ones(3, dtype=torch.float64), "T": 5},
    "smoothness_bound": {},
    "chain_quadratic": {"d": 8},
    "run_convex": {"etas": [0.5], "T": 4},
    "grasp_convex": {"T": 8},
    "oracle_convex": {"T": 4},
    "convex_study": {"d": 8, "Ts": (4, 8)},
    "chapter_convex": {},
    "loglog_slope": {"x": [1.0, 2.0], "y": [1.0, 0.5]},
    "deterministic_verdicts": {},
    "unbiased_sq_norm": {"per_sample_grads": torch.ones(4, 3, dtype=torch.float64)},
}


def _fuzz_problem() -> RobustRegression:
    return robust_regression(0.3, n=50, d=3, device="cpu")


for _k in ("run_sgd", "grasp", "oracle", "exact_anchor", "smoothness_bound"):
    FUZZ_BASE[_k]["problem"] = _fuzz_problem()
for _k in ("run_convex", "grasp_convex", "oracle_convex"):
    FUZZ_BASE[_k]["problem"] = chain_quadratic(8, device="cpu")
for _k in ("dog", "adagrad_norm"):
    FUZZ_BASE[_k]["grad_fn"] = lambda x: x - 0.5


@lru_cache(maxsize=4)
def _chapter_problem(n: int) -> RobustRegression:
    return problem_grid(SIGMAS, CS, n=n, d=DIM, seed=POOL_SEED)


def chapter_problem(n: int = N_POOL) -> RobustRegression:
    """The chapter's six problems (σ-major over ``SIGMAS`` × ``CS``), pool size n (cached)."""
    return _chapter_problem(integer("n", n, 2, 10**7))


def smoothness_bound(problem: RobustRegression) -> torch.Tensor:
    """L̂ = c·(λ_max(AᵀA/N) + λ) ≥ L per problem (P,): the Hessian of ln(1 + r²/2) in r lies in [−1/8, 1]."""
    if not isinstance(problem, RobustRegression):
        raise TypeError(f"Invalid problem: {type(problem).__name__} (must be a RobustRegression)")
    A = problem.A
    lmax = torch.linalg.eigvalsh(torch.einsum("pnd,pne->pde", A, A) / A.shape[1])[:, -1]
    return problem.c * (lmax + problem.lam)


class ChapterRun(NamedTuple):
    """One seed of the chapter's experiment at budget T; norms are ‖∇F(·)‖/‖∇F(x₀)‖ (P, S), exact."""

    T: int
    grasp: GraspResult
    grasp_norm: torch.Tensor
    naive_norm: torch.Tensor
    naive_chosen: torch.Tensor
    candidate_norm: torch.Tensor  # (P, K, S)
    oracle: OracleResult
    oracle_norm: torch.Tensor
    sgd_norm: torch.Tensor
    g0: torch.Tensor  # (P,)


def chapter_run(seed: int, T: int = T_VERDICT, *, seeds: int = SEEDS, n: int = N_POOL) -> ChapterRun:
    """Grasp-style (U-statistic and naive scoring), oracle SGD and SGD η = 0.01 on the chapter's problems."""
    sd = integer("seed", seed, 0, 2**63 - 1)
    t = integer("T", T, 2, 2**16)
    S = integer("seeds", seeds, 1, 64)
    prob = chapter_problem(n)
    with one_thread(prob.device):
        g0 = torch.linalg.vector_norm(prob.gradient(prob.x0(1)), dim=-1)[:, 0]
        gr = grasp(prob, t, seeds=S, seed=sd)
        nv = grasp(prob, t, seeds=S, seed=sd, score="naive")
        cand = _grad_norm(prob, gr.candidates) / g0[:, None, None]
        P = prob.P
        naive_norm = torch.gather(cand, 1, nv.chosen[:, None]).reshape(P, S)
        orc = oracle(prob, t, seeds=S, seed=sd + 1)
        sgd = run_sgd(prob, [DEFAULT_ETA], t, seeds=S, seed=sd + 1)
    return ChapterRun(t, gr, _grad_norm(prob, gr.x_hat) / g0[:, None], naive_norm, nv.chosen, cand, orc,
                      orc.best_grad_norm / g0[:, None], sgd.grad_norm[:, 0] / g0[:, None], g0)


def peers(seed: int, T: int = T_VERDICT, *, seeds: int = SEEDS, n: int = N_POOL) -> dict[str, torch.Tensor]:
    """DoG (defaults) and AdaGrad-norm (η = 1) on the chapter's problems: ‖∇F(x_T)‖/‖∇F(x₀)‖ (P, S); not checked."""
    sd = integer("seed", seed, 0, 2**63 - 1)
    t = integer("T", T, 1, 2**16)
    S = integer("seeds", seeds, 1, 64)
    prob = chapter_problem(n)
    with one_thread(prob.device):
        g0 = torch.linalg.vector_norm(prob.gradient(prob.x0(1)), dim=-1)[:, 0]
        out = {"DoG": dog(prob.sampler(S, sd + 2), prob.x0(S), t),
               "AdaGrad-norm": adagrad_norm(prob.sampler(S, sd + 2), prob.x0(S), t, eta=1.0)}
        return {k: _grad_norm(prob, x) / g0[:, None] for k, x in out.items()}


def _med(x: torch.Tensor) -> torch.Tensor:
    return x.median(-1).values  # lower median over seeds


def seeded_verdicts(seed: int, run: ChapterRun | None = None, *, T: int = T_VERDICT, seeds: int = SEEDS) -> Verdicts:
    """The chapter's stochastic rows (display=False) from ``chapter_run(seed)`` (or the given run)."""
    if run is not None and not isinstance(run, ChapterRun):
        raise TypeError(f"Invalid run: {type(run).__name__} (must be None or a ChapterRun)")
    r = chapter_run(seed, T, seeds=seeds) if run is None else run
    v = Verdicts(f"Grasp-style grid — stochastic rows (seed {integer('seed', seed, 0, 2**63 - 1)})", display=False)
    logT = math.log2(r.T)
    ratio = r.grasp_norm / r.oracle_norm
    n_inst = ratio.numel()
    v.less(f"near-optimal up to logs: Grasp-style ‖∇F(x̂)‖ ≤ log₂T × oracle SGD's, all {n_inst} (σ, c, seed) "
           f"instances at T = 2^{int(logT)}; max ratio", float(ratio.max()), logT, kind="reproduces",
           source="reconstruction",
           note="the abstract's 'near-optimal up to log factors', applied to our reconstruction per instance; oracle = "
                "best of a quarter-octave grid of constant steps in hindsight (true ‖∇F‖), T steps on its own path")
    eta_rel = torch.log2(r.oracle.best_eta * r.T / r.oracle.eta_bar[:, None])  # log₂(η*/(η̄*/T))
    v.between("self-bounding range: oracle η* vs the grid's bottom η̄*/T, min over instances of log₂(η*T/η̄*)",
              float(eta_rel.min()), -1.75, -0.5, kind="differs", source="reconstruction",
              paper="our reconstruction expected η* ∈ [η̄*/T, η̄*] in every instance (log₂ ≥ 0)",
              note=f"measured instead: in at least one instance the tuned step sits one octave BELOW the grid (the "
                   f"noise-limited step √(2Δ/(LTσ²)) < η̄/T; {float((eta_rel >= 0).double().mean()):.0%} of "
                   "instances inside the grid). Band [−1.75, −0.5] octaves: oracle grid resolution 1/4 octave; −1 in "
                   "all 20 seeds of an exploratory run; a change either way fails")
    c_ratio = r.grasp_norm.reshape(len(SIGMAS), len(CS), -1)
    dev = float(((c_ratio - c_ratio[:, :1]).abs() / c_ratio[:, :1]).max())
    v.less("scale-free: Grasp-style ‖∇F(x̂)‖/‖∇F(x₀)‖ identical across c = 2⁻¹⁰, 1, 2¹⁰ (max relative deviation)",
           dev, 1e-6, kind="consistency", source="derived",
           note="SGD with η on cF is SGD with cη on F and η̄ ∝ 1/c, so every iterate is c-independent; powers of two "
                "keep this exact in float64 (with c = 10⁻³ chaotic large-step candidates amplify round-off)")
    P_lo = [i * len(CS) for i in range(len(SIGMAS))]  # c = 2⁻¹⁰ rows
    g_lo = _med(r.grasp_norm[P_lo[0]])
    s_lo = _med(r.sgd_norm[P_lo[0]])
    z = z_threshold(1e-3)
    v.greater(f"a default step fails at small c: median ‖∇F‖ ratio SGD η = 0.01 / Grasp-style, σ = {SIGMAS[0]}, "
              "c = 2⁻¹⁰", float(s_lo / g_lo), 1.1, kind="reproduces", source="reconstruction",
              note=f"SGD's cη ≈ 10⁻⁵ leaves x₀ almost unmoved (‖∇F‖ ratio ≈ 1); Grasp-style reaches "
                   f"{float(g_lo):.3f} (median of {r.grasp_norm.shape[-1]} seeds). Exploratory run, 20 seeds: "
                   "1.27 … 1.56, mean 1.51, SD ≈ 0.06; "
                   f"threshold 1.1 is > z = {z:.2f} SDs below the mean")
    g_hi = _med(r.grasp_norm[P_lo[1]])
    v.between(f"heavy noise: Grasp-style median ‖∇F(x̂)‖/‖∇F(x₀)‖ at σ = {SIGMAS[1]}, c = 2⁻¹⁰ (no better than x₀)",
              float(g_hi), 0.85, 1.15, kind="differs", source="reconstruction",
              paper="expected outcome: Grasp-style beats a default step at extreme c",
              note=f"at T = 2^{int(logT)} each candidate gets {r.grasp.steps} steps and {r.grasp.steps} scoring "
                   "samples: the U-statistic's noise (per-sample gradients larger than ‖∇F(x₀)‖) cannot rank "
                   "candidates, so the "
                   f"choice is near x₀ (SGD η = 0.01 gives {float(_med(r.sgd_norm[P_lo[1]])):.3f}). Band ±0.15 around "
                   f"1: exploratory 20-seed spread ±0.05, > z = {z:.2f} SEs")
    return v


@lru_cache(maxsize=2)
def _chapter_convex(device: str) -> ConvexStudy:
    return convex_study(CONVEX_D, CONVEX_TS, device=device)


def chapter_convex() -> ConvexStudy:
    """The chapter's convex experiment (cached per device): Grasp-style GD and AC-SA vs their oracles on the chain
    quadratic, d = CONVEX_D, T ∈ CONVEX_TS."""
    from ..device import resolve_device

    return _chapter_convex(str(resolve_device(None)))


def deterministic_verdicts() -> Verdicts:
    """Sympy identities, the descent-lemma bound on the chapter's problems and DoG parity with ``dog-optimizer``."""
    with one_thread():
        return _deterministic_verdicts()


def _deterministic_verdicts() -> Verdicts:
    import sympy as sp

    v = Verdicts("Grasp-style grid — exact rows", display=False)
    F, L, g, T = sp.symbols("F L g T", positive=True)
    sb = derive_self_bounding()
    v.equal("descent lemma: 0 ≤ F(x − ∇F/L) ≤ F − ‖∇F‖²/(2L) ⇒ ‖∇F‖² ≤ 2LF (sympy, bound − 2LF)",
            sp.simplify(sb.grad_sq_bound - 2 * L * F), 0, kind="consistency", source="derived")
    v.equal("η̄ − 1/L = (2LF − ‖∇F‖²)/(L‖∇F‖²) ≥ 0 (sympy residual)", sb.anchor_gap_residual, 0,
            kind="consistency", source="derived")
    v.equal("1/L < η̄/T ⇔ ‖∇F(x₀)‖² < 2LF(x₀)/T: the grid's bottom is self-bounding (sympy, boundary − 2LF/T)",
            sp.simplify(sb.small_end - 2 * L * F / T), 0, kind="consistency", source="derived")
    D, s = sp.symbols("Delta sigma", positive=True)
    st = derive_sgd_tuning()
    v.equal("argmin_η 2Δ/(ηT) + Lησ² = √(2Δ/(LTσ²)) (sympy)",
            sp.simplify(st.eta_star - sp.sqrt(2 * D / (L * T * s**2))), 0, kind="consistency", source="derived")
    v.true("…a minimum (B'' > 0) with value 2√(2LΔσ²/T)", bool(st.second_derivative.is_positive) and
           sp.simplify(st.value_at_star - 2 * sp.sqrt(2 * L * D * s**2 / T)) == 0, kind="consistency",
           source="derived", measured=f"B''(η*) = {st.second_derivative}")
    m, mu, sv = sp.symbols("m mu s", positive=True)
    ub = derive_ustat_bias()
    v.equal("scoring: E[U-statistic] − ‖μ‖² (sympy)", sp.simplify(ub.ustat_mean - mu**2), 0, kind="consistency",
            source="derived")
    v.equal("scoring: E‖ĝ‖² − ‖μ‖² − trΣ/m (sympy; the naive score's bias)",
            sp.simplify(ub.naive_mean - mu**2 - sv**2 / m), 0, kind="consistency", source="derived")
    # the descent-lemma bound, measured on the problems: exact ∇F and F at random points vs L̂ from an eigenvalue
    prob = chapter_problem()
    Lhat = smoothness_bound(prob)
    gen = torch.Generator().manual_seed(POOL_SEED + 1)
    scales = torch.logspace(-2, 2, 9, dtype=torch.float64)
    x = torch.randn(prob.P, 9, 40, prob.d, generator=gen, dtype=torch.float64) * scales[None, :, None, None]
    x = x.to(prob.device)
    gx = (prob.gradient(x) ** 2).sum(-1)
    worst = float((gx / (2 * Lhat[:, None, None] * prob.loss(x))).max())
    v.less("self-bounding on the robust-regression problems: max ‖∇F(x)‖²/(2L̂F(x)) over 2,160 random points "
           "(‖x‖ from 0.04 to 450)", worst, 1.0, kind="reproduces", source="derived",
           note="exact ∇F, F over the pool vs L̂ = c(λ_max(AᵀA/N) + λ) from an eigenvalue solver; a violation would "
                "mean L̂ is not a smoothness bound")
    eb = exact_anchor(prob)
    v.greater("…hence 1/L ≤ η̄: min over the six problems of η̄*·L̂", float((eb * Lhat).min()), 1.0,
              kind="reproduces", source="derived", note="η̄* = 2F(x₀)/‖∇F(x₀)‖², exact")
    _convex_rows(v)
    v.less("DoG (ours) = dog-optimizer's DoG (eps = 0): max |Δx| / max |x| after 50 exact-gradient steps",
           _dog_parity(), 1e-10, kind="consistency", source="derived",
           note="same r_ε = 10⁻⁶(1 + ‖x₀‖); float64; round-off only")
    return v


def _convex_rows(v: Verdicts) -> None:
    """Rows of the convex experiment (exact gradients: deterministic)."""
    import sympy as sp

    # the chain's closed forms at d = 7, exactly: DᵀD = tridiag(−1, 2, −1), x* = A⁻¹e₁, F* = L/(8(d+1))
    d7, Ls = 7, sp.Symbol("L", positive=True)
    D = sp.zeros(d7 + 1, d7)
    D[0, 0] = 1
    for i in range(1, d7):
        D[i, i], D[i, i - 1] = 1, -1
    D[d7, d7 - 1] = -1
    A = D.T * D
    e1 = sp.Matrix([1] + [0] * d7)
    xs = A.solve(sp.Matrix([1] + [0] * (d7 - 1)))
    Fstar = sp.simplify(Ls / 8 * ((D * xs - e1).T * (D * xs - e1))[0])
    ok = (A == sp.Matrix(d7, d7, lambda i, j: 2 if i == j else (-1 if abs(i - j) == 1 else 0))
          and all(xs[i] == 1 - sp.Rational(i + 1, d7 + 1) for i in range(d7)) and sp.simplify(Fstar - Ls / 64) == 0)
    v.true("chain quadratic (sympy, d = 7): DᵀD = tridiag(−1, 2, −1), x*_i = 1 − i/(d+1), F* = L/(8(d+1))", ok,
           kind="consistency", source="derived", predicted="all three exact", measured=f"F* = {Fstar}")
    cs = chapter_convex()
    floor_ok = min(r.gap - cs.problem.krylov_floor(r.steps) for b in BASES for r in cs.grasp[b])
    floor_ok = min(floor_ok, min(r.gap - cs.problem.krylov_floor(t) for b in BASES for r, t in
                                 zip(cs.oracle[b], cs.Ts, strict=True)))
    v.greater("every run's F − F* ≥ the Krylov floor (L/8)(1/(t+1) − 1/(d+1)) at its step count t (min excess)",
              floor_ok, -1e-12, kind="consistency", source="derived",
              note="a first-order method from x₀ = 0 touches one new coordinate per gradient; float64 round-off only")
    eb = cs.grasp["sgd"][0].eta_bar
    inside = [(eb / t <= r.best_eta <= eb) for b in BASES for r, t in zip(cs.oracle[b], cs.Ts, strict=True)]
    v.true("convex: the oracle's tuned step lies in the grid's range [η̄/T, η̄] for GD and AC-SA at every T",
           all(inside), kind="reproduces", source="reconstruction", predicted="10 of 10",
           measured=f"{sum(inside)} of {len(inside)}",
           note="η̄ = 4/L here; the oracle scans η̄·2^{−j/4} well beyond the grid on both sides, so it can fall outside")
    gap = cs.slopes["acsa"] - cs.slopes["sgd"]
    v.less(f"convex: Grasp-AC-SA's log–log slope of F − F* vs T (T = {cs.Ts[0]}…{cs.Ts[-1]}) minus Grasp-GD's",
           gap, -CONVEX_SLOPE_GAP, kind="reproduces", source="reconstruction",
           note="paper: parameter-free methods competitive with acceleration; in the d ≫ T regime GD's gap falls like "
                "T^−1/2 and an accelerated method's like T^−1 (Krylov); the budget split over K = ⌈log₂T⌉+1 runs "
                "costs ≈ 1/ln T ≈ 0.15 of slope; margin 0.25 fixed before measuring (exact gradients: deterministic)")


def _dog_parity(steps: int = 50) -> float:
    from dog import DoG

    prob = robust_regression(0.3, n=200, d=5, seed=3, device="cpu")
    x0 = torch.full((1, 5), 0.3, dtype=torch.float64)
    ours = dog(lambda x: prob.gradient(x[None])[0], x0, steps)
    p = torch.nn.Parameter(x0.clone())
    opt = DoG([p], eps=0.0)
    for _ in range(steps):
        opt.zero_grad()
        p.grad = prob.gradient(p.detach()[None])[0].clone()
        opt.step()
    return float((ours - p.detach()).abs().max() / ours.abs().max())


_ = to_numpy  # re-exported helpers used by the chapter through this package
