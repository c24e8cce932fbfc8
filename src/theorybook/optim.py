"""The book's optimizers under one stable import path for adopters: ``from theorybook.optim import DASH, POGO``.

* :class:`DASH` — block Shampoo with Adam grafting and stacked inverse roots (Modoranu et al. 2026), the optimizer
  of the DASH chapter (``theorybook.dash_shampoo.optimizer.Shampoo``, same class).
* :class:`POGO` — orthogonality-preserving steps on Stiefel/orthogonal parameter stacks, with Euclidean groups for
  everything else (Javaloy & Vergari 2026; ``theorybook.pogo_orthogonal.optimizer.POGO``, same class).

Both follow the ``torch.optim`` contract (closures, param groups, schedulers, ``state_dict`` round trips with
``torch.load``'s defaults, sparse and complex parameters refused), keep float32 statistics for 16-bit models, and run
their step eagerly inside ``torch.compile`` (the rest of a compiled training step compiles). The contract is tested
by ``tests/test_optim_contract.py`` for every optimizer listed there.
"""

from __future__ import annotations

from .dash_shampoo.optimizer import DEFAULTS as DASH_DEFAULTS
from .dash_shampoo.optimizer import PAPER_SETTINGS as DASH_PAPER_SETTINGS
from .dash_shampoo.optimizer import Shampoo as DASH
from .pogo_orthogonal.optimizer import DEFAULTS as POGO_DEFAULTS
from .pogo_orthogonal.optimizer import POGO

__all__ = ["DASH", "DASH_DEFAULTS", "DASH_PAPER_SETTINGS", "POGO", "POGO_DEFAULTS"]
