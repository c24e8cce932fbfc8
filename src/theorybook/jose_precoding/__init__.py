"""Joint-space empowerment as optimal precoding (JoSE; Heald, Caggiano, Kumar & Sahani, ICML 2026, OpenReview
qI2eHwfNfh), on a planar 4-joint, 16-tendon MuJoCo finger of our own.

The paper's theorem and tables were read only through a third-party reading note ([secondary]); the plant, the
features of the learned model and the downstream task are our reconstruction.

Public API (arguments validated; bad input raises ``ValueError``/``TypeError`` naming parameter, value and range):

``water_filling(gains, power) -> (powers, level, capacity)`` — gains ``σ_i² ≥ 0``, nats.
``jose(G, Q, power, *, k=None) -> (capacity, precoder, powers, singular_values)`` — Theorem C.1, batched.
``precoder_capacity(G, Q, Theta, power)``, ``gaussian_capacity(G, Q, Sigma)``, ``principal_angles(A, B)``.
``TendonFinger(noise=...)`` with ``G(qpos)``, ``step``, ``play(steps, seed)``; ``fit_dynamics(data, *, rank=None)``.
Experiments in :mod:`theorybook.jose_precoding.experiment`; the downstream CEM experiment ``cem_reaching``,
``learning_speed`` (:mod:`theorybook.jose_precoding.downstream`); verdict rows
(:mod:`theorybook.jose_precoding.verdicts`) ``seeded_verdicts(seed)``, ``deterministic_verdicts()``,
``PAPER_CLAIMS``; ``CHAPTER_SEEDS``. Sympy: :mod:`theorybook.jose_precoding.theory`. Widget:
:func:`theorybook.jose_precoding.widgets.explorer`.
"""

import torch as _torch

from .core import Jose, WaterFilling, gaussian_capacity, jose, precoder_capacity, principal_angles, water_filling
from .downstream import cem_reaching, learning_speed
from .experiment import CHAPTER_SEEDS
from .model import Dynamics, fit_dynamics
from .plant import Play, TendonFinger
from .verdicts import PAPER_CLAIMS, deterministic_verdicts, seeded_verdicts

__all__ = [
    "CHAPTER_SEEDS", "PAPER_CLAIMS", "Dynamics", "Jose", "Play", "TendonFinger", "WaterFilling", "cem_reaching",
    "deterministic_verdicts", "fit_dynamics", "gaussian_capacity", "jose", "learning_speed", "precoder_capacity",
    "principal_angles", "seeded_verdicts", "water_filling",
]

_g = _torch.Generator().manual_seed(0)
_G = _torch.randn(4, 16, generator=_g, dtype=_torch.float64)
_Q = 0.01 * _torch.eye(4, dtype=_torch.float64)
_Th = _torch.randn(16, 3, generator=_g, dtype=_torch.float64)
_q = _torch.rand(700, 4, generator=_g, dtype=_torch.float64)
_a = _torch.rand(700, 16, generator=_g, dtype=_torch.float64)
_PLAY = (_q, _q, _a, _q + 0.1 * _torch.randn(700, 4, generator=_g, dtype=_torch.float64))
#: Cheap valid arguments for tests/test_api_fuzz.py (the other parameters keep their defaults).
FUZZ_BASE = {
    "water_filling": {"gains": _torch.tensor([4.0, 1.0, 0.1], dtype=_torch.float64), "power": 1.0},
    "jose": {"G": _G, "Q": _Q, "power": 1.0},
    "precoder_capacity": {"G": _G, "Q": _Q, "Theta": _Th, "power": 1.0},
    "gaussian_capacity": {"G": _G, "Q": _Q, "Sigma": _torch.eye(16, dtype=_torch.float64) / 16},
    "principal_angles": {"A": _Th, "B": _G.mT[:, :2]},
    "TendonFinger": {"noise": 0.1},
    "fit_dynamics": {"data": _PLAY, "degree": 1},
    "seeded_verdicts": {"seed": 1},
    "monomials": {"q": _q[:5], "degree": 2},
    "channel": {"power": 1.0},
    "capacity_vs_k": {"n_random": 2},
    "reach_activations": {"n_reaches": 2, "steps": 5},
    "pca_synergies": {"act": _a[:20], "k": 3},
    "monte_carlo_mi": {"seed": 1, "n": 100},
    "learning_curve": {"steps": (1000,), "seed": 1},
    "numeric_capacity_argmax": {"G": _G, "Q": _Q, "power": 1.0, "restarts": 1},
    "active_modes": {"Sigma": _torch.eye(16, dtype=_torch.float64) / 16, "power": 1.0},
    "switch_off_scan": {"seed": 1, "powers": (1e-3, 1.0), "play_steps": 1000},
    "plugin_bias": {"k": 4, "n_y": 4, "n": 2000},
    "cem_reaching": {"iterations": 1, "population": 4, "horizon": 3},
    "compress": {"curves": [[3.0, 2.0, 1.0], [2.0, 1.5, 1.0]], "factor": 2.0},
    "whitening_study": {"pca_act": _a[:20], "powers": (1.0,), "n_random": 2},
    "learning_speed": {"res": None},
    "summarize": {},
    "render": {},
}
