r"""Block Shampoo with Adam grafting, preconditioner blocks stacked by size (the DASH layout), as a torch optimizer.

For every 2-D parameter W (m × n), split into tiles of at most B × B, and each tile's gradient G:

.. math::

    L &\leftarrow \beta_{LR}L + (1-\beta_{LR})GG^\top,\qquad R \leftarrow \beta_{LR}R + (1-\beta_{LR})G^\top G,\\
    A &\leftarrow \beta_g A + (1-\beta_g)\,G\odot G,\qquad \tilde G \leftarrow \beta_G\tilde G + (1-\beta_G)G,\\
    \bar L &= (L+\varepsilon I)^{-1/4},\ \bar R = (R+\varepsilon I)^{-1/4}\quad\text{(every ``inv_root_freq`` steps)},\\
    P_g &= \frac{\tilde G/(1-\beta_G^t)}{\sqrt{A/(1-\beta_g^t)}+10^{-8}},\qquad U = \bar L\tilde G\bar R,\qquad
    P = \frac{\|P_g\|_F}{\|U\|_F}\,U\ \text{(per tile)},\\
    W &\leftarrow (1-\eta\lambda)W - \eta P.

All L and R factors of the same size — across tiles *and* parameters — are concatenated into one (N, b, b)
stack and sent to :func:`~theorybook.dash_shampoo.solvers.inverse_root` in a single call; that is DASH's
stacking. Parameters that are not matrices (biases, gains; also tensors with more than two dimensions) take the
Adam grafting direction P_g alone (a simplification: DASH runs Shampoo-AdaGrad with root 2 on 1-D parameters).
"""

from __future__ import annotations

import math
from collections import defaultdict

import torch

from .. import validate
from .solvers import MAX_DEGREE, MAX_ITERS, METHODS, SCALINGS, solve_unchecked

__all__ = ["Shampoo", "tile_slices"]


def tile_slices(shape: tuple[int, int], block: int) -> dict[tuple[int, int], list[tuple[slice, slice]]]:
    """Tiles of an m × n matrix with side ≤ ``block``, grouped by tile shape (edge tiles form their own groups)."""
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


def _gather(X: torch.Tensor, tiles: list[tuple[slice, slice]]) -> torch.Tensor:
    return torch.stack([X[rs, cs] for rs, cs in tiles])


class Shampoo(torch.optim.Optimizer):
    r"""Stacked-block Shampoo with per-tile Adam grafting (DASH, Modoranu et al. 2026; Shampoo, Gupta et al. 2018).

    Parameters
    ----------
    lr: η. betas: (β_G, β_LR, β_g) = (0.9, 0.95, 0.95) — momentum of G̃, EMA of L/R, grafting second moment.
    eps: ε added to L and R before the root. block_size: B. inv_root_freq: recompute L̄, R̄ every k steps.
    method, iters, scaling, degree: the inverse-root solver (see :func:`inverse_root`). weight_decay: λ.
    stacked: ``True`` sends all same-size factors in one call; ``False`` loops over blocks (Distributed
    Shampoo's layout) — same numbers, different speed.
    """

    def __init__(self, params, lr: float = 1e-3, betas: tuple[float, float, float] = (0.9, 0.95, 0.95),
                 eps: float = 0.0, block_size: int = 64, inv_root_freq: int = 1, method: str = "ndb",
                 iters: int = 10, scaling: str = "fro", degree: int = 60, weight_decay: float = 0.0,
                 stacked: bool = True):
        lr = validate.number("lr", lr, 0.0, math.inf, low_open=True)
        if not isinstance(betas, tuple | list) or len(betas) != 3:
            raise ValueError(f"Invalid betas: {betas!r} (must be three numbers (β_G, β_LR, β_g))")
        betas = tuple(validate.number(name, b, 0.0, 1.0, high_open=True)
                      for name, b in zip(("beta_G", "beta_LR", "beta_graft"), betas, strict=True))
        eps = validate.number("eps", eps, 0.0, math.inf)
        block_size = validate.integer("block_size", block_size, 1)
        inv_root_freq = validate.integer("inv_root_freq", inv_root_freq, 1)
        validate.one_of("method", method, METHODS)
        iters = validate.integer("iters", iters, 1, MAX_ITERS)
        validate.one_of("scaling", scaling, SCALINGS)
        degree = validate.integer("degree", degree, 1, MAX_DEGREE)
        weight_decay = validate.number("weight_decay", weight_decay, 0.0, math.inf)
        if not isinstance(stacked, bool):
            raise TypeError(f"Invalid stacked: {stacked!r} (must be True or False)")
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, block_size=block_size, inv_root_freq=inv_root_freq,
                        method=method, iters=iters, scaling=scaling, degree=degree, weight_decay=weight_decay,
                        stacked=bool(stacked))
        super().__init__(params, defaults)

    # -- the inverse roots of every factor in the group, stacked by size --------------------------------
    def _refresh_roots(self, group, params) -> None:
        by_size: dict[int, list[tuple[dict, str, int]]] = defaultdict(list)
        for p in params:
            for fac in self.state[p]["factors"].values():
                for side in ("L", "R"):
                    by_size[fac[side].shape[-1]].append((fac, side, fac[side].shape[0]))
        args = (group["method"], group["iters"], group["scaling"], group["eps"], group["degree"])
        for entries in by_size.values():
            stack = torch.cat([fac[side] for fac, side, _ in entries])
            stack = 0.5 * (stack + stack.mT)  # G Gᵀ from a matmul is symmetric only up to rounding
            if group["stacked"]:
                roots = solve_unchecked(stack, 4, *args)
            else:
                roots = torch.cat([solve_unchecked(stack[i : i + 1], 4, *args) for i in range(stack.shape[0])])
            for (fac, side, _), chunk in zip(entries, roots.split([e[2] for e in entries]), strict=True):
                fac["inv_" + side] = chunk

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            b_G, b_LR, b_g = group["betas"]
            params = [p for p in group["params"] if p.grad is not None]
            matrices = []
            for p in params:
                st = self.state[p]
                if not st:
                    st["step"] = 0
                    st["momentum"] = torch.zeros_like(p)
                    st["graft"] = torch.zeros_like(p)
                    if p.ndim == 2:
                        st["tiles"] = tile_slices(tuple(p.shape), group["block_size"])
                        st["factors"] = {
                            shape: {"L": p.new_zeros(len(t), shape[0], shape[0]),
                                    "R": p.new_zeros(len(t), shape[1], shape[1])}
                            for shape, t in st["tiles"].items()}
                st["step"] += 1
                g = p.grad
                st["momentum"].lerp_(g, 1 - b_G)
                st["graft"].mul_(b_g).addcmul_(g, g, value=1 - b_g)
                if p.ndim == 2:
                    matrices.append(p)
                    for shape, tiles in st["tiles"].items():
                        G = _gather(g, tiles)
                        fac = st["factors"][shape]
                        fac["L"].mul_(b_LR).add_(G @ G.mT, alpha=1 - b_LR)
                        fac["R"].mul_(b_LR).add_(G.mT @ G, alpha=1 - b_LR)
            if matrices and (self.state[matrices[0]]["step"] - 1) % group["inv_root_freq"] == 0:
                self._refresh_roots(group, matrices)
            for p in params:
                self._apply(p, group, b_G, b_g)
        return loss

    def _apply(self, p, group, b_G: float, b_g: float) -> None:
        st = self.state[p]
        t = st["step"]
        m_hat = st["momentum"] / (1 - b_G**t)
        direction = m_hat / ((st["graft"] / (1 - b_g**t)).sqrt() + 1e-8)  # P_g, Adam's step
        if p.ndim == 2:
            P = torch.empty_like(p)
            for shape, tiles in st["tiles"].items():
                fac = st["factors"][shape]
                U = fac["inv_L"] @ _gather(m_hat, tiles) @ fac["inv_R"]
                Pg = _gather(direction, tiles)
                ratio = Pg.flatten(1).norm(dim=1) / U.flatten(1).norm(dim=1).clamp_min(1e-30)
                U = U * ratio[:, None, None]
                for (rs, cs), u in zip(tiles, U, strict=True):
                    P[rs, cs] = u
            direction = P
        if group["weight_decay"]:
            p.mul_(1 - group["lr"] * group["weight_decay"])
        p.add_(direction, alpha=-group["lr"])
