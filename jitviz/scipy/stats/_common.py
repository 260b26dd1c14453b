"""What the distributions of `jitviz.scipy.stats` share."""
from __future__ import annotations


def inexact(*args):
    """JAX's promote_args_inexact: one inexact dtype for all arguments."""
    from ...numpy._core import promote
    return promote(*args, inexact=True)
