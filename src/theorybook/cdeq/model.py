"""The system: the digits data, the linear-recurrence DEQ teachers (the digits teacher and the hard teacher), the
time grids and the two student networks.

Teacher (the toy is ours, not the paper's [derived]):

.. math:: f_\\theta(z, x) = \\bar W z + \\tanh(Ux + b),\\qquad \\bar W = \\gamma W/\\lVert W\\rVert_2,\\qquad
          z^* = (I - \\bar W)^{-1}\\tanh(Ux + b),

so ``‖f(z) − f(z')‖ ≤ γ‖z − z'‖`` and the Picard iterates from ``z₀ = 0`` obey ``z_k − z* = −W̄^k z*``,
``‖z_k − z*‖ ≤ γ^k ‖z*‖``. The fixed point is exact (one linear solve), so the teacher is trained with exact implicit
differentiation through ``torch.linalg.solve`` and no solver in the loop.

The *hard teacher* (:func:`hard_teacher`) keeps the trained ``W̄`` (its slow modes) but multiplies ``U`` and ``b`` by a
gain and reads ``z*`` with a random linear head; its labels are its own predictions (:func:`teacher_labels`). Its
equilibrium is a linear map of 64 steep features of the pixels, which a regressor from ``x`` alone must learn while
a student that calls the layer gets them from ``f(0, x)``.

Student (C-DEQ; the form follows the paper [paper, code], the time convention is ours [reconstruction]): the Picard
states ``z_k`` at ``k ∈ KS`` carry times ``t_k = max(ε, T(1 − ln(1+k)/ln(1+k_max)))``, decreasing toward the
equilibrium, and

.. math:: F_\\phi(z, t, x) = c_{\\rm skip}(t)\\,z
          + c_{\\rm out}(t)\\,[f_\\phi(z, x) + g_\\phi([z, f_\\phi(z, x), t, x])],
          \\qquad c_{\\rm skip} = \\min(1, (\\varepsilon/t)^2),\\ c_{\\rm out} = 1 - c_{\\rm skip},

identity at ``t = ε`` (the equilibrium end). ``f_φ`` is a **frozen** copy of the teacher's layer; only the MLP ``g_φ``
is trained. One student call costs one call of ``f_φ`` (1 NFE) plus the MLP.
"""

from __future__ import annotations

import copy
import functools
import math
from collections.abc import Sequence
from typing import Any, NamedTuple

import torch
from torch import nn

from ..device import resolve_device
from ..validate import finite_tensor, integer, memory_guard, number, one_of
from .theory import skip_out_value

__all__ = ["KS", "ConsistencyStudent", "ExplicitStudent", "LinearDEQ", "Split", "digits_split", "hard_teacher",
           "karras_times", "skip_out", "teacher_labels", "trajectory_times"]

#: Picard indices whose states form the training trajectory (issue 17, digest §6).
KS = (0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128)
_MAX_STEPS = 20_000
_MAX_NFE = 4096



# ---------------------------------------------------------------------------------------------------------- data
class Split(NamedTuple):
    """Train/test inputs (pixels / 16, float64) and labels."""

    x_train: torch.Tensor
    y_train: torch.Tensor
    x_test: torch.Tensor
    y_test: torch.Tensor


def digits_split(seed: int = 0, n_train: int = 1400, *, device: str | torch.device | None = None) -> Split:
    """``sklearn.datasets.load_digits`` (1797 × 64, pixels scaled to [0, 1]) split by a seeded permutation into
    ``n_train`` training and ``1797 − n_train`` test images."""
    seed = integer("seed", seed, 0)
    n_train = integer("n_train", n_train, 10, 1787)
    dev = resolve_device(device)
    x, y = _digits()
    perm = torch.randperm(x.shape[0], generator=torch.Generator().manual_seed(seed))
    tr, te = perm[:n_train], perm[n_train:]
    return Split(x[tr].to(dev), y[tr].to(dev), x[te].to(dev), y[te].to(dev))


@functools.lru_cache(maxsize=1)
def _digits_cached() -> tuple[torch.Tensor, torch.Tensor]:
    from sklearn.datasets import load_digits

    d = load_digits()
    return torch.tensor(d.data, dtype=torch.float64) / 16.0, torch.tensor(d.target, dtype=torch.long)


def _digits() -> tuple[torch.Tensor, torch.Tensor]:
    x, y = _digits_cached()
    return x.clone(), y.clone()


def _check_split(split: Any) -> Split:
    if not isinstance(split, Split):
        raise TypeError(f"Invalid split: {type(split).__name__} (must be a Split from digits_split)")
    return split


# ------------------------------------------------------------------------------------------------------- teacher
class LinearDEQ(nn.Module):
    """The teacher ``f(z, x) = W̄ z + tanh(Ux + b)``, ``W̄ = γ W/‖W‖₂`` (so ``Lip_z f = γ < 1``), with a linear head
    ``logits = head(z*)``. Float64 parameters on ``device``."""

    def __init__(self, n_in: int = 64, hidden: int = 64, n_classes: int = 10, gamma: float = 0.99, *, seed: int = 0,
                 device: str | torch.device | None = None) -> None:
        super().__init__()
        n_in = integer("n_in", n_in, 1, 4096)
        hidden = integer("hidden", hidden, 1, 2048)
        n_classes = integer("n_classes", n_classes, 2, 4096)
        self.gamma = number("gamma", gamma, 0.0, 1.0, low_open=True, high_open=True)
        seed = integer("seed", seed, 0)
        dev = resolve_device(device)
        g = torch.Generator().manual_seed(seed)
        kw = {"dtype": torch.float64}
        self.W = nn.Parameter((torch.randn(hidden, hidden, generator=g, **kw) / math.sqrt(hidden)).to(dev))
        self.U = nn.Parameter((torch.randn(hidden, n_in, generator=g, **kw) / math.sqrt(n_in)).to(dev))
        self.b = nn.Parameter(torch.zeros(hidden, **kw).to(dev))
        self.head = nn.Linear(hidden, n_classes, dtype=torch.float64).to(dev)
        with torch.no_grad():
            self.head.weight.copy_((torch.randn(n_classes, hidden, generator=g, **kw) / math.sqrt(hidden)).to(dev))
            self.head.bias.zero_()
        self.gate_params: tuple[torch.Tensor, torch.Tensor, float] | None = None  # (G, c, s_min): see gate()

    @classmethod
    def from_weights(cls, W: torch.Tensor, U: torch.Tensor, b: torch.Tensor, *, gamma: float,
                     head: tuple[torch.Tensor, torch.Tensor] | None = None) -> LinearDEQ:
        """A teacher with given ``W`` (H × H, rescaled to ``‖W̄‖₂ = γ``), ``U`` (H × n_in), ``b`` (H) and optionally
        ``head = (weight (C × H), bias (C))``; placed on ``W``'s device."""
        W = finite_tensor("W", W, ndim=2)
        U = finite_tensor("U", U, ndim=2)
        b = finite_tensor("b", b, ndim=1)
        H = W.shape[0]
        if W.shape != (H, H) or U.shape[0] != H or b.shape != (H,) or H == 0 or U.shape[1] == 0:
            raise ValueError(f"Invalid weights: W {tuple(W.shape)}, U {tuple(U.shape)}, b {tuple(b.shape)} "
                             "(must be (H, H), (H, n_in), (H,))")
        if float(torch.linalg.matrix_norm(W.double(), ord=2)) == 0.0:
            raise ValueError("Invalid W: zero matrix (cannot be rescaled to ‖W̄‖₂ = γ)")
        n_classes = 10 if head is None else int(finite_tensor("head weight", head[0], ndim=2).shape[0])
        m = cls(U.shape[1], H, max(n_classes, 2), gamma, device=W.device)
        with torch.no_grad():
            m.W.copy_(W)
            m.U.copy_(U)
            m.b.copy_(b)
            if head is not None:
                hw, hb = finite_tensor("head weight", head[0], ndim=2), finite_tensor("head bias", head[1], ndim=1)
                if hw.shape != (n_classes, H) or hb.shape != (n_classes,):
                    raise ValueError(f"Invalid head: shapes {tuple(hw.shape)}, {tuple(hb.shape)} "
                                     "(must be (C, H), (C,))")
                m.head.weight.copy_(hw)
                m.head.bias.copy_(hb)
        return m

    @property
    def hidden(self) -> int:
        return self.W.shape[0]

    @property
    def n_in(self) -> int:
        return self.U.shape[1]

    def W_bar(self) -> torch.Tensor:
        """``W̄ = γ W/‖W‖₂`` (spectral norm exactly γ)."""
        return self.gamma * self.W / torch.linalg.matrix_norm(self.W, ord=2)

    def gate(self, x: torch.Tensor) -> torch.Tensor | None:
        """The input gate ``s(x) = s_min + (1 − s_min)·σ(Gx + c) ∈ [s_min, 1]^H`` of a gated teacher
        (:func:`hard_teacher`), ``None`` for an ungated one. The layer is ``f(z, x) = s(x) ⊙ W̄z + u(x)``:
        ``‖diag(s)W̄‖₂ ≤ γ``, still affine in ``z``, but ``z* = (I − diag(s(x))W̄)⁻¹u(x)`` is no fixed linear map of
        ``u(x) = f(0, x)``."""
        if self.gate_params is None:
            return None
        G, c, s_min = self.gate_params
        return s_min + (1.0 - s_min) * torch.sigmoid(x @ G.T + c)

    def step_fn(self, x: torch.Tensor):
        """The layer at fixed ``x`` as a function of ``z`` (``u(x)`` and the gate computed once): ``z ↦ f(z, x)``."""
        Wt, u, s = self.W_bar().T, self.injection(x), self.gate(x)
        if s is None:
            return lambda z: z @ Wt + u
        return lambda z: (z @ Wt) * s + u

    def injection(self, x: torch.Tensor) -> torch.Tensor:
        """``u(x) = tanh(Ux + b)``."""
        return torch.tanh(x @ self.U.T + self.b)

    def _x(self, x: Any) -> torch.Tensor:
        x = finite_tensor("x", x, ndim=2)
        if x.shape[1] != self.n_in:
            raise ValueError(f"Invalid x: shape {tuple(x.shape)} (must be (batch, {self.n_in}))")
        return x.to(self.W.device, self.W.dtype)

    def _z(self, z: Any, x: torch.Tensor, name: str = "z") -> torch.Tensor:
        z = finite_tensor(name, z, ndim=2)
        if z.shape != (x.shape[0], self.hidden):
            raise ValueError(f"Invalid {name}: shape {tuple(z.shape)} (must be ({x.shape[0]}, {self.hidden}))")
        return z.to(self.W.device, self.W.dtype)

    def layer(self, z: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        """One call of the DEQ layer (1 NFE): ``f(z, x) = W̄ z + tanh(Ux + b)`` (rows are samples)."""
        x = self._x(x)
        return self.step_fn(x)(self._z(z, x))

    def fixed_point(self, x: torch.Tensor) -> torch.Tensor:
        """The exact equilibrium ``z* = (I − W̄)⁻¹ tanh(Ux + b)`` by one linear solve (differentiable); for a gated
        teacher one solve per input, ``(I − diag(s(x))W̄) z* = u(x)``."""
        x = self._x(x)
        eye = torch.eye(self.hidden, dtype=self.W.dtype, device=self.W.device)
        s = self.gate(x)
        if s is None:
            return torch.linalg.solve(eye - self.W_bar(), self.injection(x).T).T
        memory_guard(8.0 * x.shape[0] * self.hidden**2 * 2, lower="the batch")
        A = eye - s[:, :, None] * self.W_bar()[None]
        return torch.linalg.solve(A, self.injection(x)[:, :, None])[:, :, 0]

    def picard(self, x: torch.Tensor, nfe: int, z0: torch.Tensor | None = None) -> torch.Tensor:
        """``nfe`` Picard steps ``z_{k+1} = f(z_k, x)`` from ``z0`` (default 0): ``z_nfe``."""
        x = self._x(x)
        nfe = integer("nfe", nfe, 0, _MAX_NFE)
        z = torch.zeros(x.shape[0], self.hidden, dtype=x.dtype, device=x.device) if z0 is None else self._z(z0, x, "z0")
        f = self.step_fn(x)
        for _ in range(nfe):
            z = f(z)
        return z

    def picard_states(self, x: torch.Tensor, ks: Sequence[int] = KS) -> torch.Tensor:
        """The Picard states ``z_k`` (from ``z₀ = 0``) at the increasing indices ``ks``: shape (len(ks), batch, H)."""
        x = self._x(x)
        ks = _ks(ks)
        memory_guard(8.0 * len(ks) * x.shape[0] * self.hidden, lower="ks or the batch")
        z = torch.zeros(x.shape[0], self.hidden, dtype=x.dtype, device=x.device)
        f = self.step_fn(x)
        out, k = [], 0
        for kk in ks:
            for _ in range(kk - k):
                z = f(z)
            k = kk
            out.append(z)
        return torch.stack(out)

    def logits(self, z: torch.Tensor) -> torch.Tensor:
        """The linear head on a state ``z``."""
        return self.head(z)


def _ks(ks: Any) -> tuple[int, ...]:
    if isinstance(ks, (str, bytes)) or not hasattr(ks, "__len__") or len(ks) < 2 or len(ks) > 1000:
        raise TypeError(f"Invalid ks: {ks!r} (must be a sequence of 2–1000 increasing integers ≥ 0)")
    out = tuple(integer("ks", k, 0, 100_000) for k in ks)
    if any(b <= a for a, b in zip(out, out[1:], strict=False)):
        raise ValueError(f"Invalid ks: {out} (must be strictly increasing)")
    return out


def _teacher(teacher: Any) -> LinearDEQ:
    if not isinstance(teacher, LinearDEQ):
        raise TypeError(f"Invalid teacher: {type(teacher).__name__} (must be a LinearDEQ)")
    return teacher


def hard_teacher(teacher: LinearDEQ, gain: float = 8.0, *, gate_scale: float = 0.0, s_min: float = 0.5,
                 seed: int = 0) -> LinearDEQ:
    """The hard teacher: ``teacher``'s ``W̄`` (same γ), its ``U`` and ``b`` times ``gain``, a random linear head
    (standard normal, seeded, zero bias) and, for ``gate_scale > 0``, the input gate of :meth:`LinearDEQ.gate` with
    ``G = gate_scale·N(0, 1/n_in)`` entries and ``c = −G x̄`` (``x̄ = 0.3``, about the mean pixel), so the gate is
    centred on ``(1 + s_min)/2``. Its labels are its own predictions (:func:`teacher_labels`)."""
    teacher = _teacher(teacher)
    gain = number("gain", gain, 0.0, 1e4, low_open=True)
    gate_scale = number("gate_scale", gate_scale, 0.0, 1e4)
    s_min = number("s_min", s_min, 0.0, 1.0, high_open=True)
    seed = integer("seed", seed, 0)
    g = torch.Generator().manual_seed(seed)
    C = teacher.head.weight.shape[0]
    dev = teacher.W.device
    hw = torch.randn(C, teacher.hidden, generator=g, dtype=torch.float64).to(dev)
    with torch.no_grad():
        m = LinearDEQ.from_weights(teacher.W.detach().clone(), gain * teacher.U.detach(), gain * teacher.b.detach(),
                                   gamma=teacher.gamma, head=(hw, torch.zeros_like(hw[:, 0]))).requires_grad_(False)
        if gate_scale > 0:
            G = (gate_scale * torch.randn(teacher.hidden, teacher.n_in, generator=g, dtype=torch.float64)
                 / math.sqrt(teacher.n_in)).to(dev)
            m.gate_params = (G, -0.3 * G.sum(1), float(s_min))
    return m


def teacher_labels(teacher: LinearDEQ, split: Split) -> Split:
    """``split`` with its labels replaced by the teacher's predictions ``argmax head(z*)`` (the task a student of
    this teacher is scored on)."""
    teacher = _teacher(teacher)
    split = _check_split(split)
    with torch.no_grad():
        ytr = teacher.logits(teacher.fixed_point(split.x_train)).argmax(-1)
        yte = teacher.logits(teacher.fixed_point(split.x_test)).argmax(-1)
    return Split(split.x_train, ytr, split.x_test, yte)

# ---------------------------------------------------------------------------------------------------- time grids
def karras_times(n_points: int = 38, T: float = 5.0, eps: float = 0.002, rho: float = 7.0) -> torch.Tensor:
    """The paper code's grid [paper, code]: ``t_j = (ε^{1/ρ} + j/(N−1)(T^{1/ρ} − ε^{1/ρ}))^ρ``, j = 0..N−1 (float64,
    increasing from ε to T)."""
    n_points = integer("n_points", n_points, 2, 1_000_000)
    T = number("T", T, 0.0, math.inf, low_open=True)
    eps = number("eps", eps, 0.0, T, low_open=True, high_open=True)
    rho = number("rho", rho, 0.0, 1e3, low_open=True)
    j = torch.arange(n_points, dtype=torch.float64) / (n_points - 1)
    lo, hi = eps ** (1 / rho), T ** (1 / rho)
    t = (lo + j * (hi - lo)).log().mul(rho).exp()  # x^ρ in log space: no overflow for large ρ
    t[0], t[-1] = eps, T
    return t


def trajectory_times(ks: Sequence[int] = KS, *, T: float = 1.0, eps: float = 1e-3) -> torch.Tensor:
    """The chapter's grid [reconstruction]: ``t_k = max(ε, T(1 − ln(1+k)/ln(1+k_max)))`` — from T at ``k = 0``
    down to ε at the last (equilibrium-end) state."""
    ks = _ks(ks)
    T = number("T", T, 0.0, math.inf, low_open=True)
    eps = number("eps", eps, 0.0, T, low_open=True, high_open=True)
    k = torch.tensor(ks, dtype=torch.float64)
    return torch.clamp(T * (1.0 - torch.log1p(k) / math.log1p(ks[-1])), min=eps)


def skip_out(t: Any, *, T: float = 1.0, eps: float = 1e-3, convention: str = "equilibrium"
             ) -> tuple[torch.Tensor, torch.Tensor]:
    """``(c_skip(t), c_out(t))``, elementwise on a float or tensor ``t ∈ [ε, T]``.

    ``"paper"`` [paper, code]: ``c_skip = (T − t)/(T − ε)``, ``c_out = (t − ε)/(T − ε)``.
    ``"equilibrium"`` (the chapter's) [reconstruction]: ``c_skip = min(1, (ε/t)²)``, ``c_out = 1 − c_skip``.
    Both give ``F(z, ε) = z``; in the paper-era code ε is the *start* of the trajectory, here the equilibrium end.
    """
    one_of("convention", convention, ("paper", "equilibrium"))
    T = number("T", T, 0.0, math.inf, low_open=True)
    eps = number("eps", eps, 0.0, T, low_open=True, high_open=True)
    if isinstance(t, torch.Tensor):
        tt = finite_tensor("t", t)
    else:
        tt = torch.as_tensor(number("t", t), dtype=torch.float64)
    lo, hi = float(tt.min()), float(tt.max())
    if tt.numel() == 0 or lo < eps * (1 - 1e-12) or hi > T * (1 + 1e-12):
        raise ValueError(f"Invalid t: range [{lo:g}, {hi:g}] (must be in [{eps:g}, {T:g}])")
    return skip_out_value(tt, T, eps, convention)


class ConsistencyStudent(nn.Module):
    """``F_φ(z, t, x) = c_skip z + c_out [f_φ(z, x) + g_φ([z, f_φ(z, x), t, x])]`` with ``c_skip = min(1, (ε/t)²)``.

    ``f_φ`` is a frozen copy of the teacher's layer (float32 buffers; the paper's student trains its copy, initialised
    from the teacher's weights), ``g_φ`` an MLP ``(2H + 1 + n_in) → width → width → H`` with SiLU, float32.
    The teacher is kept (frozen, not a
    submodule) for the "refine" mode of :func:`cdeq_infer`."""

    def __init__(self, teacher: LinearDEQ, *, width: int = 256, T: float = 1.0, eps: float = 1e-3,
                 ks: Sequence[int] = KS) -> None:
        super().__init__()
        teacher = _teacher(teacher)
        width = integer("width", width, 1, 4096)
        self.T = number("T", T, 0.0, 1e6, low_open=True)
        self.eps = number("eps", eps, 0.0, self.T, low_open=True, high_open=True)
        self.ks = _ks(ks)
        self.times = trajectory_times(self.ks, T=self.T, eps=self.eps)
        self._teacher = (teacher,)
        dev = teacher.W.device
        with torch.no_grad():  # f_φ: the teacher's layer, frozen (float32 buffers)
            self.register_buffer("Wt", teacher.W_bar().T.float().contiguous())
            self.register_buffer("U", teacher.U.float())
            self.register_buffer("b", teacher.b.float())
            gp = teacher.gate_params
            self.register_buffer("G", None if gp is None else gp[0].float())
            self.register_buffer("c", None if gp is None else gp[1].float())
            self.s_min = 0.0 if gp is None else float(gp[2])
        H, n = teacher.hidden, teacher.n_in
        g = torch.Generator().manual_seed(0)
        self.g_phi = nn.Sequential(nn.Linear(2 * H + 1 + n, width), nn.SiLU(), nn.Linear(width, width), nn.SiLU(),
                                   nn.Linear(width, H)).to(dev)
        with torch.no_grad():  # seeded init independent of the global RNG
            for m in self.g_phi:
                if isinstance(m, nn.Linear):
                    bound = 1.0 / math.sqrt(m.in_features)
                    m.weight.copy_((torch.rand(m.weight.shape, generator=g) * 2 - 1).mul(bound).to(dev))
                    m.bias.zero_()

    @property
    def teacher(self) -> LinearDEQ:
        return self._teacher[0]

    def __deepcopy__(self, memo: dict) -> ConsistencyStudent:
        memo[id(self._teacher)] = self._teacher  # share the frozen teacher between a student and its EMA copy
        cls = self.__class__
        new = cls.__new__(cls)
        memo[id(self)] = new
        for k, v in self.__dict__.items():
            setattr(new, k, copy.deepcopy(v, memo))
        return new

    def f_phi(self, z: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        """The student's layer ``f_φ(z, x) = s(x) ⊙ W̄ z + tanh(Ux + b)`` (float32; frozen copy of the teacher's,
        ``s ≡ 1`` for an ungated teacher)."""
        Wz = z @ self.Wt
        if self.G is not None:
            Wz = Wz * (self.s_min + (1.0 - self.s_min) * torch.sigmoid(x @ self.G.T + self.c))
        return Wz + torch.tanh(x @ self.U.T + self.b)

    def forward(self, z: torch.Tensor, t: float | torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        """``F_φ(z, t, x)`` (1 NFE of ``f_φ``); ``t`` a float or a (batch,) tensor in ``[ε, T]``; float32 output."""
        dev = self.Wt.device
        x = x.to(dev, torch.float32)
        z = z.to(dev, torch.float32)
        if not isinstance(t, torch.Tensor):
            t = torch.full((x.shape[0],), float(t), dtype=torch.float32, device=dev)
        t = t.to(dev, torch.float32).reshape(-1, 1).expand(x.shape[0], 1)
        c_skip = torch.clamp((self.eps / t) ** 2, max=1.0)
        fz = self.f_phi(z, x)
        corr = fz + self.g_phi(torch.cat([z, fz, t, x], dim=1))
        return c_skip * z + (1 - c_skip) * corr


def _student(student: Any) -> ConsistencyStudent:
    if not isinstance(student, ConsistencyStudent):
        raise TypeError(f"Invalid student: {type(student).__name__} (must be a ConsistencyStudent)")
    return student


class ExplicitStudent(nn.Module):
    """Explicit distillation baseline: an MLP ``n_in → width → width → H`` (``act``: SiLU, or tanh — the teacher's
    own nonlinearity) regressing ``z*`` from ``x`` alone (0 calls of ``f``); float32."""

    def __init__(self, n_in: int, hidden: int, width: int = 256, *, seed: int = 0, act: str = "silu",
                 device: str | torch.device | None = None) -> None:
        super().__init__()
        n_in, hidden = integer("n_in", n_in, 1, 4096), integer("hidden", hidden, 1, 4096)
        width, seed = integer("width", width, 1, 4096), integer("seed", seed, 0)
        A = {"silu": nn.SiLU, "tanh": nn.Tanh}[one_of("act", act, ("silu", "tanh"))]
        torch.manual_seed(seed)
        self.net = nn.Sequential(nn.Linear(n_in, width), A(), nn.Linear(width, width), A(),
                                 nn.Linear(width, hidden)).to(resolve_device(device))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x.to(self.net[0].weight.device, torch.float32))

