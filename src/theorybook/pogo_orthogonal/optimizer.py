r"""POGO as a ``torch.optim`` optimizer (Javaloy & Vergari, 2026), with Euclidean groups for everything else.

One POGO step with the base optimiser's direction :math:`\tilde G` and learning rate :math:`\eta` (rows, ``p ≤ n``):

.. math::

    \Psi = \tfrac12\,(XX^\top\tilde G - X\tilde G^\top X),\qquad
    M = X - \eta\Psi,\qquad
    X^+ = M + \lambda\,(M - MM^\top M),\quad \lambda=\tfrac12 .

**What enters the base optimiser's buffers.** The authors' code [paper, code] feeds the raw Euclidean gradient G to
the base optimiser (momentum buffer, VectorAdam's m and v) and makes only the current step tangent, through Ψ. A
Euclidean gradient generally has a component normal to the manifold (:math:`SX` with S symmetric), which Ψ removes
from the current step but which then stays in the buffers: later steps see a stale normal part that Ψ, taken at a
different X, no longer removes, and VectorAdam's v counts it in its norm. We instead project G onto the tangent space
at the current X before it enters any buffer, as Riemannian optimisers do:
:math:`P_X(G) = G - \mathrm{sym}(GX^\top)X` (rows; two products). Ψ annihilates normal components on the manifold,
:math:`\Psi(P_X G) = \Psi(G)`, so plain SGD without momentum is the paper's step exactly (it skips the projection);
with momentum or VectorAdam two losses that agree on the manifold now give the same run
(``tests/test_pogo_orthogonal.py``), which the authors' form does not.
"""

from __future__ import annotations

import inspect
import math
import warnings
from collections.abc import Callable

import torch
import torch.distributed as dist

from .. import validate
from ..optim_state import KeepStateDtypes
from .geometry import ORTHO_TOL, _check_orthonormal, _lr, _quartic_lambda, _rows

__all__ = ["DEFAULTS", "FEASIBILITY_BOUND", "POGO", "RESUME_TOL", "SAFE_ETA_PSI", "VADAM_EPS"]

#: VectorAdam's ε in m̂/(√v̂ + ε), applied in the statistics' dtype (float32 at least), where it does not underflow.
VADAM_EPS = 1e-8
#: The start tolerance, stated once: an orthogonal group's parameters must have max ‖XXᵀ − I‖_F ≤ ``feasibility_tol``
#: when added — by default this value, raised to the dtype's round-off (:data:`ORTHO_TOL` · √p) where that is
#: larger. POGO's own iterates drift by its η⁴ term (≈ 2e-3 after 5 steps, ≈ 0.06 with momentum 0.9), and its
#: correction contracts any error below the guard :data:`FEASIBILITY_BOUND`, so 0.1 accepts a resumed run's
#: parameters (and, e.g., 1.02·Q for small p, which the correction pulls back) while refusing unconstrained ones.
RESUME_TOL = 0.1
#: The feasibility guard: a step that starts from max ‖XXᵀ − I‖_F above this warns (once per optimizer) and is
#: counted in :attr:`POGO.infeasible_steps`. Below it every eigenvalue e of XXᵀ − I has |e| ≤ ½, where one correction
#: maps e to e²(e − 3)/4 (a contraction by ≤ 0.44).
FEASIBILITY_BOUND = 0.5
#: The step regime the guard's message recommends: η·max‖Ψ‖_F ≤ 0.8 leaves, from a feasible point, an error
#: ¾e² − ¼e³ ≤ 0.24 (e = (η‖Ψ‖₂)² ≤ 0.64), half the guard's bound.
SAFE_ETA_PSI = 0.8


def _check_pogo_group(group: dict) -> None:
    """Validate (and normalise in place) one POGO param group's hyperparameters."""
    group["lr"] = _lr(group["lr"])
    validate.one_of("base", group["base"], ("sgd", "vadam"))
    group["momentum"] = validate.number("momentum", group["momentum"], 0.0, 1.0, high_open=True)
    betas = group["betas"]
    if not isinstance(betas, tuple | list) or len(betas) != 2:
        raise ValueError(f"Invalid betas: {betas!r} (must be a pair (beta1, beta2))")
    group["betas"] = (validate.number("beta1", betas[0], 0.0, 1.0, high_open=True),
                      validate.number("beta2", betas[1], 0.0, 1.0, high_open=True))
    group["lam"] = validate.number("lam", group["lam"], 0.0, 1.0, low_open=True, high_open=True)
    group["lambda_every"] = validate.integer("lambda_every", group["lambda_every"], 0)
    if not isinstance(group["orthogonal"], bool):
        raise TypeError(f"Invalid orthogonal: {group['orthogonal']!r} (must be True or False)")
    if not isinstance(group["distributed"], bool):
        raise TypeError(f"Invalid distributed: {group['distributed']!r} (must be True or False)")
    group["weight_decay"] = validate.number("weight_decay", group.get("weight_decay", 0.0), 0.0, math.inf)
    if group["feasibility_tol"] is not None:
        group["feasibility_tol"] = validate.number("feasibility_tol", group["feasibility_tol"], 0.0,
                                                   FEASIBILITY_BOUND, low_open=True)


def _check_params(group: dict) -> None:
    """Refuse parameters an orthogonal (or any) group cannot take, with a message naming the fix."""
    for i, X in enumerate(group["params"]):
        if X.is_complex() or not X.is_floating_point():
            raise TypeError(f"Invalid params[{i}]: dtype {X.dtype} — POGO takes real floating-point "
                            "parameters (complex Stiefel/unitary constraints are not implemented)")
    if not group["orthogonal"]:
        return
    if group["weight_decay"]:
        raise ValueError(f"Invalid weight_decay: {group['weight_decay']!r} for an orthogonal group (must be 0: "
                         "‖X‖ is fixed on the manifold; use it on Euclidean groups)")
    hint = ("For ordinary (Euclidean) parameters use a separate group: POGO([{'params': orthonormal}, "
            "{'params': others, 'orthogonal': False}], lr)")
    for i, X in enumerate(group["params"]):
        if X.ndim < 2 or min(X.shape[-2:]) < 1:
            raise ValueError(f"Invalid params[{i}]: shape {tuple(X.shape)} in an orthogonal group (must be a "
                             f"matrix or a stack of matrices, ≥ 2 dimensions, none empty). {hint}")
        tol = group["feasibility_tol"]
        if tol is None:
            tol = max(RESUME_TOL, ORTHO_TOL.get(X.dtype, 1e-4) * math.sqrt(min(X.shape[-2:])))
        try:
            _check_orthonormal(f"params[{i}]", X.detach(), tol)
        except ValueError as err:
            raise ValueError(f"{err}. {hint}. To resume from a POGO run that drifted further, pass "
                             f"feasibility_tol (at most {FEASIBILITY_BOUND})") from None


def _tangent(R: torch.Tensor, D: torch.Tensor) -> torch.Tensor:
    r"""Euclidean-metric projection onto the tangent space at row-orthonormal R: :math:`D - \mathrm{sym}(DR^\top)R`."""
    S = D @ R.mT
    return D - (0.5 * (S + S.mT)) @ R


class POGO(KeepStateDtypes, torch.optim.Optimizer):
    r"""POGO: base optimiser → relative gradient → tangent step → one-step normal correction.

    Parameters are stacks ``(..., p, n)`` (rows orthonormal if ``p ≤ n``, else columns). When a group is added
    (construction or :meth:`add_param_group`) each parameter must satisfy max ‖XXᵀ − I‖_F ≤ the start tolerance
    :data:`RESUME_TOL` (= 0.1, or ``feasibility_tol`` ≤ ½ when given), so that the usual resume — build the optimizer
    on the model's current, slightly drifted parameters, then ``load_state_dict`` — needs no option.

    * ``base="sgd"``: :math:`\tilde G = \mathrm{buf} \leftarrow \mu\,\mathrm{buf} + P_X(G)` (``momentum`` μ; the
      plain gradient G when μ = 0, the paper's step exactly).
    * ``base="vadam"`` (VectorAdam): :math:`m\leftarrow\beta_1 m+(1-\beta_1)P_X(G)`, one scalar per matrix
      :math:`v\leftarrow\beta_2 v+(1-\beta_2)\lVert P_X(G)\rVert_F^2`,
      :math:`\tilde G=\hat m/(\sqrt{\hat v}+10^{-8})` with bias correction.

    :math:`P_X(G) = G - \mathrm{sym}(GX^\top)X` is the tangent projection at the current X (the authors' code feeds
    G itself to the buffers; see the module docstring for why we do not). Then
    :math:`\Psi=\tfrac12(XX^\top\tilde G-X\tilde G^\top X)`, :math:`M=X-\eta\Psi`,
    :math:`X^+=M+\lambda(M-MM^\top M)` with ``lam`` (½ = one Newton–Schulz polar step), or, every
    ``lambda_every`` = k > 0 steps, λ from :func:`quartic_lambda`. Six batched products per step with plain SGD
    (see :func:`product_count`), eight with a buffer.

    **Settings.** ``base="sgd"`` is the default: in ``bench/pogo.py``'s regime race (1 to 4096 stacked 64 × 32
    matrices) it took the fewest steps and the least time of the two bases at every size. ``lr`` has no default —
    SGD's scales with the gradient. The rule that stays inside the guard's safe regime: η ≤ 0.8 / max‖Ψ₁‖_F
    (:data:`SAFE_ETA_PSI`), with Ψ₁ the first step's Ψ (after one step it is ``opt.last_psi(X)``); the first
    steps from a far start have the largest Ψ. "η ≈ 1/L to 2/L" is not safe by itself: on Procrustes St(80, 12) with
    L = 1 it gives η·‖Ψ₁‖_F = 0.95 and 1.91 (drift to ‖XᵀX − I‖_F = 0.32 at 2/L) where the rule gives η ≤ 0.84.
    **POGO's Ψ is half the canonical Riemannian gradient** (G − XGᵀX for row-orthonormal X; on a square orthogonal
    matrix Ψ equals the Euclidean-metric Riemannian gradient): on tall Stiefel matrices, where most of the gradient is
    off X's span, POGO-sgd needs about twice a Riemannian SGD's lr for the same step (an adopter's review: best
    3–4/L against 2/L for Riemannian SGD). With ``base="vadam"`` the step is normalised *per matrix*
    (‖Ψ̃‖_F ≤ 1), so ``lr`` is a length per matrix, not per entry: η ≤ 0.1 keeps every step's error ≤ ¾η⁴ ≲ 1e-4,
    and η up to ≈ 3 still converges there (the pilot's pick; the review's best was 0.3–2); a Euclidean
    ``base="vadam"`` group is plain Adam, whose lr is per entry, so give it its own ``lr`` in its group. With
    ``base="sgd"``, ``betas`` is unused — a scheduler that cycles momentum (``OneCycleLR``, ``CyclicLR`` with
    ``cycle_momentum=True``) cycles the unused ``betas[0]``; set ``cycle_momentum=False``. A rate that is too large
    trips the guard below, whose message names a safe one.

    **Feasibility guard.** Every step reads max ‖XXᵀ − I‖_F from the Gram matrix XXᵀ it computes anyway (no extra
    product; one host sync per step). A step that starts above :data:`FEASIBILITY_BOUND` (½) warns once per optimizer
    (``RuntimeWarning``) and is counted, per parameter, in :attr:`infeasible_steps` — the drift is reported one step
    after the step that caused it, so the warning's advice (the lr that keeps η·max‖Ψ‖_F ≤ 0.8) uses *that* step's
    Ψ, kept per parameter (:meth:`last_psi`; on the host, not in the state dict): following it prevents the drift it
    reports (``tests/test_optim_contract.py``: lr 2.37 on St(80, 12) drifts to 0.58 and is told lr ≤ 0.84, which
    peaks at 0.012; the Ψ of the step after the damage said 1.43).

    **Euclidean groups.** A param group with ``orthogonal=False`` (biases, an unconstrained head) holds ordinary
    parameters of any shape and takes a plain step with the same base: ``"sgd"`` → heavy-ball momentum μ,
    ``"vadam"`` → Adam (element-wise v). Example:
    ``POGO([{"params": stiefel}, {"params": others, "orthogonal": False}], lr=0.1)``. Decoupled ``weight_decay``
    (AdamW-style, w ← (1 − ηλ_wd)w before the base step) applies to Euclidean groups; an orthogonal group refuses it.

    **Precision.** Buffers and the step live in ``promote_types(p.dtype, float32)``: a float16/bfloat16 model keeps
    float32 statistics (and VectorAdam's ε does not underflow), a float64 model stays in float64; the result is cast
    back. The quartic λ is computed in float64 and clipped to [0, 1]. Complex and non-floating parameters are refused.

    **Refusals are atomic.** A step that is refused (a sparse or complex gradient, a complex or non-floating
    parameter, a gradient or buffer of the wrong shape) raises before any parameter or state tensor of any group
    changes: a pre-pass checks every group first (``tests/test_optim_contract.py``).

    **Distributed.** ``distributed=True`` with ``torch.distributed`` initialised (e.g. under DDP: every rank holds the
    same averaged gradient): the base direction is formed on every rank (so the state stays identical everywhere),
    and the products of a stack ``(b, p, n)`` are split into ``world_size`` equal shares of matrices, each rank
    computing its share, then ``all_gather``. Every rank must call :meth:`step`.

    State is flat (string keys, tensors and ints): ``torch.save(opt.state_dict())`` loads back with ``torch.load``'s
    default ``weights_only=True``, statistics in the dtype they were saved in. :meth:`step` is excluded from dynamo
    graphs (``torch.compiler.disable``): in a compiled training step the forward and backward passes compile and the
    step runs eagerly (``tests/test_optim_contract.py``).
    """

    def __init__(self, params, lr: float, *, base: str = "sgd", momentum: float = 0.0,
                 betas: tuple[float, float] = (0.9, 0.999), lam: float = 0.5, lambda_every: int = 0,
                 orthogonal: bool = True, feasibility_tol: float | None = None, distributed: bool = False,
                 weight_decay: float = 0.0):
        defaults = dict(lr=lr, base=base, momentum=momentum, betas=betas, lam=lam, lambda_every=lambda_every,
                        orthogonal=orthogonal, feasibility_tol=feasibility_tol, distributed=distributed,
                        weight_decay=weight_decay)
        _check_pogo_group(defaults)
        self._warned_feasibility = False
        self._last: dict[torch.Tensor, tuple[float, float]] = {}
        super().__init__(params, defaults)

    def add_param_group(self, param_group: dict) -> None:
        """torch.optim's ``add_param_group``, validating the group's hyperparameters and, for an orthogonal group,
        its parameters (matrices, orthonormal within the start tolerance). A rejected group is not kept."""
        super().add_param_group(param_group)
        try:
            _check_pogo_group(self.param_groups[-1])
            _check_params(self.param_groups[-1])
        except (TypeError, ValueError):
            del self.param_groups[-1]
            raise

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        self.__dict__.setdefault("_warned_feasibility", False)
        self.__dict__.setdefault("_last", {})
        for group in self.param_groups:
            group.setdefault("weight_decay", 0.0)


    def last_psi(self, X: torch.Tensor) -> float | None:
        """max ‖Ψ‖_F of X's latest step (over its stack), or ``None`` before its first step in this process — after
        one step, ``0.8 / opt.last_psi(X)`` is the largest lr in the guard's safe regime for that Ψ."""
        last = self._last.get(X)
        return None if last is None else last[0]

    @property
    def infeasible_steps(self) -> int:
        """Steps (summed over parameters) that started with max ‖XXᵀ − I‖_F > :data:`FEASIBILITY_BOUND`."""
        return sum(int(st.get("infeasible_steps", 0)) for st in self.state.values())

    @torch.compiler.disable
    @torch.no_grad()
    def step(self, closure: Callable[[], torch.Tensor] | None = None):
        """One POGO step (runs eagerly even inside ``torch.compile``; see the class docstring)."""
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        self._check_step()  # every refusal before any parameter or state tensor of any group changes
        checks: list[tuple[torch.Tensor, dict, torch.Tensor, torch.Tensor]] = []
        for group in self.param_groups:
            for X in group["params"]:
                if X.grad is None:
                    continue
                if group["orthogonal"]:
                    d, psi = self._update(X, X.grad, group, self.state[X])
                    checks.append((X, group, d, psi))
                else:
                    self._euclidean(X, X.grad, group, self.state[X])
        if checks:
            self._guard(checks)
        return loss

    def _check_step(self) -> None:
        """The pre-pass that makes a refused step atomic: every parameter with a gradient, in every group, is checked
        (sparse or complex gradient, complex or non-floating parameter, a gradient or saved buffer whose shape is not
        the parameter's, an orthogonal parameter that is no longer a matrix stack) before anything changes."""
        for gi, group in enumerate(self.param_groups):
            for i, X in enumerate(group["params"]):
                G = X.grad
                if G is None:
                    continue
                where = f"param_groups[{gi}]['params'][{i}]"
                if G.is_sparse:
                    raise RuntimeError(f"POGO does not support sparse gradients ({where}); no parameter or state "
                                       "was changed")
                if X.is_complex() or G.is_complex() or not X.is_floating_point():
                    raise TypeError(f"Invalid {where}: dtype {X.dtype}, gradient {G.dtype} — POGO takes real "
                                    "floating-point parameters (complex Stiefel/unitary constraints are not "
                                    "implemented); no parameter or state was changed")
                if G.shape != X.shape:
                    raise RuntimeError(f"Invalid {where}: gradient shape {tuple(G.shape)} ≠ parameter shape "
                                       f"{tuple(X.shape)}; no parameter or state was changed")
                st = self.state.get(X, {})
                for k in ("momentum_buffer", "exp_avg"):
                    if k in st and st[k].shape != X.shape:
                        raise RuntimeError(f"Invalid {where}: shape {tuple(X.shape)} but its saved {k} has shape "
                                           f"{tuple(st[k].shape)}; no parameter or state was changed")
                if group["orthogonal"] and (X.ndim < 2 or min(X.shape[-2:]) < 1):
                    raise RuntimeError(f"Invalid {where}: shape {tuple(X.shape)} in an orthogonal group (must be "
                                       "a matrix stack); no parameter or state was changed")

    def _guard(self, checks: list[tuple[torch.Tensor, dict, torch.Tensor, torch.Tensor]]) -> None:
        vals = torch.stack([torch.stack([d.float(), s.float()]) for _, _, d, s in checks]).cpu()  # one sync
        for (X, group, _, _), (d, psi) in zip(checks, vals.tolist(), strict=True):
            st = self.state[X]
            # The drift read at the start of this step was done by the *previous* step: its advice must come from
            # that step's ‖Ψ‖ (this step's Ψ is read at the drifted point and is usually smaller). Kept on the host,
            # outside the state dict (advice only; after a resume the first warning falls back to this step's Ψ).
            prev_psi, prev_lr = self._last.get(X, (None, None))
            self._last[X] = (float(psi), float(group["lr"]))
            if not d > FEASIBILITY_BOUND:
                continue
            st["infeasible_steps"] = st.get("infeasible_steps", 0) + 1
            if self._warned_feasibility:
                continue
            self._warned_feasibility = True
            if prev_psi is None:  # e.g. the first step after a resume: only this step's Ψ is known
                prev_psi, prev_lr, which = psi, group["lr"], "this step's"
            else:
                which = "the previous step's"
            safe = SAFE_ETA_PSI / prev_psi if prev_psi > 0 else math.inf
            warnings.warn(
                f"POGO: max ‖XXᵀ − I‖_F = {d:.3g} > {FEASIBILITY_BOUND} at the start of step {st['step']}: the "
                f"iterate is leaving the manifold. The step that did it had lr {prev_lr:g} and η·max‖Ψ‖_F = "
                f"{prev_lr * prev_psi:.3g} ({which} Ψ); lr ≤ {safe:.3g} (η·max‖Ψ‖_F ≤ {SAFE_ETA_PSI}) for that "
                "Ψ keeps each step's error below ¼, where the correction contracts it quadratically. Further such "
                "steps are counted in .infeasible_steps without another warning.", RuntimeWarning, stacklevel=5)

    @staticmethod
    def _euclidean(w: torch.Tensor, g: torch.Tensor, group: dict, state: dict) -> None:
        state["step"] = t = state.get("step", 0) + 1
        work = torch.promote_types(w.dtype, torch.float32)
        wf, g = w.to(work), g.to(work)  # wf is w itself unless w is 16-bit
        if group["weight_decay"]:
            wf.mul_(1 - group["lr"] * group["weight_decay"])  # decoupled (AdamW-style): before the base step
        if group["base"] == "sgd":
            if group["momentum"] > 0:
                buf = state.get("momentum_buffer")
                if buf is None:
                    buf = state["momentum_buffer"] = g.clone()
                else:
                    buf.mul_(group["momentum"]).add_(g)
                g = buf
            wf.add_(g, alpha=-group["lr"])
        else:
            b1, b2 = group["betas"]
            if "exp_avg" not in state:
                state["exp_avg"] = torch.zeros(w.shape, dtype=work, device=w.device)
                state["exp_avg_sq"] = torch.zeros(w.shape, dtype=work, device=w.device)
            m, v = state["exp_avg"], state["exp_avg_sq"]
            m.lerp_(g, 1 - b1)
            v.mul_(b2).addcmul_(g, g, value=1 - b2)
            denom = (v / (1 - b2**t)).sqrt_().add_(VADAM_EPS)
            wf.addcdiv_(m / (1 - b1**t), denom, value=-group["lr"])
        if wf is not w:
            w.copy_(wf)

    @staticmethod
    def _update(X: torch.Tensor, G: torch.Tensor, group: dict, state: dict) -> tuple[torch.Tensor, torch.Tensor]:
        """One orthogonal step in place; returns (max ‖XXᵀ − I‖_F at the start, max ‖Ψ‖_F) as 0-d tensors."""
        state["step"] = t = state.get("step", 0) + 1
        work = torch.promote_types(X.dtype, torch.float32)  # 16-bit parameters: statistics and step in float32
        R = _rows(X)
        R_w, D = R.to(work), _rows(G).to(work)
        if group["base"] == "sgd" and group["momentum"] > 0:
            T = _tangent(R_w, D)
            if "momentum_buffer" not in state:
                state["momentum_buffer"] = torch.zeros(X.shape, dtype=work, device=X.device)
                _rows(state["momentum_buffer"]).copy_(T)
            else:
                _rows(state["momentum_buffer"]).mul_(group["momentum"]).add_(T)
            D = _rows(state["momentum_buffer"])
        elif group["base"] == "vadam":
            T = _tangent(R_w, D)
            b1, b2 = group["betas"]
            if "exp_avg" not in state:
                state["exp_avg"] = torch.zeros(X.shape, dtype=work, device=X.device)
                state["exp_avg_sq"] = torch.zeros(X.shape[:-2] + (1, 1), dtype=work, device=X.device)
            m, v = _rows(state["exp_avg"]), state["exp_avg_sq"]
            m.lerp_(T, 1 - b1)
            v.mul_(b2).add_(T.square().sum((-2, -1), keepdim=True), alpha=1 - b2)
            D = (m / (1 - b1**t)) / (v / (1 - b2**t)).sqrt_().add_(VADAM_EPS)
        quartic = group["lambda_every"] > 0 and t % group["lambda_every"] == 0
        if R.ndim >= 3 and group["distributed"] and dist.is_available() and dist.is_initialized() \
                and dist.get_world_size() > 1:
            shape = R.shape
            new, d, psi = _sharded(_pogo_core, R_w.reshape(-1, *shape[-2:]), D.reshape(-1, *shape[-2:]),
                                   group["lr"], group["lam"], quartic)
            R.copy_(new.reshape(shape))
        else:
            new, d, psi = _pogo_core(R_w, D, group["lr"], group["lam"], quartic)
            R.copy_(new)
        return d.max(), psi.max()


def _pogo_core(R: torch.Tensor, D: torch.Tensor, lr: float, lam: float,
               quartic: bool) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Tangent step and normal correction on row-orthonormal R with base direction D (the six products).

    Returns (X⁺, per-matrix ‖RRᵀ − I‖_F, per-matrix ‖Ψ‖_F), the last two read off what the step computes anyway."""
    S = R @ R.mT
    Psi = 0.5 * (S @ D - (R @ D.mT) @ R)
    eye = torch.eye(S.shape[-1], dtype=S.dtype, device=S.device)
    d = torch.linalg.matrix_norm(S - eye)
    psi = torch.linalg.matrix_norm(Psi)
    M = R - lr * Psi
    lam = _quartic_lambda(M) if quartic else lam
    return M + lam * (M - (M @ M.mT) @ M), d, psi


def _sharded(fn: Callable[..., tuple[torch.Tensor, ...]], R: torch.Tensor, D: torch.Tensor,
             *args) -> tuple[torch.Tensor, ...]:
    """fn on this rank's equal share of the (N, p, n) stacks (padded with copies of the first matrix), then
    ``all_gather`` of each output: every rank ends with fn of the whole stack."""
    world, rank = dist.get_world_size(), dist.get_rank()
    N = R.shape[0]
    k = -(-N // world)
    if k * world > N:
        R = torch.cat([R, R[:1].expand(k * world - N, *R.shape[1:])])
        D = torch.cat([D, D[:1].expand(k * world - N, *D.shape[1:])])
    out = []
    for share in fn(R[rank * k : (rank + 1) * k], D[rank * k : (rank + 1) * k], *args):
        share = share.contiguous()
        parts = [torch.empty_like(share) for _ in range(world)]
        dist.all_gather(parts, share)
        out.append(torch.cat(parts)[:N])
    return tuple(out)


#: The constructor's defaults (read from its signature, so that they are stated once).
DEFAULTS: dict = {k: v.default for k, v in inspect.signature(POGO.__init__).parameters.items()
                  if v.default is not inspect.Parameter.empty}
