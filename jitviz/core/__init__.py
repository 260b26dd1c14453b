"""The tracing core: IR, primitives registry, tracer, interpreter, typechecker."""
