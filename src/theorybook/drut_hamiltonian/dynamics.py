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

Everything is created on :func:`theorybook.device.resolve_device`; random counts are drawn on the CPU with a
seeded ``torch.Generator`` and moved to the device.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import torch

from ..device import resolve_device
from ..fit import _lstsq
from ..validate import integer, memory_guard, number, one_of

__all__ = [
    "Design", "KickResult", "Learned", "RPEResult", "crb", "design", "displaced_twirled", "displacement",
    "hamiltonian", "kicked_evolution", "learn", "ramsey", "ramsey_crb", "recover", "rpe", "rpe_schedule",
    "vacuum_constant", "vacuum_signal",
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
