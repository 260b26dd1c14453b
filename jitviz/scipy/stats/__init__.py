"""`jitviz.scipy.stats`, as `jax.scipy.stats` (the normal distribution so far)."""
from __future__ import annotations

from . import norm  # noqa: F401

__all__ = ["norm"]
