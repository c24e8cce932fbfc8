"""Performative learning theory (Rodemann et al., ICML 2026, arXiv 2602.04402), at CPU scale on a synthetic
population (the paper's SIAB labour-market records are not public).

Public API (arguments validated; bad input raises ``ValueError``/``TypeError`` naming parameter, value and range):

``population(n, seed)`` — synthetic x ∈ [0, 1]⁴, logistic labels (base rate ≈ 0.35).
``fit_logistic(X, y, lam)`` — RERM by Newton (batched over label sets; ``converged`` flag); ``risk``,
``predict_proba``, ``scores``, ``loss_lipschitz``.
``flip_top_positives`` / ``fulfil_top_negatives`` — self-negation / self-fulfilment of the top-ξ predicted risks.
``wasserstein(a, b, p)`` — exact W_p between empirical measures (POT).
``dro_labels``, ``dro_risk`` — label-shift W-DRO sup (min-max) / inf in closed form, binary or [0, 1] labels;
``minmin_risk`` — the min-min (distributionally favourable) risk by alternating minimisation.
``retrain(X, y, rounds, eps)`` — repeated RERM under a stateful gaming transition; ``estimate_La``.
``cor38_bound``, ``cor38_reading``, ``thm313_bound``, ``thm315_bound``, ``drift_bound``, ``log_drift_bound`` —
the authors' notebook formulas, in log space where they can overflow.
``tradeoff(...)`` — the change-vs-learn sweep; ``run_experiment``, ``seeded_verdicts``, ``deterministic_verdicts``
— the chapter's experiment and verdict rows; widget: :func:`theorybook.performative.widgets.explorer`.
"""

from .echo import Tradeoff, tradeoff
from .experiment import (
    TRUE_B,
    TRUE_W,
    LogisticModel,
    Population,
    RetrainTrace,
    dro_labels,
    dro_risk,
    estimate_La,
    fit_logistic,
    flip_top_positives,
    fulfil_top_negatives,
    loss_lipschitz,
    minmin_risk,
    population,
    predict_proba,
    retrain,
    risk,
    scores,
    wasserstein,
)
from .theory import (
    NOTEBOOK_38,
    NOTEBOOK_313,
    BoundTerms,
    Cor38Reading,
    cor38_bound,
    cor38_reading,
    derive_drift_sum,
    derive_flip_wasserstein,
    derive_gaming_drift,
    derive_kantorovich_rubinstein,
    derive_logistic_constants,
    drift_bound,
    flip_distance,
    log_drift_bound,
    thm313_bound,
    thm313_radius,
    thm315_bound,
)
from .verdicts import (
    CHAPTER_SEEDS,
    PAPER_CLAIMS,
    Experiment,
    deterministic_verdicts,
    drift_rate,
    headline,
    run_experiment,
    seeded_verdicts,
    synthetic_bound,
)

__all__ = [
    "TRUE_B", "TRUE_W", "LogisticModel", "Population", "RetrainTrace", "Tradeoff", "dro_labels", "dro_risk",
    "estimate_La", "fit_logistic", "flip_top_positives", "fulfil_top_negatives", "loss_lipschitz", "minmin_risk",
    "population", "predict_proba", "retrain", "risk", "scores", "tradeoff", "wasserstein",
    "NOTEBOOK_38", "NOTEBOOK_313", "BoundTerms", "Cor38Reading", "cor38_bound", "cor38_reading",
    "derive_drift_sum", "derive_flip_wasserstein", "derive_gaming_drift", "derive_kantorovich_rubinstein",
    "derive_logistic_constants",
    "drift_bound", "flip_distance", "log_drift_bound", "thm313_bound", "thm313_radius", "thm315_bound",
    "CHAPTER_SEEDS", "Experiment", "deterministic_verdicts", "drift_rate", "run_experiment", "seeded_verdicts",
    "synthetic_bound", "PAPER_CLAIMS", "headline",
]
