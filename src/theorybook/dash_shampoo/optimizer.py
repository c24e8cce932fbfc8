r"""Block Shampoo with Adam grafting, preconditioner blocks stacked by size (the DASH layout), as a torch optimizer.

For every matrix parameter W (m × n; a tensor with more than two dimensions is seen as shape[0] × the rest),
split into tiles of at most B × B, and each tile's gradient G:

.. math::

    L &\leftarrow \beta_{LR}L + (1-\beta_{LR})GG^\top,\qquad R \leftarrow \beta_{LR}R + (1-\beta_{LR})G^\top G,\\
    A &\leftarrow \beta_g A + (1-\beta_g)\,G\odot G,\qquad \tilde G \leftarrow \beta_G\tilde G + (1-\beta_G)G,\\
    \bar L &= (L+\varepsilon I)^{-1/4},\ \bar R = (R+\varepsilon I)^{-1/4}\quad\text{(every ``inv_root_freq`` steps)},\\
    P_g &= \frac{\tilde G/(1-\beta_G^t)}{\sqrt{A/(1-\beta_g^t)}+10^{-8}},\qquad U = \bar L\tilde G\bar R,\qquad
    P = \frac{\|P_g\|_F}{\|U\|_F}\,U\ \text{(per tile)},\\
    W &\leftarrow (1-\eta\lambda)W - \eta P.

Before ``start_preconditioning_step`` the step is P = P_g (Adam); L and R accumulate from step 1.

Tiles are cut by reshape/permute, not by a per-tile loop: the rows split into ⌊m/B⌋ full bands plus a remainder,
the columns likewise, so a matrix has at most four *regions* (full×full, full×rest, rest×full, rest×rest), each a
``(tiles, b_m, b_n)`` view. All L and R factors of the same size — across tiles, regions *and* parameters whose
roots are due at this step — are concatenated into one (N, b, b) stack and sent to the inverse-root solver in a
single call; that is DASH's stacking. A root that comes back non-finite (or a solver that raises) is rejected:
the previous root (the identity before the first success) is kept and :attr:`Shampoo.root_failures` counts it.

**Precision.** Statistics (momentum, grafting second moment, L, R) and inverse roots live in
``preconditioner_dtype`` promoted with the parameter's dtype — float32 by default, so a bfloat16 or float16 model
keeps float32 statistics and float32 roots (as mixed-precision Shampoo implementations do), while a float64 model
stays in float64; the update is computed in that dtype and cast back to the parameter. The Adam-grafting epsilon
(10⁻⁸) and the norm floor are applied in that dtype, where they do not underflow.

**Root failures are never silent.** A failing root is counted (:attr:`Shampoo.root_failures`, per parameter in its
state) and the first failure warns once per optimizer (``RuntimeWarning``), naming the count; only a numerical
failure is caught (non-finite result or ``torch.linalg.LinAlgError``) — any other error, e.g. a solver that is not
implemented for the dtype, propagates.

**torch.compile.** :meth:`Shampoo.step` is excluded from dynamo graphs (``torch.compiler.disable``): inside a
compiled training step the forward and backward passes compile, and the optimizer step runs eagerly — one graph
break at the call, none inside the step loop — with the same parameters as an eager step (checked over 10 steps in
``tests/test_optim_contract.py``). Tracing the step itself is not supported: its state holds Python ints and its
per-parameter loop keys a dict by tensor, which dynamo mis-traced (weights updated twice, biases not at all).

State is flat: per parameter, string keys holding tensors and ints only (``step``, ``block_size``,
``root_failures``, ``momentum``, ``graft``, ``L_<region>``, ``R_<region>``, ``inv_L_<region>``,
``inv_R_<region>``), so ``torch.save(opt.state_dict())`` loads back with ``torch.load``'s default
``weights_only=True``. Parameters with fewer than two dimensions (biases, gains) take the Adam grafting direction
P_g alone (a simplification: DASH runs Shampoo-AdaGrad with root 2 on 1-D parameters).
"""

from __future__ import annotations

import inspect
import math
import warnings
from collections import defaultdict

import torch
import torch.distributed as dist

from .. import validate
from ..optim_state import KeepStateDtypes
from .solvers import MAX_DEGREE, MAX_ITERS, METHODS, SCALINGS, solve_unchecked

__all__ = ["DEFAULTS", "PAPER_SETTINGS", "Shampoo", "tile_slices"]

#: The paper's run settings (Modoranu et al. 2026, the 953M-parameter Llama runs; lr 1e-3 and betas are our defaults
#: too), by root method: ``Shampoo(params, **PAPER_SETTINGS["ndb"])``. The paper's blocks are B = 1024 or 2048.
PAPER_SETTINGS: dict[str, dict] = {
    "ndb": {"method": "ndb", "inv_root_freq": 1, "iters": 10, "scaling": "fro", "eps": 0.0, "block_size": 1024},
    "cn": {"method": "cn", "inv_root_freq": 1, "iters": 10, "scaling": "fro", "eps": 0.0, "block_size": 1024},
    "evd-freq1": {"method": "evd", "inv_root_freq": 1, "eps": 1e-10, "block_size": 1024},
    "evd-freq10": {"method": "evd", "inv_root_freq": 10, "eps": 1e-10, "block_size": 1024},
    "chebyshev": {"method": "chebyshev", "inv_root_freq": 1, "degree": 60, "scaling": "pim", "eps": 1e-10,
                  "block_size": 1024},
}

#: Region names: (row part, column part), "f" = full B-bands, "r" = the remainder band.
_PARTS = ("f", "r")


def tile_slices(shape: tuple[int, int], block: int) -> dict[tuple[int, int], list[tuple[slice, slice]]]:
    """Tiles of an m × n matrix with side ≤ ``block``, grouped by tile shape (edge tiles form their own groups).

    A reference description of the tiling (the optimizer itself cuts tiles by reshape/permute, in the same order).
    """
    block = validate.integer("block", block, 1)
    if not isinstance(shape, tuple | list | torch.Size) or len(shape) != 2:
        raise TypeError(f"Invalid shape: {shape!r} (must be a pair (m, n))")
    m, n = (validate.integer(name, v, 1) for name, v in zip(("shape[0]", "shape[1]"), shape, strict=True))
    if math.ceil(m / block) * math.ceil(n / block) > 10**6:
        raise ValueError(f"Invalid block: {block} (a {m} × {n} matrix would have more than 10⁶ tiles: raise block)")
    groups: dict[tuple[int, int], list[tuple[slice, slice]]] = defaultdict(list)
    for r in range(0, m, block):
        for c in range(0, n, block):
            rs, cs = slice(r, min(r + block, m)), slice(c, min(c + block, n))
            groups[(rs.stop - rs.start, cs.stop - cs.start)].append((rs, cs))
    return dict(groups)


def _bands(size: int, block: int) -> list[tuple[str, int, int, int, int]]:
    """(part, start, stop, count, side) of the full bands and the remainder band of one axis."""
    full = size // block
    out = []
    if full:
        out.append(("f", 0, full * block, full, block))
    if size - full * block:
        out.append(("r", full * block, size, 1, size - full * block))
    return out


def _regions(m: int, n: int, block: int) -> list[tuple[str, int, int, int, int, int, int, int, int]]:
    """(name, r0, r1, c0, c1, rows of tiles, cols of tiles, b_m, b_n) for each non-empty region of an m × n matrix."""
    return [(rp + cp, r0, r1, c0, c1, nr, nc, bm, bn)
            for rp, r0, r1, nr, bm in _bands(m, block) for cp, c0, c1, nc, bn in _bands(n, block)]


def _tiles(X: torch.Tensor, region) -> torch.Tensor:
    """The region's tiles as a (nr·nc, b_m, b_n) tensor, row-major tile order."""
    _, r0, r1, c0, c1, nr, nc, bm, bn = region
    return X[r0:r1, c0:c1].reshape(nr, bm, nc, bn).permute(0, 2, 1, 3).reshape(nr * nc, bm, bn)


def _untile(T: torch.Tensor, region) -> torch.Tensor:
    """Inverse of :func:`_tiles`: (nr·nc, b_m, b_n) → the (r1−r0) × (c1−c0) block of the matrix."""
    _, _, _, _, _, nr, nc, bm, bn = region
    return T.reshape(nr, nc, bm, bn).permute(0, 2, 1, 3).reshape(nr * bm, nc * bn)


def _matrix(t: torch.Tensor) -> torch.Tensor:
    """The matrix view of a parameter-shaped tensor: (shape[0], prod(shape[1:]))."""
    return t if t.ndim == 2 else t.reshape(t.shape[0], -1)


def _check_group(group: dict) -> None:
    """Validate (and normalise in place) one param group's hyperparameters."""
    group["lr"] = validate.number("lr", group["lr"], 0.0, math.inf, low_open=True)
    betas = group["betas"]
    if not isinstance(betas, tuple | list) or len(betas) != 3:
        raise ValueError(f"Invalid betas: {betas!r} (must be three numbers (β_G, β_LR, β_g))")
    group["betas"] = tuple(validate.number(name, b, 0.0, 1.0, high_open=True)
                           for name, b in zip(("beta_G", "beta_LR", "beta_graft"), betas, strict=True))
    group["eps"] = validate.number("eps", group["eps"], 0.0, math.inf)
    group["block_size"] = validate.integer("block_size", group["block_size"], 1)
    group["inv_root_freq"] = validate.integer("inv_root_freq", group["inv_root_freq"], 1)
    group["start_preconditioning_step"] = validate.integer("start_preconditioning_step",
                                                           group["start_preconditioning_step"], 1)
    validate.one_of("method", group["method"], METHODS)
    group["iters"] = validate.integer("iters", group["iters"], 1, MAX_ITERS)
    validate.one_of("scaling", group["scaling"], SCALINGS)
    group["degree"] = validate.integer("degree", group["degree"], 1, MAX_DEGREE)
    group["weight_decay"] = validate.number("weight_decay", group["weight_decay"], 0.0, math.inf)
    for flag in ("stacked", "distributed"):
        if not isinstance(group[flag], bool):
            raise TypeError(f"Invalid {flag}: {group[flag]!r} (must be True or False)")
    dt = group["preconditioner_dtype"]
    if not isinstance(dt, torch.dtype) or not dt.is_floating_point or dt.is_complex:
        raise TypeError(f"Invalid preconditioner_dtype: {dt!r} (must be a real floating torch.dtype, e.g. "
                        "torch.float32)")
    for i, p in enumerate(group.get("params", ())):
        if isinstance(p, torch.Tensor) and p.is_complex():
            raise TypeError(f"Invalid params[{i}]: dtype {p.dtype} — Shampoo does not support complex parameters "
                            "(its GGᵀ statistics would need conjugation); optimise the real and imaginary parts "
                            "as separate real parameters")
        if isinstance(p, torch.Tensor) and not p.is_floating_point():
            raise TypeError(f"Invalid params[{i}]: dtype {p.dtype} (must be a floating-point tensor)")


class Shampoo(KeepStateDtypes, torch.optim.Optimizer):
    r"""Stacked-block Shampoo with per-tile Adam grafting (DASH, Modoranu et al. 2026; Shampoo, Gupta et al. 2018).

    Parameters
    ----------
    lr: η. betas: (β_G, β_LR, β_g) = (0.9, 0.95, 0.95) — momentum of G̃, EMA of L/R, grafting second moment.
    eps: ε ≥ 0 added to L and R before the root (default 1e-4, chosen by measurement: see **Defaults**). The first
    factors are rank-deficient (L = GGᵀ of a few batches; digits' constant pixels leave R singular for good); in
    float32 their null-space eigenvalues are ± round-off, and a tiny ε raises them to the −¼ power: with the old
    ε = 1e-12 a 1e-7 relative change of the inputs moved the trajectory 2·10⁶× more than it moves Adam's, and an
    inductor-compiled training step differed from eager by 2.9e-2 after 10 steps. ε is absolute: for a loss whose
    factors are ≪ 1e-4 the roots approach ε^{−1/4}I and the step tends to grafted momentum (the grafting keeps
    Adam's step length); scale ε with such a loss.
    block_size: B. inv_root_freq: recompute L̄, R̄ every k steps (counted per parameter from
    ``start_preconditioning_step``). start_preconditioning_step: first step (1-based) that uses the Shampoo
    direction; earlier steps are Adam steps. method, iters, scaling, degree: the inverse-root solver (see
    :func:`inverse_root`). weight_decay: λ (decoupled). stacked: ``True`` sends all same-size factors in one call;
    ``False`` loops over blocks (Distributed Shampoo's layout) — same numbers, different speed.

    distributed: with ``torch.distributed`` initialised (e.g. under DDP, where every rank holds the same averaged
    gradients and hence the same factors), each same-size stack of factors is split into ``world_size`` equal
    shares (padded with identities); each rank computes the inverse roots of its share and ``all_gather`` assembles
    the stack on every rank. Same parameters as one process, up to float round-off. Every rank must call
    :meth:`step` (collective).

    preconditioner_dtype: dtype of the statistics and roots, promoted with each parameter's dtype (default
    ``torch.float32``: bfloat16/float16 parameters get float32 statistics; float64 ones keep float64).

    **Defaults.** ``method="evd"`` and ``inv_root_freq=10`` come from the race in ``bench/dash.py``
    (``--defaults-only``: time to a target training loss, ours over a grid of root method × frequency × block size
    against ``pytorch_optimizer.DASH``, ``ScalableShampoo`` and ``torch.optim.Adam`` at their defaults; results in
    ``bench/results/dash.json["race"]``); EVD every 20 steps was a further 11–17 % faster there, and we keep 10 (the
    peer's frequency: half as stale a root, for problems whose curvature moves faster than these MLPs').
    ``eps=1e-4`` comes from ``bench/optim_dash_defaults.py``, by a criterion written down before measuring (a 1e-7
    relative input perturbation moves the trajectory ≤ 10× what it moves Adam's at k = 10 and 30 steps on a small
    MLP and a digits MLP; an inductor-compiled step equals eager to 1e-5; no slower to a held-out target than the
    peer): among ε ∈ {1e-12, 1e-8, 1e-6, 1e-4} and a first root after 10 steps of statistics, only ε = 1e-4 met it
    (digits: 5.7× / 6.8× Adam's sensitivity, ε = 1e-6 120× / 100×, 1e-12 2·10⁶×; compiled − eager 6e-8).
    **Speed, at each one's defaults (block 64 vs 1024):** ours reached the target 1.3–2.0× sooner than
    ``pytorch_optimizer.DASH`` at its (one thread, interleaved, CPU time; measured on a loaded 2-core machine) —
    1.41× on the digits MLP's held-out cross-entropy 0.15 (215 vs 230 steps, per-round ratios 1.28–1.54×), 2.0× on
    ``bench/dash.py``'s ``mlp-random`` training-loss race (98 steps against the peer's 66: its B = 1024 blocks take
    fewer, costlier steps; the old ε = 1e-12 took 91 steps, 2.96×); an adopter's review measured 1.3–2.7× on its
    own tasks. Much of the lead is the block size, not the solver; on such small CPU tasks ``torch.optim.Adam``
    is faster in wall time than both (0.57× the peer's time on digits, for 340 steps; 0.39× ours on ``mlp-random``).
    ``bench/optim_where_it_wins.py`` (3 seeds, 7 optimizers interleaved): digits at defaults 215 vs 230 steps,
    1.26× sooner than the peer, Adam 0.76× our time; with each lr tuned on one grid, ours, Adam and Muon+AdamW take
    15 steps and Adam is cheapest (0.52× ours) — the lead is at defaults, not after tuning.
    The paper's runs use Newton–DB roots at every step and B = 1024 or 2048:
    ``Shampoo(params, **PAPER_SETTINGS["ndb"])`` (also ``"cn"``, ``"evd-freq1"``, ``"evd-freq10"``,
    ``"chebyshev"``; :data:`PAPER_SETTINGS`).

    Every hyperparameter is validated, also in param groups added later (:meth:`add_param_group`); complex and
    non-floating parameters are refused. **Refusals are atomic**: a step that is refused (a sparse or complex gradient,
    a parameter made complex or non-floating after construction, a gradient or saved state of the wrong shape, a root
    solver not implemented in the statistics' dtype) raises before any parameter or state tensor of any group changes
    — a pre-pass checks every group first. :attr:`root_failures` is the number of factor roots rejected so far
    (non-finite or ``LinAlgError``); the first one warns.
    """

    def __init__(self, params, lr: float = 1e-3, betas: tuple[float, float, float] = (0.9, 0.95, 0.95),
                 eps: float = 1e-4, block_size: int = 64, inv_root_freq: int = 10, method: str = "evd",
                 iters: int = 10, scaling: str = "fro", degree: int = 60, weight_decay: float = 0.0,
                 stacked: bool = True, start_preconditioning_step: int = 1, distributed: bool = False,
                 preconditioner_dtype: torch.dtype = torch.float32):
        defaults = dict(lr=lr, betas=betas, eps=eps, block_size=block_size, inv_root_freq=inv_root_freq,
                        method=method, iters=iters, scaling=scaling, degree=degree, weight_decay=weight_decay,
                        stacked=stacked, start_preconditioning_step=start_preconditioning_step,
                        distributed=distributed, preconditioner_dtype=preconditioner_dtype)
        _check_group(defaults)
        self._warned_roots = False
        super().__init__(params, defaults)

    def add_param_group(self, param_group: dict) -> None:
        """torch.optim's ``add_param_group``, validating the group's hyperparameters (defaults filled in)."""
        super().add_param_group(param_group)
        try:
            _check_group(self.param_groups[-1])
        except (TypeError, ValueError):
            del self.param_groups[-1]
            raise

    @property
    def root_failures(self) -> int:
        """Factor roots rejected so far (non-finite, or the solver raised); each kept its previous root."""
        return sum(int(st.get("root_failures", 0)) for st in self.state.values())


    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        self.__dict__.setdefault("_warned_roots", False)
        for group in self.param_groups:
            group.setdefault("preconditioner_dtype", torch.float32)

    # -- state ------------------------------------------------------------------------------------------
    @staticmethod
    def _stat_dtype(p: torch.Tensor, group: dict) -> torch.dtype:
        return torch.promote_types(p.dtype, group["preconditioner_dtype"])

    def _init_state(self, p: torch.Tensor, group: dict) -> dict:
        st = self.state[p]
        dt = self._stat_dtype(p, group)
        st["step"] = 0
        st["root_failures"] = 0
        st["momentum"] = torch.zeros(p.shape, dtype=dt, device=p.device)
        st["graft"] = torch.zeros(p.shape, dtype=dt, device=p.device)
        if p.ndim >= 2:
            st["block_size"] = block = group["block_size"]
            m, n = _matrix(p).shape
            for name, _, _, _, _, nr, nc, bm, bn in _regions(m, n, block):
                k = nr * nc
                st["L_" + name] = torch.zeros(k, bm, bm, dtype=dt, device=p.device)
                st["R_" + name] = torch.zeros(k, bn, bn, dtype=dt, device=p.device)
                st["inv_L_" + name] = torch.eye(bm, dtype=dt, device=p.device).expand(k, bm, bm).clone()
                st["inv_R_" + name] = torch.eye(bn, dtype=dt, device=p.device).expand(k, bn, bn).clone()
        return st

    @staticmethod
    def _regions_of(p: torch.Tensor, st: dict):
        m, n = _matrix(p).shape
        return _regions(m, n, int(st["block_size"]))

    # -- the inverse roots of every due factor in the group, stacked by size ---------------------------
    def _solve(self, stack: torch.Tensor, group: dict) -> torch.Tensor | None:
        if group["distributed"] and dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1:
            return self._solve_sharded(stack, group)
        return self._solve_local(stack, group)

    def _solve_sharded(self, stack: torch.Tensor, group: dict) -> torch.Tensor:
        """Rank r solves rows [r·k, (r+1)·k) of the identity-padded stack; all_gather assembles it on every rank.

        A local solver error becomes a NaN share (never a skipped collective), rejected afterwards like any
        non-finite root."""
        world, rank = dist.get_world_size(), dist.get_rank()
        N, b = stack.shape[0], stack.shape[-1]
        k = -(-N // world)
        if k * world > N:
            eye = torch.eye(b, dtype=stack.dtype, device=stack.device)
            stack = torch.cat([stack, eye.expand(k * world - N, b, b)])
        share = self._solve_local(stack[rank * k : (rank + 1) * k], group)
        if share is None:
            share = torch.full((k, b, b), math.nan, dtype=stack.dtype, device=stack.device)
        parts = [torch.empty_like(share) for _ in range(world)]
        dist.all_gather(parts, share.contiguous())
        return torch.cat(parts)[:N]

    def _solve_local(self, stack: torch.Tensor, group: dict) -> torch.Tensor | None:
        args = (group["method"], group["iters"], group["scaling"], group["eps"], group["degree"])
        try:
            if group["stacked"]:
                return solve_unchecked(stack, 4, *args)
            return torch.cat([solve_unchecked(stack[i : i + 1], 4, *args) for i in range(stack.shape[0])])
        except torch.linalg.LinAlgError:  # a numerical failure only: keep the previous roots (counted, warned)
            return None

    def _refresh_roots(self, group: dict, params: list[torch.Tensor]) -> None:
        by_size: dict[int, list[tuple[dict, str]]] = defaultdict(list)
        for p in params:
            st = self.state[p]
            for region in self._regions_of(p, st):
                for side in ("L", "R"):
                    key = f"{side}_{region[0]}"
                    by_size[st[key].shape[-1]].append((st, key))
        for entries in by_size.values():
            stack = torch.cat([st[key] for st, key in entries])
            stack = 0.5 * (stack + stack.mT)  # G Gᵀ from a matmul is symmetric only up to rounding
            roots = self._solve(stack, group)
            counts = [st[key].shape[0] for st, key in entries]
            if roots is None:
                for st, key in entries:
                    st["root_failures"] += st[key].shape[0]
                self._warn_roots(sum(counts), sum(counts), group)
                continue
            ok = torch.isfinite(roots).flatten(1).all(1)
            bad = (~ok).int().split(counts)
            n_bad = int((~ok).sum())
            for (st, key), chunk, nbad, good in zip(entries, roots.split(counts), bad, ok.split(counts),
                                                   strict=True):
                if not n_bad:
                    st["inv_" + key] = chunk
                else:
                    st["root_failures"] += int(nbad.sum())
                    st["inv_" + key] = torch.where(good[:, None, None], chunk, st["inv_" + key])
            if n_bad:
                self._warn_roots(n_bad, sum(counts), group)

    def _warn_roots(self, n_bad: int, n: int, group: dict) -> None:
        if self._warned_roots:
            return
        self._warned_roots = True
        warnings.warn(f"Shampoo: {n_bad} of {n} inverse roots failed (method {group['method']!r}); those blocks "
                      "keep their previous root (the identity before the first success, i.e. grafted Adam). "
                      "Further failures are counted in .root_failures without another warning; consider "
                      "method='evd', a larger eps, or preconditioner_dtype=torch.float64.", RuntimeWarning,
                      stacklevel=4)

    @torch.compiler.disable
    @torch.no_grad()
    def step(self, closure=None):
        """One Shampoo step (runs eagerly even inside ``torch.compile``; see the module docstring)."""
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        self._check_step()  # every refusal before any parameter or state tensor of any group changes
        for group in self.param_groups:
            b_G, b_LR, b_g = group["betas"]
            start, freq = group["start_preconditioning_step"], group["inv_root_freq"]
            params = [p for p in group["params"] if p.grad is not None and p.numel() > 0]
            due = []
            for p in params:
                st = self.state[p] if self.state[p] else self._init_state(p, group)
                st["step"] += 1
                g = p.grad.to(st["momentum"].dtype)
                st["momentum"].lerp_(g, 1 - b_G)
                st["graft"].mul_(b_g).addcmul_(g, g, value=1 - b_g)
                if p.ndim >= 2:
                    G2 = _matrix(g)
                    for region in self._regions_of(p, st):
                        G = _tiles(G2, region)
                        st["L_" + region[0]].mul_(b_LR).add_(G @ G.mT, alpha=1 - b_LR)
                        st["R_" + region[0]].mul_(b_LR).add_(G.mT @ G, alpha=1 - b_LR)
                    t = st["step"]
                    if t >= start and (t - start) % freq == 0:
                        due.append(p)
            if due:
                self._refresh_roots(group, due)
            for p in params:
                self._apply(p, group, b_G, b_g)
        return loss

    def _check_step(self) -> None:
        """The pre-pass that makes a refused step atomic: every parameter of every group that would be stepped is
        checked (sparse or complex gradient, complex or non-floating parameter, a gradient or saved state whose shape
        is not the parameter's, a root solver that cannot run in the statistics' dtype) before anything changes."""
        for gi, group in enumerate(self.param_groups):
            for i, p in enumerate(group["params"]):
                g = p.grad
                if g is None or p.numel() == 0:
                    continue
                where = f"param_groups[{gi}]['params'][{i}]"
                if g.is_sparse:
                    raise RuntimeError(f"Shampoo does not support sparse gradients ({where}); no parameter or "
                                       "state was changed")
                if p.is_complex() or g.is_complex():
                    raise TypeError(f"Invalid {where}: dtype {p.dtype}, gradient {g.dtype} — Shampoo does not "
                                    "support complex parameters (its GGᵀ statistics would need conjugation); no "
                                    "parameter or state was changed")
                if not p.is_floating_point():
                    raise TypeError(f"Invalid {where}: dtype {p.dtype} (must be a floating-point tensor); no "
                                    "parameter or state was changed")
                if g.shape != p.shape:
                    raise RuntimeError(f"Invalid {where}: gradient shape {tuple(g.shape)} ≠ parameter shape "
                                       f"{tuple(p.shape)}; no parameter or state was changed")
                st = self.state.get(p)
                if st and "momentum" in st and st["momentum"].shape != p.shape:
                    raise RuntimeError(f"Invalid {where}: shape {tuple(p.shape)} but its saved state has shape "
                                       f"{tuple(st['momentum'].shape)}; no parameter or state was changed")
                if p.ndim >= 2:
                    self._probe_solver(group, self._stat_dtype(p, group), p.device)

    def _probe_solver(self, group: dict, dtype: torch.dtype, device: torch.device) -> None:
        """Run the group's root solver once on a 2 × 2 identity in the statistics' dtype (cached), so that a solver
        that is not implemented there (e.g. EVD in bfloat16) raises before the step changes anything."""
        key = (group["method"], group["iters"], group["scaling"], group["degree"], dtype, str(device))
        probed = self.__dict__.setdefault("_probed", set())
        if key in probed:
            return
        eye = torch.eye(2, dtype=dtype, device=device)[None]
        try:
            solve_unchecked(eye, 4, group["method"], group["iters"], group["scaling"], group["eps"], group["degree"])
        except torch.linalg.LinAlgError:
            pass  # numerical: handled per root in the step
        probed.add(key)

    def _apply(self, p: torch.Tensor, group: dict, b_G: float, b_g: float) -> None:
        st = self.state[p]
        t = st["step"]
        m_hat = st["momentum"] / (1 - b_G**t)
        direction = m_hat / ((st["graft"] / (1 - b_g**t)).sqrt() + 1e-8)  # P_g, Adam's step
        if p.ndim >= 2 and t >= group["start_preconditioning_step"]:
            M2, D2 = _matrix(m_hat), _matrix(direction)
            P = torch.empty_like(D2)
            for region in self._regions_of(p, st):
                name, r0, r1, c0, c1 = region[:5]
                U = st["inv_L_" + name] @ _tiles(M2, region) @ st["inv_R_" + name]
                Pg = _tiles(D2, region)
                ratio = Pg.flatten(1).norm(dim=1) / U.flatten(1).norm(dim=1).clamp_min(1e-30)
                P[r0:r1, c0:c1] = _untile(U * ratio[:, None, None], region)
            direction = P.reshape(p.shape)
        if group["weight_decay"]:
            p.mul_(1 - group["lr"] * group["weight_decay"])
        if direction.dtype == p.dtype:
            p.add_(direction, alpha=-group["lr"])
        else:  # update in the statistics' dtype, then cast back to the parameter's
            p.copy_((p.to(direction.dtype) - group["lr"] * direction).to(p.dtype))


#: The constructor's defaults (read from its signature, so that they are stated once).
DEFAULTS: dict = {k: v.default for k, v in inspect.signature(Shampoo.__init__).parameters.items()
                  if v.default is not inspect.Parameter.empty}
