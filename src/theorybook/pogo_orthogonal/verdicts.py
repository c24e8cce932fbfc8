r"""The POGO chapter's verdict rows, built here so that the seed-robustness test can re-run them.

:func:`seeded_verdicts` builds every row that depends on a random draw (the Procrustes problems and their
random starts) for one seed; :func:`deterministic_verdicts` builds the rows without randomness (operation
counts, sympy). The chapter shows both with ``seed = CHAPTER_SEEDS[0]``. Tolerances are fixed in the code below
from the error model in each row's note; no row involves wall-clock time.

The experiment (:data:`PROCRUSTES`): ``b`` float32 orthogonal Procrustes problems of size ``p × p``, POGO-SGD and
Landing at :math:`\eta = 1/L`, POGO-VectorAdam at :math:`\eta = 0.1`, ``steps`` steps each.
"""

from __future__ import annotations

import math

import torch

from .. import validate
from ..check import Verdicts
from ..device import one_thread, resolve_device, to_numpy
from ..fit import loglog_slope
from .dynamics import (
    POGO,
    Trace,
    infeasibility,
    one_step_infeasibility,
    procrustes_problem,
    product_count,
    relative_gradient,
    run_method,
)
from .theory import derive_correction_error, derive_quartic_coefficients, derive_tangent_gram, infeasibility_order

__all__ = ["CHAPTER_SEEDS", "PROCRUSTES", "deterministic_verdicts", "eta4_law", "procrustes_runs",
           "seeded_verdicts"]

#: The seed(s) the chapter itself uses (the seed-robustness test draws unseen ones).
CHAPTER_SEEDS = (0,)
#: The Procrustes experiment behind the seeded rows and the chapter's first figure.
PROCRUSTES = {"b": 32, "p": 16, "steps": 150, "lr_vadam": 0.1}
#: float32 feasibility level: ≈ 10·p·ε₃₂ for p = 16 (the round-off of forming XXᵀ, with a 10× margin).
F32_LEVEL = 1e-5


def procrustes_runs(seed: int, methods: tuple[str, ...] = ("pogo-sgd", "pogo-vadam", "landing"),
                    device=None) -> tuple[dict[str, Trace], float]:
    """The runs of :data:`PROCRUSTES` for ``seed``: ``({method: Trace}, η = 1/L)``. SGD-type methods use
    η = 1/L; POGO-VectorAdam η = 0.1; geoopt's Riemannian Adam η = 0.3."""
    seed = validate.integer("seed", seed, 0, 2**63 - 1)
    prob = procrustes_problem(PROCRUSTES["b"], PROCRUSTES["p"], seed, dtype=torch.float32,
                              device=resolve_device(device))
    lr = 1.0 / prob.lipschitz
    special = {"pogo-vadam": PROCRUSTES["lr_vadam"], "radam-geoopt": 0.3}
    return {m: run_method(prob, m, special.get(m, lr), PROCRUSTES["steps"]) for m in methods}, lr


def eta4_law(seed: int, n_eta: int = 9, device=None) -> dict[str, object]:
    r"""One POGO-SGD step (the optimiser itself, float64) from the start :math:`X_0` of the seed's Procrustes
    problems along their actual gradient, for η with :math:`\eta\max_i\lVert\Psi_i\rVert_2` from 3e-3 to 1e-1.

    Returns ``etas``, ``measured`` (max_i ‖X⁺X⁺ᵀ − I‖_F), ``leading`` (the lemma's leading term
    :math:`\tfrac34\eta^4\max_i\lVert(\Psi_i\Psi_i^\top)^2\rVert_F`), ``identity`` (max over η of
    |measured − ‖(I+E)(I−E/2)²−I‖_F| on the first matrix, E = MMᵀ − I: an algebraic identity), the fitted log-log
    ``slope``
    and its ``stderr``, and ``bound``: the rigorous relative gap between measured and leading,
    :math:`(\eta_{\max}\lVert\Psi\rVert_2)^2/3` (from :math:`\lVert\tfrac14E^3\rVert\le\tfrac13\lVert E\rVert_2
    \lVert\tfrac34E^2\rVert`).
    """
    seed = validate.integer("seed", seed, 0, 2**63 - 1)
    n_eta = validate.integer("n_eta", n_eta, 3, 200)
    device = resolve_device(device)
    prob = procrustes_problem(PROCRUSTES["b"], PROCRUSTES["p"], seed, device=device)
    X0, G0 = prob.X0, prob.grad(prob.X0)
    Psi = relative_gradient(X0, G0)
    psi2 = float(torch.linalg.matrix_norm(Psi, ord=2).max())
    etas = torch.logspace(math.log10(3e-3), -1.0, n_eta, dtype=torch.float64) / psi2
    measured = []
    for eta in etas.tolist():
        param = torch.nn.Parameter(X0.clone())
        param.grad = G0.clone()
        POGO([param], eta).step()
        measured.append(float(infeasibility(param.detach()).max()))
    meas1, ident1 = one_step_infeasibility(X0[0], Psi[0], etas.to(device))
    identity = float((meas1 - ident1).abs().max())
    PP = Psi @ Psi.mT
    lead_c = 0.75 * float(torch.linalg.matrix_norm(PP @ PP).max())
    eta_np = to_numpy(etas)
    leading = [lead_c * e**4 for e in eta_np.tolist()]
    fit = loglog_slope(eta_np, measured)
    return {"etas": eta_np, "measured": measured, "leading": leading, "identity": identity,
            "slope": fit.slope, "stderr": fit.stderr, "bound": (float(etas[-1]) * psi2) ** 2 / 3,
            "max_rel_dev": max(abs(m / lv - 1) for m, lv in zip(measured, leading, strict=True))}


def step1_prediction(seed: int, lr: float, device=None) -> float:
    r"""The lemma's infeasibility after POGO-SGD's first step: :math:`\max_i\lVert-\tfrac34E_i^2+\tfrac14E_i^3
    \rVert_F` with :math:`E_i=\eta^2\Psi_i\Psi_i^\top` at :math:`X_0` (float64, same problems as the run)."""
    seed = validate.integer("seed", seed, 0, 2**63 - 1)
    lr = validate.number("lr", lr, 0.0, 1e6, low_open=True)
    prob = procrustes_problem(PROCRUSTES["b"], PROCRUSTES["p"], seed, device=resolve_device(device))
    Psi0 = relative_gradient(prob.X0, prob.grad(prob.X0))
    E0 = lr**2 * Psi0 @ Psi0.mT
    return float(torch.linalg.matrix_norm(-0.75 * E0 @ E0 + 0.25 * E0 @ E0 @ E0).max())


def deterministic_verdicts() -> Verdicts:
    """Rows without randomness: product counts (flop counter) and the sympy derivations."""
    v = Verdicts("POGO: counts and algebra", display=False)
    n_pogo, n_landing = product_count("pogo", 4, 16, 16), product_count("landing", 4, 16, 16)
    v.equal("matrix products per POGO step (flop counter, λ = ½)", round(n_pogo, 6), 6.0, kind="differs",
            source="paper", paper="5 matrix products (abstract)",
            note="XXᵀ, (XXᵀ)G̃, XG̃ᵀ, (XG̃ᵀ)X, MMᵀ, (MMᵀ)M as written in the authors' code; 5 only if a Gram product "
                 "counts half (syrk) — our reading, not the paper's text")
    v.equal("matrix products per Landing step (flop counter)", round(n_landing, 6), 5.0, kind="consistency",
            source="derived", note="the same four products for Ψ, plus (XXᵀ − I)X")
    corr, gram = derive_correction_error(), derive_tangent_gram()
    v.true("X⁺X⁺ᵀ − I = −¾E² + ¼E³ at λ = ½ (sympy)", corr["holds"], kind="consistency", source="derived",
           measured=str(corr["half"]))
    v.true("MMᵀ = I + η²ΨΨᵀ for orthonormal X and tangent Ψ (non-commutative sympy)", gram["holds"],
           kind="consistency", source="derived")
    v.equal("leading power of η in the one-step infeasibility (sympy)", infeasibility_order(), 4,
            kind="consistency", source="derived")
    v.true("quartic q(λ) coefficients = the code's formulas (generic symbolic 2×2)",
           derive_quartic_coefficients(2, 2)["holds"], kind="consistency", source="paper",
           note="the coefficient formulas are the authors' (code); checked by expansion")
    return v


def _seeded(seed: int, device=None) -> Verdicts:
    """The rows of :func:`seeded_verdicts` (about 0.5 s on one CPU core)."""
    seed = validate.integer("seed", seed, 0, 2**63 - 1)
    v = Verdicts(f"POGO: seeded rows (seed {seed})", display=False)
    law = eta4_law(seed, device=device)
    v.close("η⁴ law: log-log slope of one-step infeasibility (POGO step from X₀ along the actual gradient)",
            law["slope"], 4.0, atol=0.05, kind="reproduces", source="derived",
            note=f"9 step sizes, η‖Ψ‖₂ ∈ [3e-3, 0.1], float64; the E³ term biases the slope by ≤ "
                 f"{law['bound']:.1e}, round-off by < 1e-4 (fit stderr {law['stderr']:.1e})")
    v.less("one-step infeasibility ÷ leading term ¾η⁴‖(ΨΨᵀ)²‖_F: max |ratio − 1|", law["max_rel_dev"],
           law["bound"] + 1e-6, kind="reproduces", source="derived",
           note="bound (η_max‖Ψ‖₂)²/3 from ‖¼E³‖_F ≤ ⅓‖E‖₂‖¾E²‖_F, + 1e-6 float64 round-off; fixed by the lemma")
    v.less("one-step infeasibility = ‖(I+E)(I−E/2)² − I‖_F with E = MMᵀ − I: max absolute difference",
           law["identity"], 1e-13, kind="consistency", source="derived",
           note="an identity for any M (code vs algebra), not a test of the η⁴ law; float64 round-off "
                "≈ p²·ε₆₄ ≈ 6e-14 at p = 16")
    runs, lr = procrustes_runs(seed, device=device)
    sgd, vadam, landing = runs["pogo-sgd"], runs["pogo-vadam"], runs["landing"]
    pred1 = step1_prediction(seed, lr, device=device)
    b, p, steps = PROCRUSTES["b"], PROCRUSTES["p"], PROCRUSTES["steps"]
    v.close(f"POGO-SGD (η = 1/L), {b} Procrustes {p}×{p}: max ‖XXᵀ − I‖_F over all {steps} steps",
            sgd.max_infeas, pred1, rtol=1e-3, kind="differs", source="paper",
            paper="keeps orthogonality at all times in practice (abstract)",
            note="what we measure instead: the peak is step 1's η⁴ transient, equal to the lemma's prediction "
                 "(float64) to float32 round-off (≈ 1e-6 ≪ 1e-3 × peak); it is not at round-off level")
    v.less(f"POGO-SGD: ‖XXᵀ − I‖_F at step {steps} (back on the manifold)", sgd.infeas[-1], F32_LEVEL,
           kind="reproduces", source="paper",
           note="float32 level 1e-5 ≈ 10·p·ε₃₂; errors contract quadratically (¾e²) once η‖Ψ‖ is small")
    v.less(f"POGO-VectorAdam (η = {PROCRUSTES['lr_vadam']}): max ‖XXᵀ − I‖_F over all {steps} steps",
           vadam.max_infeas, F32_LEVEL, kind="reproduces", source="paper",
           note="the paper's claim holds when the step is normalised: η‖Ψ‖ ≲ 0.1 keeps the η⁴ term ≲ 1e-5")
    v.greater(f"Landing (η = 1/L): ‖XXᵀ − I‖_F at step {steps} (stays off the manifold)", landing.infeas[-1],
              F32_LEVEL, kind="reproduces", source="paper",
              note="Landing only attracts the iterate to the manifold (abstract: it relaxes orthogonality)")
    v.less(f"POGO-SGD relative optimality gap after {steps} steps", sgd.gap[-1], 1e-2, kind="reproduces",
           source="reconstruction",
           note="convergence: a 100× reduction of the gap; the rate is set by the slowest of the b problems")
    return v


def seeded_verdicts(seed: int, device=None) -> Verdicts:
    """Every row of the chapter that depends on a random draw, for one ``seed``, computed with one intra-op
    thread on the CPU (small matrices: a second thread only adds hand-off cost, and on a loaded machine
    OpenMP threads waiting for each other slow small ops down by orders of magnitude)."""
    seed = validate.integer("seed", seed, 0, 2**63 - 1)
    device = resolve_device(device)
    with one_thread(device):
        return _seeded(seed, device)
