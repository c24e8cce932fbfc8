"""DASH: faster Shampoo through stacked blocks and better inverse roots (Modoranu et al., ICML 2026,
arXiv 2602.02016) — solvers and optimizer written from the paper's equations.

Public API (arguments validated; bad input raises ``ValueError`` naming parameter, value and valid range):

``inverse_root(A, p, *, method="ndb"|"cn"|"evd"|"chebyshev", iters=10, scaling="fro"|"pi"|"pim", eps=0.0,
degree=60)`` — (A+εI)^{-1/p} for one matrix or an (N, B, B) stack, in one batched call.
``Shampoo`` — a ``torch.optim.Optimizer``: block Shampoo (B×B tiles) with Adam grafting, factors of equal size
stacked across tiles and parameters. Solver pieces: ``newton_db``, ``coupled_newton``, ``evd_root``,
``chebyshev_root``, ``chebyshev_coefficients``, ``scale``, ``bmm_count``. Test data: ``spd_stack``,
``reference_root``, ``relative_error``. Scalar theory and sympy: :mod:`.theory`. Experiments: :mod:`.experiment`.
Widget: :func:`.widgets.explorer` (pure compute :func:`.widgets.solver_panel`).
"""

from .optimizer import Shampoo, tile_slices
from .solvers import (
    METHODS,
    SCALINGS,
    bmm_count,
    chebyshev_coefficients,
    chebyshev_root,
    coupled_newton,
    evd_root,
    inverse_root,
    newton_db,
    reference_root,
    relative_error,
    scale,
    spd_stack,
)

__all__ = [
    "METHODS",
    "SCALINGS",
    "Shampoo",
    "bmm_count",
    "chebyshev_coefficients",
    "chebyshev_root",
    "coupled_newton",
    "evd_root",
    "inverse_root",
    "newton_db",
    "reference_root",
    "relative_error",
    "scale",
    "spd_stack",
    "tile_slices",
]
