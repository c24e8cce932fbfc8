"""A planar 4-joint tendon-driven finger in MuJoCo (our own MJCF, written for this chapter; no MyoSuite assets).

Four hinge joints about the y axis move four capsule links in the x–z plane. Sixteen spatial tendons run through
sites on both sides of the links: mono-articular (span one joint), bi-articular and multi-articular, each on the
flexor (−z) and extensor (+z) side. Sites sit off the joint axes, so the moment arms ``∂ℓ/∂q`` change with the
posture ``q``. Each tendon is driven by a ``general`` actuator with gain ``−F_max`` (it pulls), ``ctrlrange``
``[0, 1]``, no activation dynamics; Euler integration, joint damping ``D`` and stiffness ``K``, no contacts, no
gravity. MuJoCo's Euler step treats damping implicitly, so the next joint velocity is exactly control-affine:

    y′ = qvel_{t+1} = f(s) + G(s) a,   G(s) = h (M(q) + hD)⁻¹ J_ten(q)ᵀ diag(−F_max),

with ``M`` the joint-space inertia (``mj_fullM``, armature included) and ``J_ten`` the tendon Jacobian
(``ten_J``). :class:`TendonFinger` adds Gaussian noise ``σ ε`` to ``y′`` (the paper's ``Q = σ² I``).
"""

from __future__ import annotations

from typing import NamedTuple

import mujoco
import numpy as np
import torch

from ..device import resolve_device
from ..validate import finite_tensor, integer, memory_guard, number

__all__ = ["TendonFinger", "Play", "finger_xml", "TENDONS"]

N_JOINTS = 4
LINKS = (0.050, 0.040, 0.030, 0.025)  # link lengths (m)
#: (origin body, insertion body) of the eight tendon routes; body 0 is the base, link j is body j (spans joints
#: origin+1..insertion). Each route exists on the flexor and the extensor side: 16 tendons.
ROUTES = ((0, 1), (1, 2), (2, 3), (3, 4), (0, 2), (2, 4), (0, 3), (1, 4))
TENDONS = tuple(f"{'flex' if side < 0 else 'ext'}_{i}{j}" for side in (-1, 1) for (i, j) in ROUTES)
F_MAX = np.array([6.0, 5.0, 4.0, 3.0, 5.0, 3.5, 4.5, 4.0] * 2)  # N, per tendon
TIMESTEP = 0.002
DAMPING = 0.004  # N·m·s/rad
STIFFNESS = 0.06  # N·m/rad
ARMATURE = 2e-6  # kg·m²


def _offset(side: int, i: int, j: int) -> float:
    """Distance of a tendon's sites from the link axis: flexors deeper than extensors, long tendons deeper."""
    base = 0.0075 if side < 0 else 0.0055
    return side * base * (1.0 + 0.12 * (j - i - 1) + 0.05 * i)


def finger_xml() -> str:
    """The MJCF string of the finger (generated, so the 16 routes and their sites stay consistent)."""
    sites: dict[int, list[str]] = {b: [] for b in range(N_JOINTS + 1)}
    tendons, actuators = [], []
    t = 0
    for side in (-1, 1):
        for (i, j) in ROUTES:
            r = _offset(side, i, j)
            path = []
            name = TENDONS[t]
            # origin: behind joint 1 on the base, or near the distal end of link i
            x0 = -0.008 if i == 0 else LINKS[i - 1] - 0.006
            sites[i].append(f'<site name="{name}_o" pos="{x0:.4f} 0 {r:.5f}" size="0.001"/>')
            path.append(f"{name}_o")
            for b in range(i + 1, j):  # guides through intermediate links
                for tag, x in (("p", 0.006), ("d", LINKS[b - 1] - 0.006)):
                    sites[b].append(f'<site name="{name}_{b}{tag}" pos="{x:.4f} 0 {r:.5f}" size="0.001"/>')
                    path.append(f"{name}_{b}{tag}")
            sites[j].append(f'<site name="{name}_i" pos="0.0080 0 {r:.5f}" size="0.001"/>')
            path.append(f"{name}_i")
            tendons.append(f'<spatial name="{name}" width="0.0005">'
                           + "".join(f'<site site="{s}"/>' for s in path) + "</spatial>")
            actuators.append(f'<general name="a_{name}" tendon="{name}" gainprm="{-F_MAX[t]:.3f}" biastype="none" '
                             'ctrllimited="true" ctrlrange="0 1" dyntype="none"/>')
            t += 1

    def body(b: int) -> str:
        if b > N_JOINTS:
            return ""
        pos = "0 0 0" if b == 1 else f"{LINKS[b - 2]:.4f} 0 0"
        return (f'<body name="link{b}" pos="{pos}">'
                f'<joint name="j{b}" type="hinge" axis="0 1 0" damping="{DAMPING}" stiffness="{STIFFNESS}" '
                f'armature="{ARMATURE}"/>'
                f'<geom type="capsule" fromto="0 0 0 {LINKS[b - 1]:.4f} 0 0" size="0.007" density="1100"/>'
                + "".join(sites[b]) + body(b + 1) + "</body>")

    return ('<mujoco model="tendon_finger">'
            f'<option timestep="{TIMESTEP}" integrator="Euler" gravity="0 0 0"><flag contact="disable"/></option>'
            '<worldbody><body name="base">' + "".join(sites[0]) + body(1) + "</body></worldbody>"
            "<tendon>" + "".join(tendons) + "</tendon><actuator>" + "".join(actuators) + "</actuator></mujoco>")


class Play(NamedTuple):
    """Random-play transitions: states ``(qpos, qvel)``, activations ``act`` and next velocities ``y_next``
    (noisy), as float64 tensors on one device."""

    qpos: torch.Tensor
    qvel: torch.Tensor
    act: torch.Tensor
    y_next: torch.Tensor


class TendonFinger:
    """The finger with additive Gaussian noise ``σ`` on the next joint velocity ``y′``.

    ``G(qpos)`` — the analytic control matrix ``h(M + hD)⁻¹J_tenᵀ diag(−F_max)`` (4 × 16, torch float64) at a
    posture with zero velocity; ``step(act, seed)`` — one Euler step from the current state, returns ``y′``;
    ``play(steps, seed)`` — random play: episodes of ``episode`` steps from postures uniform in ``POSTURE_BOX``,
    i.i.d. uniform activations.
    """

    POSTURE_BOX = (-0.3, 0.9)  # rad, per joint, where play episodes start

    def __init__(self, noise: float = 0.5, *, device: str | torch.device | None = None) -> None:
        self.noise = number("noise", noise, 0.0, 1e3)
        self.device = resolve_device(device)
        self.model = mujoco.MjModel.from_xml_string(finger_xml())
        self.data = mujoco.MjData(self.model)
        self.n_joints, self.n_act = self.model.nv, self.model.nu
        self.h = float(self.model.opt.timestep)
        self.f_max = -self.model.actuator_gainprm[:, 0].copy()
        self.damping = self.model.dof_damping.copy()
        self._M = np.zeros((self.model.nv, self.model.nv))

    # -- the channel -------------------------------------------------------------------------------------------
    def _posture(self, qpos) -> np.ndarray:
        q = finite_tensor("qpos", qpos)
        if q.shape != (self.n_joints,):
            raise ValueError(f"Invalid qpos: shape {tuple(q.shape)} (must be ({self.n_joints},))")
        if float(q.abs().max()) > 2 * np.pi:
            raise ValueError(f"Invalid qpos: max |q| = {float(q.abs().max()):g} (must be in [-2π, 2π])")
        return np.asarray(q.detach().to("cpu", torch.float64).tolist(), dtype=np.float64)

    def tendon_jacobian(self) -> np.ndarray:
        """Dense ``J_ten = ∂ℓ/∂q`` (16 × 4) of the current ``data`` (``ten_J`` is stored sparse: CSR by rows)."""
        m, d = self.model, self.data
        J = np.zeros((m.ntendon, m.nv))
        for t in range(m.ntendon):
            adr, nnz = m.ten_J_rowadr[t], m.ten_J_rownnz[t]
            J[t, m.ten_J_colind[adr:adr + nnz]] = d.ten_J[adr:adr + nnz]
        return J

    def G(self, qpos) -> torch.Tensor:
        """``G(s) = h(M(q) + hD)⁻¹ J_ten(q)ᵀ diag(−F_max)`` at posture ``qpos`` (4 × 16)."""
        q = self._posture(qpos)
        m, d = self.model, self.data
        d.qpos[:] = q
        d.qvel[:] = 0.0
        mujoco.mj_forward(m, d)
        mujoco.mj_fullM(m, d, self._M)
        J = self.tendon_jacobian()
        A = self._M + self.h * np.diag(self.damping)
        G = self.h * np.linalg.solve(A, J.T * (-self.f_max)[None, :])
        return torch.as_tensor(G, dtype=torch.float64, device=self.device)

    def G_finite_difference(self, qpos, eps: float = 1e-6) -> torch.Tensor:
        """The rows of ``mjd_transitionFD``'s ``B`` for the next velocity, at ``qpos``, zero velocity, ``a = ½``."""
        q = self._posture(qpos)
        eps = number("eps", eps, 0.0, 0.1, low_open=True)
        m, d = self.model, self.data
        d.qpos[:] = q
        d.qvel[:] = 0.0
        d.ctrl[:] = 0.5
        mujoco.mj_forward(m, d)
        B = np.zeros((2 * m.nv + m.na, m.nu))
        mujoco.mjd_transitionFD(m, d, eps, True, None, B, None, None)
        return torch.as_tensor(B[m.nv:2 * m.nv].copy(), dtype=torch.float64, device=self.device)

    # -- simulation --------------------------------------------------------------------------------------------
    def reset(self, qpos, qvel=None) -> None:
        """Set the state (``qvel`` defaults to zero)."""
        self.data.qpos[:] = self._posture(qpos)
        v = np.zeros(self.n_joints) if qvel is None else np.asarray(
            finite_tensor("qvel", qvel).detach().to("cpu").tolist(), dtype=np.float64)
        if v.shape != (self.n_joints,):
            raise ValueError(f"Invalid qvel: shape {v.shape} (must be ({self.n_joints},))")
        self.data.qvel[:] = v
        mujoco.mj_forward(self.model, self.data)

    def step(self, act, seed: int = 0) -> torch.Tensor:
        """One Euler step with activations ``act`` (16, in [0, 1]); returns the noisy ``y′`` (also the new qvel)."""
        a = finite_tensor("act", act)
        if a.shape != (self.n_act,):
            raise ValueError(f"Invalid act: shape {tuple(a.shape)} (must be ({self.n_act},))")
        if float(a.min()) < 0 or float(a.max()) > 1:
            raise ValueError("Invalid act: values outside [0, 1] (ctrlrange)")
        seed = integer("seed", seed, 0)
        self.data.ctrl[:] = np.asarray(a.detach().to("cpu").tolist(), dtype=np.float64)
        mujoco.mj_step(self.model, self.data)
        if self.noise > 0:
            self.data.qvel[:] += self.noise * np.random.default_rng(seed).standard_normal(self.n_joints)
        return torch.as_tensor(self.data.qvel.copy(), dtype=torch.float64, device=self.device)

    def one_step_batch(self, qpos, qvel, act: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Next velocities from one state for a batch of activations (N × 16, numpy) with fresh noise: N single
        steps, each from the same state (internal; inputs already validated)."""
        m, d = self.model, self.data
        out = np.empty((act.shape[0], self.n_joints))
        for n in range(act.shape[0]):
            d.qpos[:] = qpos
            d.qvel[:] = qvel
            d.ctrl[:] = act[n]
            mujoco.mj_step(m, d)
            out[n] = d.qvel
        return out + self.noise * rng.standard_normal(out.shape)

    def play(self, steps: int = 20_000, seed: int = 0, *, episode: int = 25) -> Play:
        """Random play: episodes of ``episode`` steps from postures uniform in ``POSTURE_BOX`` at rest, with
        i.i.d. ``U[0, 1]`` activations each step (so ``a`` is independent of the state it acts on)."""
        steps = integer("steps", steps, 1, 5_000_000)
        seed = integer("seed", seed, 0)
        episode = integer("episode", episode, 1, 100_000)
        memory_guard(steps * (3 * self.n_joints + self.n_act) * 8 * 2, lower="steps")
        rng = np.random.default_rng(seed)
        m, d = self.model, self.data
        nq, nu = self.n_joints, self.n_act
        qpos, qvel = np.empty((steps, nq)), np.empty((steps, nq))
        act = rng.random((steps, nu))
        y = np.empty((steps, nq))
        noise = self.noise * rng.standard_normal((steps, nq))
        lo, hi = self.POSTURE_BOX
        for t in range(steps):
            if t % episode == 0:
                d.qpos[:] = rng.uniform(lo, hi, nq)
                d.qvel[:] = 0.0
            qpos[t], qvel[t] = d.qpos, d.qvel
            d.ctrl[:] = act[t]
            mujoco.mj_step(m, d)
            d.qvel[:] += noise[t]
            y[t] = d.qvel
        dev = self.device
        return Play(*(torch.as_tensor(x, dtype=torch.float64, device=dev) for x in (qpos, qvel, act, y)))
