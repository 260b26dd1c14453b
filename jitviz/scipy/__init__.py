"""`jitviz.scipy`: the parts of `jax.scipy` composed from `jitviz.numpy` and `jitviz.lax`
(`special`, `stats.norm`)."""
from __future__ import annotations

from . import linalg, special, stats  # noqa: F401

__all__ = ["linalg", "special", "stats"]
