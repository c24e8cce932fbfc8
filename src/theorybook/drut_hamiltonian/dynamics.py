"""Displace, twirl, read the vacuum phase: D-RUT in a truncated Fock space (pure torch, complex128).

The protocol of Huang, Zhang & Luo (arXiv 2510.08419) as third-party audits describe it [secondary]:

* ``H = Σ_{p,q} g_pq (a†)^p a^q`` with ``g_qp = ḡ_pq`` (multi-mode: ``p``, ``q`` are multi-indices);
* displacement ``D(β) = exp(β a† − β̄ a)``, so ``D†(β) a D(β) = a + β`` and
  ``D† H D = Σ g_pq (a† + β̄)^p (a + β)^q``;
* an ``M``-phase twirl ``(1/M) Σ_k R_k† (·) R_k`` with ``R_k = exp(−i θ_k n̂)``, ``θ_k = 2πk/M`` (each mode
  independently) keeps ``⟨n|·|m⟩`` iff ``n ≡ m (mod M)`` per mode; ``M → ∞`` keeps the number-conserving part
  ``H_eff(β)``, whose vacuum eigenvalue is ``C(β) = Σ g_pq β̄^p β^q``;
* a Hadamard test reads ``⟨X⟩ = cos(C t)``, ``⟨Y⟩ = sin(C t)`` from the ancilla (``e^{+iCt}`` convention), robust
  phase estimation (RPE, Kimmel, Low & Yoder 2015) at ``t_j = 2^j t₀`` costs ``T_J = 2 Σ_j S_j t_j``;
* ``C`` at a design of points ``β = r e^{iφ}`` (Chebyshev radii × equally spaced angles) recovers ``g_pq``: an
  angular inverse DFT separates the charge ``m = q − p``, a radial least-squares fit in ``r`` the powers
  ``r^{p+q}``.

This module holds the physics (coefficients, Hamiltonian, displacement, twirl, vacuum signal, kicked evolution);
:mod:`theorybook.drut_hamiltonian.estimation` holds the design, the coefficient recovery and the phase estimators.
Everything is created on :func:`theorybook.device.resolve_device`; random counts are drawn on the CPU with a
seeded ``torch.Generator`` and moved to the device.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import torch

from ..device import resolve_device
from ..validate import integer, memory_guard, number

__all__ = [
    "KickResult", "displaced_twirled", "displacement", "hamiltonian", "kicked_evolution", "vacuum_constant",
    "vacuum_signal",
]

CDTYPE = torch.complex128
RDTYPE = torch.float64
TAIL_TOL = 1e-12  # largest coherent-state weight allowed beyond the Fock cutoff
MAX_DEGREE = 8
MAX_MODES = 3

Key = tuple[tuple[int, ...], tuple[int, ...]]


# -- coefficients ------------------------------------------------------------------------------------------------
def _as_complex(name: str, value: Any) -> complex:
    if isinstance(value, bool) or isinstance(value, (str, bytes)):
        raise TypeError(f"Invalid {name}: {value!r} (must be a complex number)")
    if isinstance(value, torch.Tensor):
        if value.numel() != 1:
            raise TypeError(f"Invalid {name}: tensor of shape {tuple(value.shape)} (must be a scalar)")
        if value.dtype == torch.bool:
            raise TypeError(f"Invalid {name}: {value!r} (must be a complex number)")
        value = value.item()
    try:
        z = complex(value)
    except (TypeError, ValueError) as err:
        raise TypeError(f"Invalid {name}: {value!r} (must be a complex number)") from err
    if not (math.isfinite(z.real) and math.isfinite(z.imag)):
        raise ValueError(f"Invalid {name}: {value!r} (must be finite)")
    return z


def _index(name: str, x: Any) -> tuple[int, ...]:
    if isinstance(x, (tuple, list)):
        if not x:
            raise ValueError(f"Invalid {name}: {x!r} (an empty multi-index)")
        return tuple(integer(name, e, 0, MAX_DEGREE) for e in x)
    return (integer(name, x, 0, MAX_DEGREE),)


def parse_coeffs(coeffs: Any, modes: int | None = None) -> tuple[int, dict[Key, complex]]:
    """Validate ``coeffs`` (``{(p, q): g}`` or ``{((p₁, p₂), (q₁, q₂)): g}``, ``g`` the coefficient of
    ``(a†)^p a^q``) and return ``(modes, {(p_tuple, q_tuple): complex})``.

    Raises ``TypeError`` for a non-mapping or non-numeric entry, ``ValueError`` for mixed mode counts, a total
    degree above :data:`MAX_DEGREE`, or non-Hermitian input (``|g_qp − ḡ_pq| > 1e-12·(1 + max|g|)``).
    """
    if not isinstance(coeffs, Mapping):
        raise TypeError(f"Invalid coeffs: {type(coeffs).__name__} (must be a dict {{(p, q): g_pq}})")
    if not coeffs:
        raise ValueError("Invalid coeffs: {} (must hold at least one coefficient)")
    out: dict[Key, complex] = {}
    for key, val in coeffs.items():
        if not isinstance(key, (tuple, list)) or len(key) != 2:
            raise TypeError(f"Invalid coeffs key: {key!r} (must be a pair (p, q))")
        p, q = _index("coeffs key p", key[0]), _index("coeffs key q", key[1])
        if len(p) != len(q):
            raise ValueError(f"Invalid coeffs key: {key!r} (p and q must have the same number of modes)")
        if sum(p) + sum(q) > MAX_DEGREE:
            raise ValueError(f"Invalid coeffs key: {key!r} (total degree must be ≤ {MAX_DEGREE})")
        g = _as_complex(f"coeffs[{key!r}]", val)
        out[(p, q)] = out.get((p, q), 0j) + g
    m = {len(p) for p, _ in out}
    if len(m) != 1:
        raise ValueError(f"Invalid coeffs: keys with {sorted(m)} modes (must all have the same number of modes)")
    n_modes = m.pop()
    if n_modes > MAX_MODES:
        raise ValueError(f"Invalid coeffs: {n_modes} modes (must be ≤ {MAX_MODES})")
    if modes is not None:
        modes = integer("modes", modes, 1, MAX_MODES)
        if modes != n_modes:
            raise ValueError(f"Invalid modes: {modes} (the coefficients' keys have {n_modes} mode(s))")
    scale = 1.0 + max(abs(g) for g in out.values())
    for (p, q), g in out.items():
        gqp = out.get((q, p), 0j)
        if abs(gqp - g.conjugate()) > 1e-12 * scale:
            raise ValueError(f"Invalid coeffs: g_{q}{p} = {gqp} but conj(g_{p}{q}) = {g.conjugate()} "
                             "(must be Hermitian: g_qp = conj(g_pq))")
    return n_modes, out


def degree_of(coeffs: Mapping) -> int:
    """Total degree ``max(|p| + |q|)`` of validated coefficients."""
    return max(sum(p) + sum(q) for p, q in coeffs)


# -- operators ---------------------------------------------------------------------------------------------------
def _monomial(p: int, q: int, n: int, device: torch.device) -> torch.Tensor:
    """``⟨k|(a†)^p a^q|l⟩ = δ_{k−p, l−q} √(l!/(l−q)!) √(k!/(k−p)!)``: exact in the truncated space (the normal
    order lowers before it raises, so no intermediate state leaves it)."""
    out = torch.zeros(n, n, dtype=CDTYPE, device=device)
    l_idx = torch.arange(q, n, device=device)
    k_idx = l_idx - q + p
    ok = k_idx < n
    l_idx, k_idx = l_idx[ok], k_idx[ok]
    lf = l_idx.to(RDTYPE)
    kf = k_idx.to(RDTYPE)
    logv = 0.5 * (torch.lgamma(lf + 1) - torch.lgamma(lf - q + 1) + torch.lgamma(kf + 1) - torch.lgamma(kf - p + 1))
    out[k_idx, l_idx] = torch.exp(logv).to(CDTYPE)
    return out


def _kron(mats: Sequence[torch.Tensor]) -> torch.Tensor:
    """Kronecker product over the last two axes (batched)."""
    out = mats[0]
    for m in mats[1:]:
        a, b = out.shape[-1], m.shape[-1]
        out = torch.einsum("...ij,...kl->...ikjl", out, m).reshape(*torch.broadcast_shapes(out.shape[:-2],
                                                                                            m.shape[:-2]),
                                                                    a * b, a * b)
    return out


def _fock(n_fock: Any, modes: int, batch: int = 1) -> int:
    n = integer("n_fock", n_fock, 2, 400)
    memory_guard(float(batch) * 3 * (n ** (2 * modes)) * 16, lower="n_fock or the number of β")
    return n


def hamiltonian(coeffs: Mapping, n_fock: int, modes: int | None = None, *, device=None) -> torch.Tensor:
    """``H = Σ g_pq (a†)^p a^q`` on ``n_fock`` levels per mode, a ``(N^m, N^m)`` complex128 matrix.

    ``modes`` defaults to the number of modes in the keys of ``coeffs``; mode ``k`` is the ``k``-th Kronecker
    factor (mode 0 slowest).
    """
    m, cf = parse_coeffs(coeffs, modes)
    n = _fock(n_fock, m)
    dev = resolve_device(device)
    dim = n**m
    H = torch.zeros(dim, dim, dtype=CDTYPE, device=dev)
    for (p, q), g in cf.items():
        if g != 0:
            H = H + g * _kron([_monomial(pk, qk, n, dev) for pk, qk in zip(p, q, strict=True)])
    return H


def _beta(beta: Any, modes: int, device: torch.device) -> torch.Tensor:
    """β as a complex128 tensor of shape ``(..., modes)`` (single mode: the given shape plus one axis)."""
    if isinstance(beta, bool) or isinstance(beta, (str, bytes)):
        raise TypeError(f"Invalid beta: {beta!r} (must be a complex number or tensor)")
    if isinstance(beta, torch.Tensor):
        if beta.dtype == torch.bool:
            raise TypeError("Invalid beta: a boolean tensor (must be complex numbers)")
        b = beta.detach().to(device=device, dtype=CDTYPE)
    else:
        try:
            b = torch.as_tensor(beta, dtype=CDTYPE, device=device)
        except (TypeError, ValueError, RuntimeError) as err:
            raise TypeError(f"Invalid beta: {beta!r} (must be a complex number or tensor)") from err
    if not bool(torch.isfinite(b.real).all() & torch.isfinite(b.imag).all()):
        raise ValueError("Invalid beta: contains NaN or ±inf (must be finite)")
    if modes == 1:
        b = b.unsqueeze(-1)
    elif b.ndim == 0 or b.shape[-1] != modes:
        raise ValueError(f"Invalid beta: shape {tuple(b.shape)} (the last axis must hold the {modes} modes)")
    if b.numel() > 10**6:
        raise ValueError(f"Invalid beta: {b.numel()} entries (must be ≤ 1e6)")
    return b


def coherent_tail(beta: torch.Tensor, n_fock: int) -> torch.Tensor:
    """``P(n ≥ N) = P(N, |β|²)`` (regularised lower incomplete gamma) of a coherent state, per entry."""
    return torch.special.gammainc(torch.full_like(beta.real, float(n_fock)), beta.abs() ** 2)


def _check_tail(b: torch.Tensor, n: int) -> None:
    tail = coherent_tail(b, n)
    worst = float(tail.max()) if tail.numel() else 0.0
    if worst > TAIL_TOL:
        big = float(b.abs().max())
        raise ValueError(f"Invalid beta: |β| up to {big:.4g} leaves a coherent tail {worst:.3g} beyond n_fock = {n} "
                         f"(must be ≤ {TAIL_TOL:g}: lower |β| or raise n_fock)")


def _displace_1(b: torch.Tensor, n: int) -> torch.Tensor:
    """``exp(β a† − β̄ a)`` for a batch of complex β (shape ``(...)``) on ``n`` levels."""
    a = _monomial(0, 1, n, b.device)
    gen = b[..., None, None] * a.mT.conj() - b.conj()[..., None, None] * a
    return torch.linalg.matrix_exp(gen)


def displacement(beta: Any, n_fock: int, modes: int = 1, *, device=None) -> torch.Tensor:
    """``D(β) = ⊗_k exp(β_k a_k† − β̄_k a_k)`` (the matrix exponential of the truncated generator, as
    ``qutip.displace`` builds it). ``beta``: shape ``(...)`` for one mode, ``(..., modes)`` for several; returns
    ``(..., N^m, N^m)``. A β whose coherent weight beyond ``n_fock`` exceeds 1e-12 raises ``ValueError``."""
    modes = integer("modes", modes, 1, MAX_MODES)
    dev = resolve_device(device)
    b = _beta(beta, modes, dev)
    n = _fock(n_fock, modes, max(1, b[..., 0].numel()))
    _check_tail(b, n)
    return _kron([_displace_1(b[..., k], n) for k in range(modes)])


def _twirl_mask(n: int, modes: int, n_phases: int | None, device: torch.device) -> torch.Tensor:
    """``(1/M) Σ_k e^{iθ_k (n_l − m_l)}`` per mode, multiplied over modes: 1 where ``n_l ≡ m_l (mod M)``, else 0."""
    idx = torch.arange(n, device=device)
    diff = idx[:, None] - idx[None, :]
    one = (diff == 0) if n_phases is None else (diff % n_phases == 0)
    return _kron([one.to(CDTYPE)] * modes)


def displaced_twirled(coeffs: Mapping, beta: Any, *, n_fock: int, n_phases: int | None = None,
                      device=None) -> torch.Tensor:
    """``H_eff(β) = 𝒯_M[D†(β) H D(β)]``: the displaced Hamiltonian averaged over ``M = n_phases`` equally spaced
    number rotations per mode (``None``: the exact U(1) twirl, ``M = 1``: no twirl). Batched over β:
    ``(..., N^m, N^m)``."""
    m, cf = parse_coeffs(coeffs)
    if n_phases is not None:
        n_phases = integer("n_phases", n_phases, 1, 10**6)
    dev = resolve_device(device)
    b = _beta(beta, m, dev)
    n = _fock(n_fock, m, max(1, b[..., 0].numel()))
    D = displacement(b if m > 1 else b[..., 0], n, m, device=dev)
    H = hamiltonian(cf, n, m, device=dev)
    HD = D.mH @ H @ D
    return HD * _twirl_mask(n, m, n_phases, dev)


def vacuum_constant(coeffs: Mapping, beta: Any, *, device=None) -> torch.Tensor:
    """``C(β) = Σ g_pq Π_k β̄_k^{p_k} β_k^{q_k}`` (real for Hermitian ``g``), shape of ``beta`` without the mode
    axis."""
    m, cf = parse_coeffs(coeffs)
    dev = resolve_device(device)
    b = _beta(beta, m, dev)
    C = torch.zeros(b.shape[:-1], dtype=CDTYPE, device=dev)
    for (p, q), g in cf.items():
        term = torch.full_like(C, g)
        for k in range(m):
            term = term * b[..., k].conj() ** p[k] * b[..., k] ** q[k]
        C = C + term
    return C.real


def vacuum_signal(H: Any, t: Any) -> torch.Tensor:
    """``⟨0|e^{+iHt}|0⟩ = Σ_k |V_0k|² e^{iλ_k t}`` (``H = VΛV†``) for Hermitian ``H`` of shape ``(..., d, d)`` and
    times ``t`` (shape ``(T,)``): ``(..., T)``. Its phase is ``C t`` when the vacuum is an eigenstate."""
    if not isinstance(H, torch.Tensor) or H.ndim < 2 or H.shape[-1] != H.shape[-2] or H.shape[-1] < 1:
        raise TypeError("Invalid H: must be a square (batched) torch tensor")
    Hc = H.to(CDTYPE)
    if not bool(torch.isfinite(Hc.real).all() & torch.isfinite(Hc.imag).all()):
        raise ValueError("Invalid H: contains NaN or ±inf")
    tt = torch.as_tensor(_times(t), dtype=RDTYPE, device=H.device).reshape(-1)
    lam, V = torch.linalg.eigh(Hc)
    w = V[..., 0, :].abs() ** 2
    return (w[..., None, :] * torch.exp(1j * lam[..., None, :] * tt[:, None])).sum(-1)


def _times(t: Any) -> list[float]:
    if isinstance(t, torch.Tensor):
        t = t.detach().to("cpu", RDTYPE).reshape(-1).tolist()
    elif not isinstance(t, (list, tuple)):
        t = [t]
    out = [number("t", x, -1e9, 1e9) for x in t]
    if not out or len(out) > 10**5:
        raise ValueError(f"Invalid t: {len(out)} times (must be 1 to 1e5)")
    return out


class KickResult(NamedTuple):
    """Times ``t = k·dt``, the vacuum amplitude averaged exactly over the kicks ``exact = u₀₀^k``, its Monte-Carlo
    estimate ``sampled`` over ``n_traj`` kick sequences (empty when ``n_traj = 0``), the ideal ``e^{−iCt}``, and the
    vacuum variance ``var = ⟨0|H_D²|0⟩ − C²`` of the displaced (untwirled) Hamiltonian."""

    t: torch.Tensor
    exact: torch.Tensor
    sampled: torch.Tensor
    ideal: torch.Tensor
    var: float


def kicked_evolution(coeffs: Mapping, beta: Any, *, dt: float, n_steps: int, n_fock: int, n_traj: int = 0,
                     seed: int = 0, device=None) -> KickResult:
    """The hardware twirl: ``U = Π_k R_{θ_k}† e^{−iH_D dt} R_{θ_k}``, ``R_θ = e^{−iθn̂}``, ``θ_k`` iid uniform,
    ``H_D = D†(β) H D(β)`` (one mode, one β).

    The amplitude ``⟨0|U|0⟩`` is multilinear in the independent steps, so its average over the kicks is
    ``⟨0|𝒯[e^{−iH_D dt}]^k|0⟩ = u₀₀^k`` with ``u₀₀ = ⟨0|e^{−iH_D dt}|0⟩`` (the exact U(1) twirl of one step is its
    diagonal). Expanding, ``ln u₀₀ = −iC dt − ½ Var₀(H_D) dt² + O(dt³)``: at fixed ``dt`` the phase is right but
    the contrast decays as ``exp(−½ Var₀ dt · t)`` — the random-kick twirl is faithful at short times only."""
    m, cf = parse_coeffs(coeffs)
    if m != 1:
        raise ValueError(f"Invalid coeffs: {m} modes (kicked_evolution simulates one mode)")
    dt = number("dt", dt, 0.0, 10.0, low_open=True)
    n_steps = integer("n_steps", n_steps, 1, 100_000)
    n_traj = integer("n_traj", n_traj, 0, 100_000)
    seed = integer("seed", seed, 0)
    dev = resolve_device(device)
    b = _beta(beta, 1, dev)
    if b.numel() != 1:
        raise TypeError(f"Invalid beta: {b.numel()} values (kicked_evolution takes one β)")
    n = _fock(n_fock, 1)
    memory_guard(16.0 * (n_traj + 2) * n + 16.0 * (n_steps + 1) * 4, lower="n_traj, n_steps or n_fock")
    HD = displaced_twirled(cf, b.reshape(()), n_fock=n, n_phases=1, device=dev)
    U = torch.linalg.matrix_exp(-1j * dt * HD)
    k = torch.arange(n_steps + 1, device=dev, dtype=RDTYPE)
    exact = U[0, 0] ** k
    C = float(vacuum_constant(cf, b.reshape(()), device=dev))
    t = k * dt
    ideal = torch.exp(-1j * C * t)
    var = float(torch.linalg.vector_norm(HD[1:, 0]) ** 2)  # ⟨0|H_D²|0⟩ − C² for Hermitian H_D
    sampled = torch.empty(0, dtype=CDTYPE, device=dev)
    if n_traj:
        gen = torch.Generator().manual_seed(seed)
        nh = torch.arange(n, device=dev, dtype=RDTYPE)
        psi = torch.zeros(n_traj, n, dtype=CDTYPE, device=dev)
        psi[:, 0] = 1
        amps = [psi[:, 0].mean()]
        for _ in range(n_steps):
            th = (2 * math.pi * torch.rand(n_traj, 1, generator=gen, dtype=RDTYPE)).to(dev)
            ph = torch.exp(1j * th * nh)  # R_θ† = e^{iθn̂}
            psi = ph * ((ph.conj() * psi) @ U.mT)
            amps.append(psi[:, 0].mean())
        sampled = torch.stack(amps)
    return KickResult(t, exact, sampled, ideal, var)
