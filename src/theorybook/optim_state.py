"""State-dict handling shared by the book's optimizers (DASH's Shampoo, POGO)."""

from __future__ import annotations

import torch

__all__ = ["KeepStateDtypes"]


class KeepStateDtypes:
    """Mixin for a ``torch.optim.Optimizer`` whose statistics live in their own dtype (float32 for a 16-bit model).

    torch.optim's ``load_state_dict`` casts every floating-point state tensor to its parameter's dtype; this one
    restores each tensor exactly as saved (moved to the parameter's device), so a resumed run is bit-identical to an
    uninterrupted one."""

    def load_state_dict(self, state_dict: dict) -> None:
        saved = state_dict.get("state", {})
        ids = [pid for g in state_dict.get("param_groups", ()) for pid in g["params"]]
        super().load_state_dict(state_dict)  # type: ignore[misc]
        params = [p for g in self.param_groups for p in g["params"]]  # type: ignore[attr-defined]
        for pid, p in zip(ids, params, strict=False):
            for k, v in saved.get(pid, {}).items():
                if isinstance(v, torch.Tensor):
                    self.state[p][k] = v.to(device=p.device, copy=True)  # type: ignore[attr-defined]
