"""DASH: faster Shampoo through stacked blocks and better inverse roots (Modoranu et al., ICML 2026,
arXiv 2602.02016) — solvers and optimizer written from the paper's equations.

Public API (arguments validated; bad input raises ``ValueError`` naming parameter, value and valid range):

``inverse_root(A, p, *, method="ndb"|"cn"|"evd"|"chebyshev", iters=10, scaling="fro"|"pi"|"pim", eps=0.0,
degree=60)`` — (A+εI)^{-1/p} for one matrix or an (N, B, B) stack, in one batched call.
``Shampoo`` — a ``torch.optim.Optimizer``: block Shampoo (B×B tiles) with Adam grafting, factors of equal size
stacked across tiles and parameters. Solver pieces: ``newton_db``, ``coupled_newton``, ``evd_root``,
``chebyshev_root``, ``chebyshev_coefficients``, ``scale``, ``bmm_count``. Test data: ``spd_stack``,
``reference_root``, ``relative_error``. Scalar theory and sympy: :mod:`.theory`. Experiments: :mod:`.experiment`.
Widget: :func:`.widgets.explorer` (pure compute :func:`.widgets.solver_panel`). Verdict rows:
``seeded_verdicts(seed)`` / ``deterministic_verdicts()`` (:mod:`.verdicts`), ``CHAPTER_SEEDS``.
"""

import numpy as np
import torch

from .optimizer import Shampoo, tile_slices
from .solvers import (
    METHODS,
    SCALINGS,
    bmm_count,
    chebyshev_coefficients,
    chebyshev_root,
    coupled_newton,
    error_or_inf,
    evd_root,
    inverse_root,
    newton_db,
    reference_root,
    relative_error,
    scale,
    spd_stack,
)
from .verdicts import CHAPTER_SEEDS, deterministic_verdicts, seeded_verdicts

__all__ = [
    "CHAPTER_SEEDS",
    "METHODS",
    "SCALINGS",
    "Shampoo",
    "bmm_count",
    "chebyshev_coefficients",
    "chebyshev_root",
    "coupled_newton",
    "deterministic_verdicts",
    "error_or_inf",
    "evd_root",
    "inverse_root",
    "newton_db",
    "reference_root",
    "relative_error",
    "scale",
    "seeded_verdicts",
    "spd_stack",
    "tile_slices",
]

#: Cheap, valid base arguments for the API fuzz test (tests/test_api_fuzz.py); each bad value replaces one.
FUZZ_BASE = {
    name: {"A": spd_stack(2, 6, 10.0, device="cpu"), "p": 4}
    for name in ("inverse_root", "evd_root", "coupled_newton", "chebyshev_root", "reference_root")
}
FUZZ_BASE.update({
    "newton_db": {"A": spd_stack(2, 6, 10.0, device="cpu")},
    "scale": {"A": spd_stack(2, 6, 10.0, device="cpu")},
    "solve_stacked": {"A": spd_stack(2, 6, 10.0, device="cpu")},
    "solve_loop": {"A": spd_stack(2, 6, 10.0, device="cpu")},
    "relative_error": {"X": spd_stack(2, 6, 10.0, device="cpu"), "X_ref": spd_stack(2, 6, 5.0, device="cpu")},
    "error_or_inf": {"X": spd_stack(2, 6, 10.0, device="cpu"), "X_ref": spd_stack(2, 6, 5.0, device="cpu")},
    "iterations_to_target": {"A": spd_stack(2, 6, 10.0, device="cpu"), "ref": spd_stack(2, 6, 10.0, device="cpu"),
                             "method": "ndb", "target": 1e-3, "max_iters": 5},
    "chebyshev_coefficients": {"p": 4, "lower": 1e-3, "degree": 8, "nodes": 200},
    "spd_stack": {"n": 2, "size": 4},
    "tile_slices": {"shape": (5, 7), "block": 4},
    "Shampoo": {"params": [torch.nn.Parameter(torch.ones(3, 3))]},
    "train_shampoo": {"steps": 2, "hidden": 8, "batch": 8},
    "error_curve": {"kappa": 10.0, "method": "ndb", "scaling": "fro", "iters": [1, 2], "n": 1, "size": 4},
    "stacking_speedup": {"method": "ndb", "n": 2, "size": 4, "repeats": 1},
    "median_time": {"fn": lambda: None, "repeats": 1},
    "ndb_scalar": {"a": np.array([0.1, 1.0]), "iters": 5},
    "cn_scalar": {"lam": np.array([0.1, 1.0]), "p": 4, "iters": 5, "s": 1.0},
    "predicted_error": {"lam": np.array([0.1, 1.0]), "method": "cn", "iters": 5, "s": 1.0},
    "chebyshev_predicted_error": {"lam": np.array([0.1, 1.0]), "s": 2.0, "eps": 1e-3, "degree": 8},
    "escape_iterations": {"ratio": 1e-3, "growth": 2.25},
    "bernstein_rho": {"a": 1e-3},
    "solver_panel": {"block_size": 8, "n_blocks": 2},
    "render": {"block_size": 16},
    "explorer": {"block_size": 16},
    "operation_counts": {"size": 8, "blocks": 1},
    "train_heldout": {"steps": 2, "eval_every": 1, "hidden": 8, "batch": 8},
    "heldout_comparison": {"configs": (("cn", "fro"),), "seeds": (0, 1), "steps": 2, "eval_every": 1, "hidden": 8,
                           "batch": 8},
    "heldout_results": {"n_seeds": 2, "steps": 2, "eps": (1e-4,)},
    "scaling_iterations": {"size": 8, "kappa": 10.0, "spectrum": "flat"},
    "scaling_prediction": {"size": 8, "kappa": 10.0, "spectrum": "flat"},
    "t_threshold": {"n": 6},
})


def _fuzz_heldout() -> dict:
    """Synthetic held-out curves (3 seeds, three dampings, no training) for the fuzz test's calls of the verdict
    builders."""
    from .experiment import HeldoutRun, TrainRun

    def run(label: str, level: float, k: int) -> HeldoutRun:
        return HeldoutRun([0, 10, 20], [2.3, level + 0.01 * k, level - 0.1 + 0.01 * k], TrainRun([], 0.0, label), label)

    return {eps: {lab: [run(lab, lvl, k) for k in range(3)]
                  for lab, lvl in (("NDB-fro", 1.05), ("CN-fro", 1.0), ("EVD", 1.01))} for eps in (1e-6, 1e-4, 1e-2)}


_HELDOUT = _fuzz_heldout()
#: Iteration counts in the shape of ``verdicts.scaling_table`` (no solving), for the fuzz test's builder calls.
_SCALING = {"flat": {64: {"fro": 13, "pim": 12}, 128: {"fro": 13, "pim": 12}, 256: {"fro": 14, "pim": 12}},
            "logspace": {64: {"fro": 12, "pim": 12}, 128: {"fro": 12, "pim": 12}, 256: {"fro": 13, "pim": 12}}}
FUZZ_BASE.update({
    "heldout_stats": {"results": _HELDOUT[1e-4], "a": "NDB-fro", "b": "CN-fro"},
    "heldout_verdicts": {"results": _HELDOUT},
    "seeded_verdicts": {"heldout": _HELDOUT, "scaling": _SCALING},
    "chapter_verdicts": {"heldout": _HELDOUT, "scaling": _SCALING},
    "scaling_table": {"seed": 0},
})
