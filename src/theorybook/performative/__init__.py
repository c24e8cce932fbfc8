"""Performative learning theory (Rodemann et al., ICML 2026, arXiv 2602.04402), at CPU scale on a synthetic
population (the paper's SIAB labour-market records are not public).

Public API (arguments validated; bad input raises ``ValueError`` naming parameter, value and range):

``population(n, seed)`` — synthetic x ∈ [0, 1]⁴, logistic labels (base rate ≈ 0.35).
``fit_logistic(X, y, lam)`` — RERM by Newton (batched over label sets); ``risk``, ``predict_proba``.
``flip_top_positives(model, X, y, share)`` — self-negation: top-ξ predicted-risk positives flip 1 → 0.
``fulfil_top_negatives(model, X, y, share)`` — self-fulfilment: top-ξ predicted-risk negatives flip 0 → 1.
``wasserstein(a, b, p)`` — exact W_p between empirical measures (POT).
``cor38_bound``, ``thm313_bound``, ``thm315_bound`` — the authors' notebook formulas; ``drift_bound``.
``retrain(X, y, rounds, eps)`` — repeated RERM under a stateful, jointly ε-sensitive transition.
``dro_risk(model, X, y, radius, sense)`` — label-shift W-DRO sup (min-max) / inf (min-min) in closed form.
``tradeoff(...)`` — the change-vs-learn sweep; widget: :func:`theorybook.performative.widgets.explorer`.
"""

from .experiment import (
    TRUE_B,
    TRUE_W,
    LogisticModel,
    Population,
    RetrainTrace,
    Tradeoff,
    dro_risk,
    fit_logistic,
    flip_top_positives,
    fulfil_top_negatives,
    loss_lipschitz,
    population,
    predict_proba,
    retrain,
    risk,
    scores,
    tradeoff,
    wasserstein,
)
from .theory import (
    NOTEBOOK_38,
    NOTEBOOK_313,
    BoundTerms,
    cor38_bound,
    derive_drift_sum,
    derive_flip_wasserstein,
    derive_kantorovich_rubinstein,
    derive_logistic_constants,
    drift_bound,
    flip_distance,
    thm313_bound,
    thm313_radius,
    thm315_bound,
)

__all__ = [
    "TRUE_B", "TRUE_W", "LogisticModel", "Population", "RetrainTrace", "dro_risk", "fit_logistic",
    "flip_top_positives", "fulfil_top_negatives", "loss_lipschitz", "population", "predict_proba", "retrain",
    "risk", "scores", "Tradeoff", "tradeoff", "wasserstein", "NOTEBOOK_38", "NOTEBOOK_313", "BoundTerms",
    "cor38_bound", "derive_drift_sum", "derive_flip_wasserstein", "derive_kantorovich_rubinstein",
    "derive_logistic_constants",
    "drift_bound", "flip_distance", "thm313_bound", "thm313_radius", "thm315_bound",
]
