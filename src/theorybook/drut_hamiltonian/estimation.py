"""The design, the coefficient recovery and the phase estimators of D-RUT (pure torch, complex128).

From the vacuum phases ``C(β)`` of :mod:`theorybook.drut_hamiltonian.dynamics` [secondary]:

* a design of points ``β = r e^{iφ}`` (Chebyshev radii × equally spaced angles) and its matrix
  ``K[i, k] = Π β̄^p β^q``; an angular inverse DFT separates the charge ``m = q − p``, a radial least-squares fit in
  ``r`` the powers ``r^{p+q}`` (:func:`recover`);
* robust phase estimation (RPE, Kimmel, Low & Yoder 2015) at ``t_j = 2^j t₀`` with ``S_j`` shots, total time
  ``T_J = 2 Σ_j S_j t_j``, and Ramsey at one time, each with its Cramér–Rao bound, SPAM (readout flips, an ancilla
  phase offset) included (:func:`rpe`, :func:`ramsey`, :func:`crb`);
* the whole protocol, from coefficients to learned coefficients (:func:`learn`).

Random counts are drawn on the CPU with a seeded ``torch.Generator`` and moved to the device.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import torch

from ..device import resolve_device
from ..fit import _lstsq
from ..validate import integer, memory_guard, number, one_of
from .dynamics import (
    CDTYPE,
    MAX_DEGREE,
    MAX_MODES,
    RDTYPE,
    Key,
    _times,
    degree_of,
    displaced_twirled,
    parse_coeffs,
    vacuum_constant,
    vacuum_signal,
)

__all__ = [
    "Design", "Learned", "RPEResult", "crb", "design", "learn", "ramsey", "ramsey_crb", "recover", "rpe",
    "rpe_schedule",
]


# -- the design and coefficient recovery ---------------------------------------------------------------------------
class Design(NamedTuple):
    """Design points ``beta`` (shape ``(P,)`` or ``(P, modes)``), the design matrix ``K[i, k] = Π β̄^p β^q`` over the
    ``keys`` (all ``(p, q)`` with total degree ≤ ``degree``), and the grid: ``radii`` (per mode), ``angles``."""

    beta: torch.Tensor
    K: torch.Tensor
    keys: tuple
    degree: int
    modes: int
    radii: tuple[float, ...]
    angles: tuple[float, ...]


def _multi_indices(modes: int, total: int) -> list[tuple[int, ...]]:
    if modes == 1:
        return [(k,) for k in range(total + 1)]
    return [(k, *rest) for k in range(total + 1) for rest in _multi_indices(modes - 1, total - k)]


def all_keys(degree: int, modes: int = 1) -> list[Key]:
    """Every ``(p, q)`` (multi-indices for ``modes > 1``) with ``|p| + |q| ≤ degree``, in a fixed order."""
    idx = _multi_indices(modes, degree)
    return [(p, q) for p in idx for q in idx if sum(p) + sum(q) <= degree]


def chebyshev_nodes(low: float, high: float, n: int) -> list[float]:
    """First-kind Chebyshev nodes ``(a+b)/2 + (b−a)/2 · cos((2k − 1)π/(2n))``, ``k = 1..n``, ascending."""
    return sorted((low + high) / 2 + (high - low) / 2 * math.cos((2 * k - 1) * math.pi / (2 * n))
                  for k in range(1, n + 1))


def design(degree: int, *, radii: Sequence[float] = (0.15, 0.65), n_radii: int | None = None,
           n_angles: int | None = None, modes: int = 1, device=None) -> Design:
    """The Chebyshev-radius × equal-angle design for a degree-``degree`` Hamiltonian.

    Defaults: ``n_radii = ⌊degree/2⌋ + 1`` first-kind Chebyshev nodes in ``radii``, ``n_angles = 2·degree + 1``
    angles ``2πk/M`` (enough to separate the charges ``|q − p| ≤ degree`` without aliasing); for ``modes > 1`` the
    grid is the product of one such grid per mode."""
    degree = integer("degree", degree, 1, MAX_DEGREE)
    modes = integer("modes", modes, 1, MAX_MODES)
    if not isinstance(radii, (tuple, list)) or len(radii) != 2:
        raise TypeError(f"Invalid radii: {radii!r} (must be a pair (low, high))")
    lo = number("radii[0]", radii[0], 0.0, 5.0, low_open=True)
    hi = number("radii[1]", radii[1], lo, 5.0, low_open=True)
    nr = degree // 2 + 1 if n_radii is None else integer("n_radii", n_radii, degree // 2 + 1, 16)
    na = 2 * degree + 1 if n_angles is None else integer("n_angles", n_angles, 2 * degree + 1, 64)
    if (nr * na) ** modes > 20_000:
        raise ValueError(f"Invalid design: {(nr * na) ** modes} points (must be ≤ 20000: lower n_radii or n_angles)")
    dev = resolve_device(device)
    rs = chebyshev_nodes(lo, hi, nr)
    phis = [2 * math.pi * k / na for k in range(na)]
    one = torch.tensor([r * complex(math.cos(f), math.sin(f)) for r in rs for f in phis], dtype=CDTYPE, device=dev)
    if modes == 1:
        beta = one
        bm = beta[:, None]
    else:
        grids = torch.meshgrid(*([one] * modes), indexing="ij")
        bm = torch.stack([g.reshape(-1) for g in grids], dim=-1)
        beta = bm
    keys = tuple(all_keys(degree, modes))
    K = torch.ones(bm.shape[0], len(keys), dtype=CDTYPE, device=dev)
    for j, (p, q) in enumerate(keys):
        for k in range(modes):
            K[:, j] = K[:, j] * bm[:, k].conj() ** p[k] * bm[:, k] ** q[k]
    out_keys = tuple((p[0], q[0]) for p, q in keys) if modes == 1 else tuple(keys)
    return Design(beta, K, out_keys, degree, modes, tuple(rs), tuple(phis))


def _norm_key(key: Any, modes: int) -> Key:
    p, q = key
    return ((p,), (q,)) if modes == 1 else (tuple(p), tuple(q))


def recover_tensor(C: torch.Tensor, d: Design) -> torch.Tensor:
    """``ĝ`` (shape ``(..., len(d.keys))``, complex) from ``C`` at the design points (shape ``(..., P)``): an inverse
    DFT over the angles of every mode separates the charges ``m = q − p``; per charge, least squares over the
    radial grid on the powers ``Π r_k^{p_k + q_k}``. Equal to the least-squares solution ``K⁺C`` (the DFT is
    orthogonal on equally spaced angles)."""
    nr, na, m = len(d.radii), len(d.angles), d.modes
    Cc = C.to(CDTYPE).reshape(*C.shape[:-1], *([nr, na] * m))
    ang_axes = tuple(C.ndim - 1 + 2 * k + 1 for k in range(m))
    F = torch.fft.fft2(Cc, dim=ang_axes) if m == 2 else torch.fft.fftn(Cc, dim=ang_axes)
    F = F / na**m  # F[..., r₁, m₁, r₂, m₂] = Σ_{q−p=m} g_pq Π r^{p+q}
    rad = torch.tensor(d.radii, dtype=CDTYPE, device=C.device)
    keys = [_norm_key(k, m) for k in d.keys]
    out = torch.zeros(*C.shape[:-1], len(keys), dtype=CDTYPE, device=C.device)
    charges: dict[tuple[int, ...], list[int]] = {}
    for j, (p, q) in enumerate(keys):
        charges.setdefault(tuple(qk - pk for pk, qk in zip(p, q, strict=True)), []).append(j)
    rgrid = torch.meshgrid(*([rad] * m), indexing="ij")
    for ch, js in charges.items():
        sel = [slice(None)] * (C.ndim - 1)
        for k in range(m):
            sel += [slice(None), ch[k] % na]
        y = F[tuple(sel)].reshape(*C.shape[:-1], nr**m)  # (..., radial points)
        V = torch.stack([math.prod(rgrid[k] ** (keys[j][0][k] + keys[j][1][k]) for k in range(m)).reshape(-1)
                         for j in js], dim=-1)  # (radial points, unknowns)
        sol = _lstsq(V.expand(*y.shape[:-1], *V.shape), y[..., None])[..., 0]
        out[..., js] = sol
    return out


def recover(C: Any, design: Design) -> dict:
    """``{(p, q): ĝ_pq}`` for every key of ``design`` (complex numbers for ``C`` of shape ``(P,)``, complex tensors
    of the batch shape for ``(..., P)``); see :func:`recover_tensor` for the algorithm."""
    if not isinstance(design, Design):
        raise TypeError(f"Invalid design: {type(design).__name__} (must be a Design from design())")
    if isinstance(C, bool) or isinstance(C, (str, bytes)):
        raise TypeError(f"Invalid C: {C!r} (must be a real tensor)")
    try:
        Ct = C.detach().to(design.beta.device) if isinstance(C, torch.Tensor) else torch.as_tensor(
            C, device=design.beta.device)
    except (TypeError, ValueError, RuntimeError) as err:
        raise TypeError(f"Invalid C: {C!r} (must be a real tensor)") from err
    if Ct.dtype == torch.bool or Ct.is_complex():
        raise TypeError("Invalid C: must be a real tensor")
    Ct = Ct.to(RDTYPE)
    if Ct.ndim == 0 or Ct.shape[-1] != design.beta.shape[0]:
        raise ValueError(f"Invalid C: shape {tuple(Ct.shape)} (last axis must be the {design.beta.shape[0]} design "
                         "points)")
    if not bool(torch.isfinite(Ct).all()):
        raise ValueError("Invalid C: contains NaN or ±inf")
    g = recover_tensor(Ct, design)
    if Ct.ndim == 1:
        return {k: complex(g[j].item()) for j, k in enumerate(design.keys)}
    return {k: g[..., j] for j, k in enumerate(design.keys)}


# -- phase estimation ------------------------------------------------------------------------------------------------
class RPEResult(NamedTuple):
    """``estimate`` (shape ``(reps, *C.shape)``), the per-level estimates ``levels`` (``(J+1, reps, *C.shape)``),
    the schedule ``shots`` ``S_j`` per basis and the total evolution time ``time`` ``T_J = 2 Σ_j S_j t_j``."""

    estimate: torch.Tensor
    levels: torch.Tensor
    shots: tuple[int, ...]
    time: float


def rpe_schedule(J: int, base: int = 16, step: int = 8) -> tuple[int, ...]:
    """``S_j = base + step·(J − j)``, ``j = 0..J``: more shots at the coarse levels, whose wrap errors are the
    costly ones."""
    J = integer("J", J, 0, 40)
    base = integer("base", base, 1, 10**7)
    step = integer("step", step, 0, 10**7)
    return tuple(base + step * (J - j) for j in range(J + 1))


def _shots(shots: Any, J: int) -> tuple[int, ...]:
    if isinstance(shots, (list, tuple)):
        if len(shots) != J + 1:
            raise ValueError(f"Invalid shots: {len(shots)} entries (must be J + 1 = {J + 1}, one per level)")
        return tuple(integer("shots", s, 1, 10**9) for s in shots)
    return (integer("shots", shots, 1, 10**9),) * (J + 1)


def _phases(C: Any, device: torch.device) -> torch.Tensor:
    if isinstance(C, bool) or isinstance(C, (str, bytes)):
        raise TypeError(f"Invalid C: {C!r} (must be a real number or tensor)")
    try:
        t = C.detach().to(device) if isinstance(C, torch.Tensor) else torch.as_tensor(C, device=device)
    except (TypeError, ValueError, RuntimeError) as err:
        raise TypeError(f"Invalid C: {C!r} (must be a real number or tensor)") from err
    if t.dtype == torch.bool or t.is_complex():
        raise TypeError("Invalid C: must be real")
    t = t.to(RDTYPE)
    if not bool(torch.isfinite(t).all()):
        raise ValueError("Invalid C: contains NaN or ±inf (must be finite)")
    return t


def _binomial(n: torch.Tensor, p: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """Binomial counts drawn on the CPU with ``gen`` (reproducible on any device), returned on ``p``'s device."""
    pc = p.detach().to("cpu", RDTYPE).clamp(0.0, 1.0)
    nc = n.detach().to("cpu", RDTYPE).expand_as(pc).contiguous()
    return torch.binomial(nc, pc, generator=gen).to(p.device)


def _readout(z: torch.Tensor, S: torch.Tensor, flip: float, gen: torch.Generator) -> tuple[torch.Tensor, ...]:
    """Sample ``S`` X- and ``S`` Y-shots of an ancilla with ``⟨X⟩ = (1 − 2δ) Re z``, ``⟨Y⟩ = (1 − 2δ) Im z``
    (``z = e^{iφ}`` for an eigenstate); return the sample means ``(X̄, Ȳ)``."""
    vis = 1.0 - 2.0 * flip
    p = torch.stack([(1 + vis * z.real) / 2, (1 + vis * z.imag) / 2])
    k = _binomial(S, p, gen)
    xy = 2 * k / S - 1
    return xy[0], xy[1]


def _read_phase(X: torch.Tensor, Y: torch.Tensor, estimator: str) -> torch.Tensor:
    """The phase read from the sample means: ``atan2(Ȳ, X̄)``, or the naive ``sign(Ȳ)·arccos(X̄)`` that takes the
    shrunken ``⟨X⟩ = (1 − 2δ)cos φ`` for ``cos φ``."""
    if estimator == "atan2":
        return torch.atan2(Y, X)
    return torch.where(Y >= 0, 1.0, -1.0) * torch.arccos(X.clamp(-1.0, 1.0))


def _spam(flip: Any, offset: Any) -> tuple[float, float]:
    return (number("flip", flip, 0.0, 0.5, high_open=True), number("offset", offset, -math.pi, math.pi))


def rpe(C: Any, J: int, shots: Any, *, t0: float = 1.0, flip: float = 0.0, offset: float = 0.0, seed: int = 0,
        reps: int = 1, signal: torch.Tensor | None = None, estimator: str = "atan2", device=None) -> RPEResult:
    """Robust phase estimation (Kimmel, Low & Yoder) of ``C`` from ancilla shots at ``t_j = 2^j t₀``, ``j = 0..J``.

    Level ``j`` measures ``S_j`` X- and ``S_j`` Y-shots of the phase ``φ_j = C t_j + ε`` (readout flip rate ``δ``
    shrinks both means by ``1 − 2δ``), forms ``θ_j = atan2(Ȳ, X̄) ∈ (−π, π]``, and picks the branch
    ``Ĉ_j = (θ_j + 2πk)/t_j`` closest to ``Ĉ_{j−1}`` (``Ĉ_0 = θ_0/t₀``, so ``C t₀`` must lie in ``(−π, π]``).
    ``shots``: one integer for every level, or the sequence ``(S_0, …, S_J)``. Total time ``T_J = 2 Σ S_j t_j``.
    ``signal`` (optional, complex, shape ``(J+1, *C.shape)``): the simulated amplitudes ``⟨0|e^{iH t_j}|0⟩``
    (:func:`vacuum_signal`) replace ``e^{iC t_j}`` — a vacuum that is not an eigenstate then misleads the
    estimator, as on hardware; ``C`` is only the reference then. ``estimator="arccos"``: the same schedule, shots
    and branch tracking, but each level's phase read naively as ``θ_j = sign(Ȳ)·arccos(X̄)`` (the shrunken
    ``⟨X⟩ = (1 − 2δ)cos φ`` taken for ``cos φ``; the SPAM rows' control on RPE's own schedule)."""
    J = integer("J", J, 0, 40)
    one_of("estimator", estimator, ("atan2", "arccos"))
    S = _shots(shots, J)
    t0 = number("t0", t0, 0.0, 1e6, low_open=True)
    flip, offset = _spam(flip, offset)
    seed = integer("seed", seed, 0)
    reps = integer("reps", reps, 1, 10**7)
    dev = resolve_device(device)
    Ct = _phases(C, dev)
    memory_guard(8.0 * 6 * (J + 1) * reps * max(1, Ct.numel()), lower="reps, J or the size of C")
    gen = torch.Generator().manual_seed(seed)
    Cr = Ct.expand(reps, *Ct.shape)
    tj = torch.tensor([t0 * 2.0**j for j in range(J + 1)], dtype=RDTYPE, device=dev)
    Sj = torch.tensor(S, dtype=RDTYPE, device=dev)
    shape = (J + 1,) + (1,) * Cr.ndim
    if signal is None:
        z = torch.exp(1j * (Cr[None] * tj.reshape(shape) + offset))
    else:
        if not isinstance(signal, torch.Tensor) or not signal.is_complex() or tuple(signal.shape) != (J + 1,
                                                                                                    *Ct.shape):
            raise TypeError(f"Invalid signal: must be a complex tensor of shape {(J + 1, *Ct.shape)}")
        sig = signal.to(dev, CDTYPE)
        if not bool(torch.isfinite(sig.real).all() & torch.isfinite(sig.imag).all()) or float(
                sig.abs().max()) > 1 + 1e-9:
            raise ValueError("Invalid signal: must be finite with |signal| ≤ 1")
        z = (sig[:, None] * complex(math.cos(offset), math.sin(offset))).expand(J + 1, *Cr.shape)
    X, Y = _readout(z, Sj.reshape(shape), flip, gen)
    theta = _read_phase(X, Y, estimator)
    est = torch.empty(z.shape, dtype=RDTYPE, device=dev)
    est[0] = theta[0] / t0
    for j in range(1, J + 1):
        k = torch.round((est[j - 1] * tj[j] - theta[j]) / (2 * math.pi))
        est[j] = (theta[j] + 2 * math.pi * k) / tj[j]
    T = 2.0 * sum(s * t0 * 2.0**j for j, s in enumerate(S))
    return RPEResult(est[-1], est, S, T)


def ramsey(C: Any, T: Any, *, t: float = 1.0, flip: float = 0.0, offset: float = 0.0, seed: int = 0,
           reps: int = 1, estimator: str = "atan2", device=None) -> torch.Tensor:
    """The κ = 1 control: all ``n = ⌊T/(2t)⌋`` X/Y shot pairs at one time ``t`` (total time ``T``).

    ``estimator="atan2"``: ``Ĉ = atan2(Ȳ, X̄)/t`` (unbiased under a symmetric flip); ``"arccos"``: the naive
    ``Ĉ = sign(Ȳ)·arccos(X̄)/t``, which reads the shrunken ``⟨X⟩ = (1 − 2δ)cos φ`` as ``cos φ``. ``T``: a number
    or a sequence; returns ``(len(T), reps, *C.shape)`` (or ``(reps, *C.shape)`` for a scalar ``T``)."""
    scalar_T = not isinstance(T, (list, tuple)) and not (isinstance(T, torch.Tensor) and T.ndim > 0)
    Ts = _times(T)
    t = number("t", t, 0.0, 1e6, low_open=True)
    n_pairs = [math.floor(number("T", x, 2 * t, 1e15) / (2 * t)) for x in Ts]
    flip, offset = _spam(flip, offset)
    seed = integer("seed", seed, 0)
    reps = integer("reps", reps, 1, 10**7)
    one_of("estimator", estimator, ("atan2", "arccos"))
    dev = resolve_device(device)
    Ct = _phases(C, dev)
    memory_guard(8.0 * 6 * len(Ts) * reps * max(1, Ct.numel()), lower="reps, len(T) or the size of C")
    gen = torch.Generator().manual_seed(seed)
    shape = (len(Ts),) + (1,) * (Ct.ndim + 1)
    phi = Ct.expand(len(Ts), reps, *Ct.shape) * t + offset
    n = torch.tensor(n_pairs, dtype=RDTYPE, device=dev).reshape(shape)
    X, Y = _readout(torch.exp(1j * phi), n, flip, gen)
    est = _read_phase(X, Y, estimator) / t
    return est[0] if scalar_T else est


def crb(shots: Any, J: int, t0: float = 1.0) -> float:
    """Cramér–Rao bound on the RMSE of ``C`` for a schedule: one X/Y shot pair at time ``t`` carries Fisher
    information ``2t²`` (for any ``C``), so ``CRB = (Σ_j 2 S_j t_j²)^{-1/2}`` with ``t_j = 2^j t₀``."""
    J = integer("J", J, 0, 40)
    S = _shots(shots, J)
    t0 = number("t0", t0, 0.0, 1e6, low_open=True)
    return 1.0 / math.sqrt(sum(2.0 * s * (t0 * 2.0**j) ** 2 for j, s in enumerate(S)))


def ramsey_crb(T: float, t: float = 1.0) -> float:
    """``(T t)^{-1/2}``: the CRB of ``T/(2t)`` shot pairs at time ``t`` (``1/√T`` at ``t = 1``)."""
    t = number("t", t, 0.0, 1e6, low_open=True)
    T = number("T", T, 2 * t, 1e15)
    return 1.0 / math.sqrt(T * t)


# -- the whole protocol ------------------------------------------------------------------------------------------------
class Learned(NamedTuple):
    """One learning run: the design, the exact vacuum phases ``C_true`` (from the Fock simulation), the RPE
    estimates ``C_hat`` (``(reps, P)``), the recovered ``g_hat`` (``(reps, len(keys))``) and the true ``g`` on the
    design's keys, ``rmse_C``, ``rmse_g`` (over replicates and keys), the total time per design point ``time`` and
    the schedule's ``crb``."""

    design: Design
    C_true: torch.Tensor
    C_hat: torch.Tensor
    g_hat: torch.Tensor
    g_true: torch.Tensor
    rmse_C: float
    rmse_g: float
    time: float
    crb: float


def true_vector(coeffs: Mapping, d: Design) -> torch.Tensor:
    """The coefficients of ``coeffs`` on ``d.keys`` (zeros for keys the Hamiltonian lacks)."""
    _, cf = parse_coeffs(coeffs)
    return torch.tensor([cf.get(_norm_key(k, d.modes), 0j) for k in d.keys], dtype=CDTYPE, device=d.beta.device)


def learn(coeffs: Mapping, *, degree: int | None = None, J: int = 12, shots: Any = None, n_fock: int = 30,
          n_phases: int | None = None, reps: int = 8, seed: int = 0, flip: float = 0.0, offset: float = 0.0,
          radii: Sequence[float] = (0.15, 0.65), displace: bool = True, device=None) -> Learned:
    """Displace, twirl, estimate every ``C(β)`` of the design by RPE, recover ``g``.

    The ancilla sees the simulated amplitudes ``⟨0|e^{iH_eff t_j}|0⟩`` (:func:`vacuum_signal`), so the controls
    fail as they would on hardware: ``n_phases=1`` (no twirl: the vacuum is not an eigenstate) and
    ``displace=False`` (every design point prepares the undisplaced vacuum). ``C_true`` is ``C(β)`` at the design,
    the target. ``shots`` defaults to :func:`rpe_schedule` ``(J)``."""
    m, cf = parse_coeffs(coeffs)
    degree = degree_of(cf) if degree is None else integer("degree", degree, degree_of(cf), MAX_DEGREE)
    J = integer("J", J, 0, 30)
    S = rpe_schedule(J) if shots is None else _shots(shots, J)
    if not isinstance(displace, bool):
        raise TypeError(f"Invalid displace: {displace!r} (must be a bool)")
    dev = resolve_device(device)
    d = design(degree, radii=radii, modes=m, device=dev)
    beta = d.beta if displace else torch.zeros_like(d.beta)
    Heff = displaced_twirled(cf, beta, n_fock=n_fock, n_phases=n_phases, device=dev)
    C_true = vacuum_constant(cf, d.beta, device=dev)  # the design's C(β): what the learner should find
    sig = vacuum_signal(Heff, [2.0**j for j in range(J + 1)]).movedim(-1, 0)
    res = rpe(C_true, J, S, flip=flip, offset=offset, seed=seed, reps=reps, signal=sig, device=dev)
    g_hat = recover_tensor(res.estimate, d)
    g_true = true_vector(cf, d)
    rmse_C = float(((res.estimate - C_true) ** 2).mean().sqrt())
    rmse_g = float(((g_hat - g_true).abs() ** 2).mean().sqrt())
    return Learned(d, C_true, res.estimate, g_hat, g_true, rmse_C, rmse_g, res.time, crb(S, J))
