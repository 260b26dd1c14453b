"""`jax.example_libraries` for jitviz: `optimizers` and `stax`, JAX's small reference
libraries that many JAX notebooks and tutorials import (`from jax.example_libraries import
optimizers, stax` becomes `from jitviz.example_libraries import optimizers, stax`)."""
from . import optimizers, stax  # noqa: F401
