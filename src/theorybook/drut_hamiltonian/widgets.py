"""The chapter's control panel: the coefficients (ω, K, g), the Fock cutoff N, the twirl's phase count M, the RPE
depth J, the shots at the finest level, the readout flip rate δ and the ancilla phase offset ε → the heat map
``|⟨n|H_eff|m⟩|`` at the outermost design point, RMSE vs total time (RPE, Ramsey, CRB) and the recovered
coefficients. One mode, degree-4 design (27 points), 8 replicates per update (≈ 0.1 s of compute).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import torch

from ..device import one_thread, to_numpy
from ..plotting import COLORS, figure, label_axes, theory_line
from ..validate import integer, number
from ..widgets import live_panel
from .dynamics import displaced_twirled, vacuum_signal
from .estimation import crb, design, ramsey, rpe, rpe_schedule, true_vector
from .experiment import LAM, chapter_coeffs

__all__ = ["Summary", "summarize", "render", "explorer"]


class Summary(NamedTuple):
    """Heat map ``|H_eff|`` at one β, the depths ``Js``, total times ``T``, RMSEs (RPE, Ramsey), CRBs, the recovered
    coefficients ``g_hat`` (mean over replicates) and the status line ``label``."""

    heat: np.ndarray
    Js: np.ndarray
    T: np.ndarray
    rmse_rpe: np.ndarray
    rmse_ramsey: np.ndarray
    crb: np.ndarray
    g_hat: dict
    leakage: float
    label: str


def summarize(omega: float = 1.0, kerr: float = 0.2, g_re: float = 0.3, g_im: float = 0.1, n_fock: int = 30,
              n_phases: int = 0, J: int = 10, shots: int = 16, flip: float = 0.0, offset: float = 0.0,
              reps: int = 8) -> Summary:
    """Simulate one setting (``n_phases = 0``: the exact twirl; 1: no twirl); RPE with ``S_j = shots + (shots/2)(J −
    j)`` at depths 2..J and Ramsey at equal time, seed 0."""
    omega = number("omega", omega, -3.0, 3.0)
    kerr = number("kerr", kerr, -1.0, 1.0)
    g_re = number("g_re", g_re, -1.0, 1.0)
    g_im = number("g_im", g_im, -1.0, 1.0)
    n_fock = integer("n_fock", n_fock, 12, 48)
    n_phases = integer("n_phases", n_phases, 0, 64)
    J = integer("J", J, 3, 14)
    shots = integer("shots", shots, 2, 512)
    flip = number("flip", flip, 0.0, 0.5, high_open=True)
    offset = number("offset", offset, -math.pi, math.pi)
    reps = integer("reps", reps, 2, 64)
    cf = chapter_coeffs(omega, kerr, complex(g_re, g_im), LAM)
    with one_thread():
        d = design(4, device="cpu")
        H = displaced_twirled(cf, d.beta, n_fock=n_fock, n_phases=None if n_phases == 0 else n_phases, device="cpu")
        C = d.K @ true_vector(cf, d)
        C = C.real
        sig = vacuum_signal(H, [2.0**j for j in range(J + 1)]).movedim(-1, 0)
        leak = float(torch.linalg.vector_norm(H[:, 1:, 0], dim=-1).max())
        Js = np.arange(2, J + 1)
        T, rr, rm, cb = [], [], [], []
        est = None
        for i, j in enumerate(Js):
            S = rpe_schedule(int(j), shots, max(1, shots // 2))
            res = rpe(C, int(j), S, flip=flip, offset=offset, seed=2 * i, reps=reps, signal=sig[: j + 1],
                      device="cpu")
            ram = ramsey(C, res.time, flip=flip, offset=offset, seed=2 * i + 1, reps=reps, device="cpu")
            T.append(res.time)
            rr.append(float(((res.estimate - C) ** 2).mean().sqrt()))
            rm.append(float(((ram - C) ** 2).mean().sqrt()))
            cb.append(crb(S, int(j)))
            est = res.estimate
        gh = to_numpy((est.to(torch.complex128) @ torch.linalg.pinv(d.K).mT).mean(0))
    keys = {(1, 1): "ω", (2, 2): "K/2", (1, 0): "g", (0, 2): "λ"}
    g_hat = {name: complex(gh[d.keys.index(k)]) for k, name in keys.items()}
    heat = to_numpy(H[len(d.radii) * len(d.angles) - len(d.angles)].abs())
    label = ("recovered ω = {:.4f}, K/2 = {:.4f}, g = {:.4f}{:+.4f}i, λ = {:.4f}{:+.4f}i · RPE RMSE_C at J = {} "
             "{:.2e} (CRB {:.2e}), Ramsey {:.2e} · vacuum leakage {:.2e}").format(
        g_hat["ω"].real, g_hat["K/2"].real, g_hat["g"].real, g_hat["g"].imag, g_hat["λ"].real, g_hat["λ"].imag, J,
        rr[-1], cb[-1], rm[-1], leak)
    return Summary(heat, Js, np.array(T), np.array(rr), np.array(rm), np.array(cb), g_hat, leak, label)


def render(omega: float = 1.0, kerr: float = 0.2, g_re: float = 0.3, g_im: float = 0.1, n_fock: int = 30,
           n_phases: int = 0, J: int = 10, shots: int = 16, flip: float = 0.0, offset: float = 0.0, reps: int = 8):
    """Draw the panel's figure for one setting; returns ``(fig, summary)``."""
    s = summarize(omega, kerr, g_re, g_im, n_fock, n_phases, J, shots, flip, offset, reps)
    fig, (ax, ax2) = figure(2, width=4.3, height=3.4)
    im = ax.imshow(np.log10(np.maximum(s.heat, 1e-16)), vmin=-16, vmax=2, cmap="magma")
    ax.grid(False)
    fig.colorbar(im, ax=ax, label="log₁₀ |⟨n|H_eff|m⟩|")
    tw = "exact twirl" if n_phases == 0 else ("no twirl" if n_phases == 1 else f"M = {n_phases} phases")
    label_axes(ax, "m", "n", f"H_eff at |β| = 0.62, {tw}", legend=False)
    ax2.loglog(s.T, s.rmse_rpe, "o-", color=COLORS[0], ms=4, label="RPE")
    ax2.loglog(s.T, s.rmse_ramsey, "s-", color=COLORS[1], ms=4, label="Ramsey (t = 1)")
    theory_line(ax2, s.T, s.crb, label="CRB of the RPE schedule")
    ax2.loglog(s.T, 1 / np.sqrt(s.T), ls=":", color="gray", label="1/√T")
    label_axes(ax2, "total time T per design point", "RMSE of C", f"δ = {flip:g}, ε = {offset:g}")
    return fig, s


def explorer():
    """The panel: coefficients, N, M, J, shots, δ, ε → heat map, RMSE vs T, recovered g."""
    import ipywidgets as w

    st = {"description_width": "initial"}
    controls = {
        "omega": w.FloatSlider(value=1.0, min=0.0, max=2.0, step=0.05, description="ω", style=st),
        "kerr": w.FloatSlider(value=0.2, min=0.0, max=0.5, step=0.01, description="K (Kerr)", style=st),
        "g_re": w.FloatSlider(value=0.3, min=-0.5, max=0.5, step=0.01, description="Re g", style=st),
        "g_im": w.FloatSlider(value=0.1, min=-0.5, max=0.5, step=0.01, description="Im g", style=st),
        "n_fock": w.IntSlider(value=30, min=12, max=40, step=1, description="N (Fock)", style=st),
        "n_phases": w.IntSlider(value=0, min=0, max=40, step=1, description="M phases (0 = exact)", style=st),
        "J": w.IntSlider(value=10, min=3, max=12, step=1, description="J (RPE depth)", style=st),
        "shots": w.IntSlider(value=16, min=2, max=128, step=2, description="shots S_J", style=st),
        "flip": w.FloatSlider(value=0.0, min=0.0, max=0.45, step=0.01, description="flip δ", style=st),
        "offset": w.FloatSlider(value=0.0, min=-0.5, max=0.5, step=0.01, description="offset ε", style=st),
    }
    return live_panel(controls, render, rows=[["omega", "kerr", "g_re", "g_im"], ["n_fock", "n_phases", "J"],
                                              ["shots", "flip", "offset"]])
