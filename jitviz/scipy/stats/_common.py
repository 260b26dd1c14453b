"""What the distributions share: JAX's promotion of their arguments to one inexact dtype,
the standardized variable, and typed constants."""
from __future__ import annotations

import numpy as np

from ... import lax
from ... import numpy as jnp


def inexact(*args):
    """The arguments promoted together to an inexact dtype (integers and bools to the default
    float), as `jax.scipy.stats` does."""
    from ...numpy._core import promote
    return promote(*args, inexact=True)


def const(like, value):
    """`value` in the dtype of `like`."""
    return np.asarray(value, lax.aval_of(like).dtype)


def where_outside(condition, value, result):
    """`result`, with `value` (a Python number) where `condition` holds."""
    return jnp.where(condition, jnp.full_like(result, value), result)
