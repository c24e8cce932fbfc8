"""Learning a bosonic Hamiltonian at the Heisenberg limit by displacement, random unitary twirl and robust phase
estimation (D-RUT; Huang, Zhang & Luo, ICML 2026, arXiv 2510.08419), simulated in a truncated Fock space.

The paper's text beyond the abstract could not be read: the protocol and its statements come from third-party
audits ([secondary]); the model Hamiltonians, the design and the shot schedule are ours.

Public API (arguments validated; bad input raises ``ValueError``/``TypeError`` naming parameter, value and range):
``hamiltonian(coeffs, n_fock, modes=None)``, ``displacement(beta, n_fock, modes=1)``,
``displaced_twirled(coeffs, beta, *, n_fock, n_phases=None)``, ``vacuum_constant(coeffs, beta)``,
``vacuum_signal(H, t)``, ``design(degree, *, radii, n_radii, n_angles, modes)``, ``recover(C, design)``,
``rpe(C, J, shots, *, t0, flip, offset, seed, reps)``, ``rpe_schedule(J)``, ``ramsey(C, T, ...)``, ``crb``,
``ramsey_crb``, ``learn(coeffs, ...)``; studies ``scaling_study``, ``audit_study``, ``spam_study``,
``eq43_ratios``; verdict rows (:mod:`theorybook.drut_hamiltonian.verdicts`) ``seeded_verdicts(seed)``,
``deterministic_verdicts()`` and the chapter's table ``headline(...)``, ``PAPER_CLAIMS``; ``CHAPTER_SEEDS``.
Sympy derivations: :mod:`theorybook.drut_hamiltonian.theory`; widget:
:func:`theorybook.drut_hamiltonian.widgets.explorer`.
"""

from .dynamics import (
    KickResult,
    displaced_twirled,
    displacement,
    hamiltonian,
    kicked_evolution,
    vacuum_constant,
    vacuum_signal,
)
from .estimation import Design, Learned, RPEResult, crb, design, learn, ramsey, ramsey_crb, recover, rpe, rpe_schedule
from .experiment import (
    AUDIT_COEFFS,
    AUDIT_REPORTED,
    CHAPTER_COEFFS,
    CHAPTER_SEEDS,
    AuditStudy,
    ScalingStudy,
    SpamStudy,
    audit_study,
    chapter_coeffs,
    eq43_ratios,
    scaling_study,
    spam_study,
    vacuum_cumulants,
)
from .verdicts import PAPER_CLAIMS, deterministic_verdicts, seeded_verdicts

__all__ = [
    "AUDIT_COEFFS", "AUDIT_REPORTED", "CHAPTER_COEFFS", "CHAPTER_SEEDS", "PAPER_CLAIMS", "AuditStudy", "Design",
    "KickResult", "Learned", "RPEResult", "ScalingStudy", "SpamStudy", "audit_study", "chapter_coeffs", "crb",
    "design", "deterministic_verdicts", "displaced_twirled", "displacement", "eq43_ratios", "hamiltonian",
    "kicked_evolution",
    "learn", "ramsey", "ramsey_crb", "recover", "rpe", "rpe_schedule", "scaling_study", "seeded_verdicts",
    "spam_study", "vacuum_constant", "vacuum_cumulants", "vacuum_signal",
]

_CF = {(1, 1): 1.0, (1, 0): 0.2 + 0.1j, (0, 1): 0.2 - 0.1j}
#: Cheap valid arguments for tests/test_api_fuzz.py (the other parameters keep their defaults).
FUZZ_BASE = {
    "hamiltonian": {"coeffs": _CF, "n_fock": 6},
    "displacement": {"beta": 0.3 + 0.1j, "n_fock": 12},
    "displaced_twirled": {"coeffs": _CF, "beta": 0.3 + 0.1j, "n_fock": 12},
    "vacuum_constant": {"coeffs": _CF, "beta": 0.3 + 0.1j},
    "design": {"degree": 2},
    "rpe": {"C": 0.3, "J": 3, "shots": 8},
    "ramsey": {"C": 0.3, "T": 100.0},
    "crb": {"shots": 8, "J": 3},
    "ramsey_crb": {"T": 100.0},
    "rpe_schedule": {"J": 3},
    "learn": {"coeffs": _CF, "J": 3, "n_fock": 12, "reps": 2},
    "scaling_study": {"reps": 2, "Js": (2, 3, 4)},
    "audit_study": {"reps": 2},
    "spam_study": {"reps": 2, "J": 3, "flips": (0.0,), "offsets": (0.0,)},
    "eq43_ratios": {"n": 4},
    "kicked_evolution": {"coeffs": _CF, "beta": 0.3, "dt": 0.1, "n_steps": 5, "n_fock": 10, "n_traj": 4},
    "seeded_verdicts": {"seed": 1},
    "chapter_coeffs": {},
    "summarize": {"n_fock": 12, "J": 4, "reps": 2},
    "render": {"n_fock": 12, "J": 4, "reps": 2},
}
