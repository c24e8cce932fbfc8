"""The two-layer toy of Theorem 1 and a two-layer ReLU MLP on sparse parity (torch).

Toy model ([secondary], Theorem 1 of :cite:t:`liu2026lessdata` as reported by third-party notes):
``f(x) = a·σ(wᵀx) − 1`` with ``σ(z) = z²/2`` and correlation loss ``ℓ = −y·f`` on ``x ~ Unif{±1}^d``,
``y = x₁x₂``. With the empirical moment ``M̂ = (1/N) Σ_i y_i x_i x_iᵀ`` the (projected) gradient steps are

.. math::
    a \\leftarrow \\mathrm{clip}\\big(a + \\tfrac{\\eta}{2}\\, w^\\top \\hat M w,\\ [-1, 1]\\big), \\qquad
    w \\leftarrow \\frac{w + \\eta\\, a\\, \\hat M w}{\\lVert w + \\eta\\, a\\, \\hat M w \\rVert},

both computed from the same ``(a, w)``. The population moment is ``M = e₁e₂ᵀ + e₂e₁ᵀ``. Two-phase training uses
``M̂`` until ``|a| ≥ a⋆`` and ``M`` afterwards; training stops at the first step with
``1 − (w₁² + w₂²) < ε``.

Random ±1 inputs are drawn as random bytes (8 independent signs per byte, 64 per ``int64``), on a CPU
``torch.Generator``, then moved to the requested device: the same seed gives the same numbers on every device.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, TypeVar

import torch

from ..device import one_thread, resolve_device
from ..validate import finite_tensor, integer, memory_guard, number, one_of

__all__ = [
    "LABELS", "MLPRun", "ToyGrid", "ToyRun", "mlp_norm_ratio", "parity_moment", "qhat_samples",
    "sampling_bias_std", "toy_grid", "toy_run",
]

LABELS = ("true", "random")
_DT = torch.float64
_F = TypeVar("_F", bound=Callable[..., Any])


def single_threaded(fn: _F) -> _F:
    """Run ``fn`` with one torch CPU thread: these loops issue many small ops, for which a second thread only adds
    synchronisation (see :func:`theorybook.device.one_thread`); results do not depend on it."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with one_thread("cpu"):
            return fn(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


# -- random signs ---------------------------------------------------------------------------------------------
def _random_bytes(n: int, gen: torch.Generator) -> torch.Tensor:
    """``n`` independent uniform bytes (uint8, CPU): 8 per int64 draw."""
    k = (n + 7) // 8
    raw = torch.randint(-(2**63), 2**63 - 1, (k,), generator=gen, dtype=torch.int64)
    return raw.view(torch.uint8)[:n]


_BITS = torch.arange(8, dtype=torch.uint8)


def _signs(shape: tuple[int, int], gen: torch.Generator, dtype: torch.dtype = _DT) -> torch.Tensor:
    """A ``(rows, d)`` tensor of independent Rademacher signs (CPU)."""
    rows, d = shape
    nb = (d + 7) // 8
    b = _random_bytes(rows * nb, gen).reshape(rows, nb, 1)
    bits = ((b >> _BITS) & 1).reshape(rows, nb * 8)[:, :d]
    return bits.to(dtype) * 2 - 1


def _gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _seed(seed: Any) -> int:
    return integer("seed", seed, 0, 2**62)


def _d(d: Any, high: int = 100_000) -> int:
    return integer("d", d, 3, high)


def _labels(labels: Any) -> str:
    if not isinstance(labels, str):
        raise ValueError(f"Invalid labels: {labels!r} (must be one of 'true', 'random')")
    return one_of("labels", labels, LABELS)


# -- the empirical moment and its fluctuation -----------------------------------------------------------------
def _moments(n: int, d: int, batch: int, gen: torch.Generator, labels: str, device: torch.device) -> torch.Tensor:
    """``batch`` independent ``M̂ = (1/N) Σ y x xᵀ`` (float64, on ``device``), built one at a time.

    Entries are sums of ±1 terms (integers ≤ N), so float32 accumulation is exact; the result is float64.
    """
    out = torch.empty(batch, d, d, dtype=_DT, device=device)
    for b in range(batch):
        X = _signs((n, d), gen, torch.float32)
        y = X[:, 0] * X[:, 1] if labels == "true" else _signs((n, 1), gen, torch.float32)[:, 0]
        X = X.to(device)
        out[b] = ((X * y.to(device)[:, None]).T @ X).to(_DT) / n
    return out


@single_threaded
def parity_moment(n_samples: int, d: int, seed: int = 0, labels: str = "true", *, device: Any = None
                  ) -> torch.Tensor:
    """The empirical moment ``M̂ = (1/N) Σ_{i≤N} y_i x_i x_iᵀ`` of ``N = n_samples`` draws ``x ~ Unif{±1}^d``.

    ``labels="true"``: ``y = x₁x₂`` (2-sparse parity; ``E M̂ = M = e₁e₂ᵀ + e₂e₁ᵀ``); ``labels="random"``: ``y``
    independent ±1 (``E M̂ = 0``). Returns a ``(d, d)`` float64 tensor on ``device``.
    """
    N = integer("n_samples", n_samples, 1, 10**7)
    dd = _d(d)
    lab = _labels(labels)
    s = _seed(seed)
    memory_guard(4.0 * N * dd + 8.0 * dd * dd, lower="n_samples or d")
    return _moments(N, dd, 1, _gen(s), lab, resolve_device(device))[0]


def sampling_bias_std(w: Any, n_samples: Any, labels: str = "true") -> torch.Tensor:
    """Standard deviation of ``q̂ = wᵀM̂w`` over the draw of the ``N`` samples (closed form, [derived]).

    With ``z = wᵀx``: ``E z⁴ = 3‖w‖⁴ − 2Σ w_i⁴`` (Rademacher moment rules), so
    ``Var q̂ = (3‖w‖⁴ − 2Σw_i⁴ − 4w₁²w₂²)/N`` for ``y = x₁x₂`` (``E q̂ = 2w₁w₂``) and ``(3‖w‖⁴ − 2Σw_i⁴)/N`` for random
    labels (``E q̂ = 0``). ``w``: ``(..., d)``; ``n_samples``: a number or a tensor broadcasting against ``w[..., 0]``.
    """
    wt = finite_tensor("w", w)
    if wt.ndim < 1 or wt.shape[-1] < 2:
        raise ValueError(f"Invalid w: shape {tuple(wt.shape)} (must have a last dimension d ≥ 2)")
    wt = wt.to(_DT)
    nt = finite_tensor("n_samples", n_samples).to(_DT).to(wt.device)
    if nt.numel() == 0 or bool((nt < 1).any()):
        raise ValueError(f"Invalid n_samples: {n_samples!r} (must be ≥ 1)")
    lab = _labels(labels)
    s2 = (wt**2).sum(-1)
    var = 3 * s2**2 - 2 * (wt**4).sum(-1)
    if lab == "true":
        var = var - 4 * wt[..., 0] ** 2 * wt[..., 1] ** 2
    return torch.sqrt(var.clamp_min(0) / nt)


@single_threaded
def qhat_samples(w: Any, n_samples: Sequence[int], draws: int = 2000, labels: str = "true", seed: int = 0, *,
                 device: Any = None) -> torch.Tensor:
    """Monte-Carlo draws of ``q̂(N) = wᵀM̂w = (1/N) Σ_{i≤N} y_i (wᵀx_i)²`` at a fixed ``w`` (no closed form used).

    Each of ``draws`` independent pools holds ``max(n_samples)`` samples; ``q̂(N)`` is the mean over its first
    ``N`` (nested subsets, as in a growing data set). ``wᵀx`` is summed exactly from random bytes: each byte of 8
    signs indexes a table of the 256 partial sums ``Σ_{j in block} ±w_j``. Returns ``(draws, len(n_samples))``.
    """
    wt = finite_tensor("w", w, ndim=1).to("cpu", _DT)
    d = wt.numel()
    if d < 2 or float(wt.norm()) == 0.0:
        raise ValueError(f"Invalid w: shape {tuple(wt.shape)} (must be a non-zero vector with d ≥ 2)")
    if not isinstance(n_samples, (list, tuple)) or not n_samples:
        raise TypeError(f"Invalid n_samples: {n_samples!r} (must be a non-empty list of integers)")
    ns = [integer("n_samples", n, 1, 10**7) for n in n_samples]
    R = integer("draws", draws, 2, 10**6)
    lab = _labels(labels)
    s = _seed(seed)
    nb = (d + 7) // 8
    nmax = max(ns)
    memory_guard(16.0 * R * nmax * nb, lower="draws or n_samples")
    # table[block, byte] = Σ_{j<8} (2·bit_j(byte) − 1)·w[8·block + j]
    wp = torch.zeros(nb * 8, dtype=_DT)
    wp[:d] = wt
    bits = ((torch.arange(256)[:, None] >> torch.arange(8)) & 1).to(_DT) * 2 - 1  # (256, 8)
    table = (wp.reshape(nb, 1, 8) * bits).sum(-1).reshape(-1)  # (nb·256,)
    offset = (torch.arange(nb) * 256).to(torch.int32)
    gen = _gen(s)
    cols = torch.tensor(ns) - 1
    out = torch.empty(R, len(ns), dtype=_DT)
    chunk = max(1, int(4e6 // (nmax * nb)))
    for r0 in range(0, R, chunk):
        r1 = min(R, r0 + chunk)
        b = _random_bytes((r1 - r0) * nmax * nb, gen).reshape(r1 - r0, nmax, nb)
        idx = b.to(torch.int32)
        idx += offset
        z = table.index_select(0, idx.view(-1)).view(idx.shape).sum(-1)
        if lab == "true":
            # x₁x₂ = (2b₀ − 1)(2b₁ − 1) = (1 − 2b₀)(1 − 2b₁), b_j the bits of the first byte (same map as `table`)
            y = (1 - 2 * (b[..., 0] & 1).to(_DT)) * (1 - 2 * ((b[..., 0] >> 1) & 1).to(_DT))
        else:
            y = _signs(((r1 - r0) * nmax, 1), gen)[:, 0].reshape(r1 - r0, nmax)
        csum = (y * z * z).cumsum(1)
        out[r0:r1] = csum[:, cols] / torch.tensor(ns, dtype=_DT)
    return out.to(resolve_device(device))


# -- the toy dynamics ----------------------------------------------------------------------------------------
class ToyRun(NamedTuple):
    """Result of :func:`toy_run` (``S`` seeds, ``T`` recorded steps).

    ``steps``: first ``t`` with ``1 − (w₁² + w₂²) < ε`` (−1 if not reached within ``max_steps``), shape ``(S,)``.
    ``phase1_steps``: first ``t`` with ``|a_t| ≥ a⋆`` (0 for population GD; −1 if never), shape ``(S,)``.
    ``a``, ``align``: ``a_t`` and ``w₁² + w₂²`` for ``t = 0..T``, shape ``(T + 1, S)``; the run stops when every
    seed has converged (or at ``max_steps``), and a converged seed keeps training until then. With
    ``record=False`` only the last step is kept (shape ``(1, S)``).
    """

    steps: torch.Tensor
    phase1_steps: torch.Tensor
    a: torch.Tensor
    align: torch.Tensor


def _sphere(n: int, d: int, gen: torch.Generator) -> torch.Tensor:
    g = torch.randn(n, d, generator=gen, dtype=_DT)
    return g / g.norm(dim=1, keepdim=True)


def _simulate(w: torch.Tensor, a: torch.Tensor, eta: float, a_star: float, eps: float, max_steps: int,
              mhat: torch.Tensor | None, record: bool, mrows: torch.Tensor | None = None) -> ToyRun:
    """Batched projected GD from rows ``(a, w)``; row ``mrows[j]`` (default: row ``j``) uses ``mhat[j]`` while
    ``|a| < a⋆``; the other rows use ``M`` throughout (population GD).

    Stage 1 (while some row is in Phase 1): the full step, ``M̂w`` by a batched matvec on the Phase-1 rows.
    Stage 2 (every row on ``M``): ``Mw = (w₂, w₁, 0, …)`` only touches ``w₁, w₂``, and the normalisation rescales
    the rest, so the state ``(a, w₁, w₂, ‖w_{3:d}‖²)`` evolves exactly (the same arithmetic, d-independent cost).
    """
    B, d = w.shape
    dev = w.device
    t1 = torch.zeros(B, dtype=torch.int64, device=dev)
    hist_a, hist_al = [a], [w[:, 0] ** 2 + w[:, 1] ** 2]
    t = 0
    ceiling = 1 - eps

    def converged() -> bool:
        return bool((hist_al[-1] > ceiling).all())

    if mhat is not None:
        idx = torch.arange(B, device=dev) if mrows is None else mrows.to(dev)  # rows whose M̂ is kept in `mh`
        p1 = torch.zeros(B, dtype=torch.bool, device=dev)
        p1[idx] = True
        t1[idx] = -1
        mh = mhat
        while True:
            left = p1 & (a.abs() >= a_star)
            t1 = torch.where(left, torch.full_like(t1, t), t1)
            p1 = p1 & ~left
            keep = p1[idx]
            n_keep = int(keep.sum())
            if n_keep == 0 or t >= max_steps or converged():
                break
            if n_keep < 0.6 * idx.numel():  # drop rows that left Phase 1 (keeps the cost ∝ Σ T₁)
                mh, idx, keep = mh[keep], idx[keep], keep[keep]
            Mw = torch.zeros_like(w)
            Mw[:, 0], Mw[:, 1] = w[:, 1], w[:, 0]
            mv = torch.bmm(w[idx].unsqueeze(1), mh).squeeze(1)  # wᵀM̂ = (M̂w)ᵀ: M̂ is symmetric; this layout is faster
            Mw[idx] = torch.where(keep[:, None], mv, Mw[idx])
            q = (w * Mw).sum(1)
            w_new = w + eta * a[:, None] * Mw
            w = w_new / w_new.norm(dim=1, keepdim=True)
            a = torch.clamp(a + 0.5 * eta * q, -1.0, 1.0)
            t += 1
            hist_a.append(a)
            hist_al.append(w[:, 0] ** 2 + w[:, 1] ** 2)
    # Stage 2: ‖w‖ = 1, so ‖w_{3:d}‖² = 1 − (w₁² + w₂²) before each step; the check for convergence runs every 8
    # steps (the first crossing is read off the history afterwards, so the step counts are exact).
    P = w[:, :2].clone()  # (w₁, w₂)
    al = (P * P).sum(1)
    while t < max_steps and (t % 8 or not converged()):
        Pn = torch.addcmul(P, (eta * a)[:, None], P.flip(1))  # w + ηa·Mw on the first two coordinates
        uv2 = (Pn * Pn).sum(1)
        inv2 = (uv2 - al).add_(1.0).reciprocal_()  # 1/‖w + ηaMw‖², the rest of w keeps its norm² 1 − al
        a = torch.clamp(torch.addcmul(a, P[:, 0], P[:, 1], value=eta), -1.0, 1.0)  # a + (η/2)·2w₁w₂
        P = Pn * inv2.sqrt()[:, None]
        al = uv2 * inv2
        t += 1
        hist_a.append(a)
        hist_al.append(al)
    al = torch.stack(hist_al)
    hit = (1 - al) < eps
    steps = torch.where(hit.any(0), hit.to(torch.int32).argmax(0), torch.full_like(t1, -1))
    return ToyRun(steps, t1, torch.stack(hist_a) if record else a[None], al if record else al[-1:])


def _toy_args(d: Any, eta: Any, a_star: Any, a0: Any, eps: Any, max_steps: Any, seeds: Any, seed: Any
              ) -> tuple[int, float, float, float, float, int, int, int]:
    dd = _d(d)
    e = number("eta", eta, 0.0, 10.0, low_open=True)
    ast = number("a_star", a_star, 0.0, 1.0, low_open=True)
    aa = number("a0", a0, -1.0, 1.0)
    ep = number("eps", eps, 0.0, 1.0, low_open=True, high_open=True)
    T = integer("max_steps", max_steps, 1, 10**6)
    S = integer("seeds", seeds, 1, 100_000)
    return dd, e, ast, aa, ep, T, S, _seed(seed)


@single_threaded
def toy_run(d: int, eta: float, *, n_samples: int | None = None, labels: str = "true", a_star: float = 0.3,
            a0: float = 0.01, w0: Any = None, eps: float = 1e-2, max_steps: int = 100_000, seeds: int = 1,
            seed: int = 0, record: bool = True, device: Any = None) -> ToyRun:
    """Run the toy of Theorem 1 for ``seeds`` independent initialisations (and data sets), batched.

    ``n_samples=None``: population GD throughout (``M``). Otherwise two-phase: Phase 1 uses ``M̂`` from
    ``n_samples`` fresh draws per seed (labels ``y = x₁x₂`` or random ±1) until ``|a| ≥ a⋆``, then ``M``.
    ``w₀`` is uniform on the sphere (seeded) unless given (``(d,)`` or ``(seeds, d)``, renormalised).
    """
    dd, e, ast, aa, ep, T, S, s = _toy_args(d, eta, a_star, a0, eps, max_steps, seeds, seed)
    lab = _labels(labels)
    if not isinstance(record, bool):
        raise TypeError(f"Invalid record: {record!r} (must be True or False)")
    N = None if n_samples is None else integer("n_samples", n_samples, 1, 10**7)
    dev = resolve_device(device)
    memory_guard(8.0 * S * dd * (dd if N is not None else 1) + 8.0 * S * dd * 4 + 16.0 * S * T,
                 lower="seeds, d or max_steps")
    gen = _gen(s)
    if w0 is None:
        w = _sphere(S, dd, gen)
    else:
        w = finite_tensor("w0", w0).to("cpu", _DT)
        if w.shape not in ((dd,), (S, dd)):
            raise ValueError(f"Invalid w0: shape {tuple(w.shape)} (must be ({dd},) or ({S}, {dd}))")
        w = w.expand(S, dd).clone()
        if bool((w.norm(dim=1) == 0).any()):
            raise ValueError("Invalid w0: zero norm (must be a non-zero vector)")
        w = w / w.norm(dim=1, keepdim=True)
    mhat = None if N is None else _moments(N, dd, S, gen, lab, dev)
    a = torch.full((S,), aa, dtype=_DT, device=dev)
    return _simulate(w.to(dev), a, e, ast, ep, T, mhat, record)


class ToyGrid(NamedTuple):
    """Steps to alignment and Phase-1 steps for labels × ``N`` × seeds, and the population baseline per seed.

    ``steps``/``phase1``: shape ``(len(labels), len(ns), S)``; ``population``: ``(S,)``; −1 = not reached within
    ``max_steps`` (a censored run: it ranks above every finished one, so a median over seeds is exact as long as
    fewer than half of the seeds are censored).
    """

    labels: tuple[str, ...]
    ns: tuple[int, ...]
    steps: torch.Tensor
    phase1: torch.Tensor
    population: torch.Tensor
    w0: torch.Tensor  # (S, d)


@single_threaded
def toy_grid(d: int, eta: float, ns: Sequence[int], *, labels: Sequence[str] = ("true",), a_star: float = 0.3,
             a0: float = 0.01, eps: float = 1e-2, max_steps: int = 100_000, seeds: int = 16, seed: int = 0,
             population: bool = True, device: Any = None) -> ToyGrid:
    """Two-phase runs for every label type, every ``N`` in ``ns`` and ``seeds`` initialisations, plus population
    GD from the same ``w₀`` (one ``w₀`` per seed, shared by every configuration: a paired comparison), all in one
    batched simulation; ``M̂`` is drawn independently per (labels, ``N``, seed)."""
    dd, e, ast, aa, ep, T, S, s = _toy_args(d, eta, a_star, a0, eps, max_steps, seeds, seed)
    if isinstance(labels, str) or not isinstance(labels, (list, tuple)) or not labels:
        raise TypeError(f"Invalid labels: {labels!r} (must be a non-empty tuple of 'true'/'random')")
    labs = tuple(_labels(lab) for lab in labels)
    if not isinstance(ns, (list, tuple)) or not ns:
        raise TypeError(f"Invalid ns: {ns!r} (must be a non-empty list of integers)")
    nn = tuple(integer("ns", n, 1, 10**7) for n in ns)
    if not isinstance(population, bool):
        raise TypeError(f"Invalid population: {population!r} (must be True or False)")
    dev = resolve_device(device)
    R = S * len(nn) * len(labs)
    memory_guard(8.0 * R * dd * dd + 16.0 * (R + S) * T + 4.0 * max(nn) * dd, lower="seeds, d, ns or max_steps")
    gen = _gen(s)
    w0 = _sphere(S, dd, gen)
    mh = torch.cat([_moments(n, dd, S, gen, lab, dev) for lab in labs for n in nn])
    B = R + (S if population else 0)
    w = w0.repeat(B // S, 1).to(dev)
    run = _simulate(w, torch.full((B,), aa, dtype=_DT, device=dev), e, ast, ep, T, mh, False,
                    torch.arange(R, device=dev))
    shape = (len(labs), len(nn), S)
    pop = run.steps[R:] if population else torch.full((S,), -1, dtype=torch.int64, device=dev)
    return ToyGrid(labs, nn, run.steps[:R].reshape(shape), run.phase1_steps[:R].reshape(shape), pop, w0.to(dev))


# -- experiment B: a two-layer ReLU MLP on sparse parity ------------------------------------------------------
class MLPRun(NamedTuple):
    """``ratio[i, s, t] = ‖a‖₂/‖W‖_F`` after ``t`` steps for data-set size ``ns[i]`` (None = fresh samples) and
    seed ``s``; ``accuracy[i, s]``: accuracy on 2,048 fresh test points after the last step."""

    ns: tuple[int | None, ...]
    ratio: torch.Tensor
    accuracy: torch.Tensor


@single_threaded
def mlp_norm_ratio(ns: Sequence[int | None] = (256, 1024, 4096, None), *, d: int = 20, k: int = 3, width: int = 256,
                   batch: int = 128, lr: float = 0.1, steps: int = 300, init_scale: float = 1.0,
                   lr_a_mult: float = 1.0, seeds: int = 3, seed: int = 0, device: Any = None) -> MLPRun:
    """Train ``f(x) = Σ_j a_j ReLU(w_jᵀx)`` on ``(d, k)``-sparse parity ``y = x₁⋯x_k`` with logistic loss and SGD.

    ``W ~ N(0, 1/d)``, ``a ~ N(0, 1/width)·init_scale``; learning rate ``lr`` for ``W`` and ``lr·lr_a_mult`` for
    ``a`` (``η_a/η_w``). A finite ``N`` draws a fixed training set and samples each mini-batch from it (with
    replacement: many epochs); ``None`` draws a fresh batch every step (same compute). All ``len(ns) × seeds``
    models train at once (batched matmuls, hand-written gradients).
    """
    if not isinstance(ns, (list, tuple)) or not ns:
        raise TypeError(f"Invalid ns: {ns!r} (must be a non-empty list of integers or None)")
    nn = tuple(None if n is None else integer("ns", n, 1, 10**7) for n in ns)
    sc = number("init_scale", init_scale, 0.0, 1e3)
    run = _mlp_train(nn, (sc,), d=d, k=k, width=width, batch=batch, lr=lr, steps=steps, lr_a_mult=lr_a_mult,
                     seeds=seeds, seed=seed, device=device)
    return MLPRun(nn, run[0][0], run[1][0])


def _mlp_grads(X: torch.Tensor, Xt: torch.Tensor, y: torch.Tensor, W: torch.Tensor, a: torch.Tensor
               ) -> tuple[torch.Tensor, torch.Tensor]:
    """Gradients of the mean logistic loss ``log(1 + exp(−y f))`` of ``f = Σ_j a_j ReLU(w_jᵀx)`` for a batch of
    models: ``X`` (K, B, d), ``Xt = Xᵀ`` (K, d, B), ``y`` (K, B), ``W`` stored as ``Wᵀ`` (K, d, m), ``a`` (K, m)."""
    B = X.shape[1]
    r = torch.relu(torch.bmm(X, W))  # (K, B, m)
    f = torch.bmm(a[:, None, :], r.transpose(1, 2)).squeeze(1)
    g = -y * torch.sigmoid(-y * f) / B  # ∂(mean loss)/∂f
    grad_a = torch.bmm(g[:, None, :], r).squeeze(1)
    # ∂/∂w_j = a_j Σ_b g_b 1[h_bj > 0] x_b; sign(ReLU(h)) is that indicator
    grad_W = torch.bmm(Xt * g[:, None, :], torch.sign(r)) * a[:, None, :]
    return grad_a, grad_W


@single_threaded
def _mlp_train(nn: tuple[int | None, ...], scales: tuple[float, ...], *, d: Any, k: Any, width: Any, batch: Any,
               lr: Any, steps: Any, lr_a_mult: Any, seeds: Any, seed: Any, device: Any
               ) -> tuple[torch.Tensor, torch.Tensor]:
    """Models for every (scale, N, seed); the scales share ``W``, the direction of ``a``, the data and the
    mini-batches (a paired comparison). Returns ratio ``(len(scales), len(nn), S, T + 1)`` and accuracy."""
    dd = integer("d", d, 1, 4096)
    kk = integer("k", k, 1, dd)
    m = integer("width", width, 1, 65_536)
    B = integer("batch", batch, 1, 65_536)
    eta = number("lr", lr, 0.0, 100.0, low_open=True)
    T = integer("steps", steps, 1, 20_000)
    mult = number("lr_a_mult", lr_a_mult, 0.0, 1e3)
    S = integer("seeds", seeds, 1, 1000)
    s = _seed(seed)
    dev = resolve_device(device)
    L, C = len(scales), len(nn) * S
    K = L * C
    nmax = max([n for n in nn if n is not None], default=0)
    memory_guard(4.0 * K * (4 * m * dd + 4 * B * m + T) + 4.0 * C * nmax * dd + 8.0 * T * K * B * (dd + 1),
                 lower="ns, seeds, width, batch or steps")
    gen = _gen(s)
    f32 = torch.float32
    W0 = torch.randn(C, m, dd, generator=gen) / math.sqrt(dd)
    a0 = torch.randn(C, m, generator=gen) / math.sqrt(m)
    W = W0.transpose(1, 2).repeat(L, 1, 1).contiguous().to(dev)  # stored as Wᵀ: (K, d, m)
    a = torch.cat([a0 * c for c in scales]).to(dev)
    # the whole input stream, drawn up front: (T, C, B, d); a finite N samples its mini-batches (with replacement)
    # from a fixed set of N points, None gets T·B distinct fresh points
    stream = torch.empty(T, len(nn), S, B, dd, dtype=f32)
    for i, n in enumerate(nn):
        if n is None:
            stream[:, i] = _signs((T * S * B, dd), gen, f32).reshape(T, S, B, dd)
        else:
            data = _signs((S * n, dd), gen, f32).reshape(S, n, dd)
            pick = torch.randint(0, n, (T, S, B), generator=gen)
            stream[:, i] = data[torch.arange(S)[None, :, None], pick]
    stream = stream.reshape(T, 1, C, B, dd).expand(T, L, C, B, dd).reshape(T, K, B, dd).to(dev)
    stream_t = stream.transpose(2, 3).contiguous()  # (T, K, d, B) for the W-gradient
    labels = stream[..., :kk].prod(-1)  # (T, K, B)
    ratio = torch.empty(K, T + 1, dtype=f32, device=dev)
    ratio[:, 0] = a.norm(dim=1) / W.flatten(1).norm(dim=1)
    for t in range(T):
        X, y = stream[t], labels[t]
        grad_a, grad_W = _mlp_grads(X, stream_t[t], y, W, a)
        a = a - eta * mult * grad_a
        W = W - eta * grad_W
        ratio[:, t + 1] = a.norm(dim=1) / W.flatten(1).norm(dim=1)
    if not bool(torch.isfinite(ratio).all()):
        raise ValueError(f"Invalid lr: {eta:g} (training diverged to non-finite weights; lower lr, lr_a_mult or "
                         "init_scale)")
    Xt = _signs((2048, dd), gen, f32).to(dev)
    yt = Xt[:, :kk].prod(-1)
    ft = torch.bmm(torch.relu(torch.einsum("nd,kdm->knm", Xt, W)), a[..., None]).squeeze(-1)
    acc = ((ft * yt) > 0).to(f32).mean(1)
    return ratio.reshape(L, len(nn), S, T + 1), acc.reshape(L, len(nn), S)
