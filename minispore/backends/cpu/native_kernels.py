"""Eager CPU kernels that are the native sink's own lowering of a one-node graph.

For the ops in `NATIVE_EAGER_OPS` the eager kernel of a (shapes, dtypes, attributes) signature
is the O2 program of the graph holding just that op: PyNative, O0, O1 and O2 run one algorithm
(the same accumulation order and precision), as JAX's eager dispatch compiles a primitive through
the lowering `jit` uses. These are the reductions and norms, whose numpy kernels accumulated in
another order than the native loops (numpy's pairwise float64 sum, its float32 product, the
numpy reference of the norms: PyNative and O2 differed in the last bits), and the convolutions
(im2col + BLAS written twice, for numba and in LLVM IR: now the lowering serves both; a small
conv pays ~5-15 us more per eager call, a large one nothing, a new shape one compile).

A signature the native sink declines (a half-precision prod, no native target on this
machine) keeps the numpy kernel the factory falls back to. An op that has a native lowering and
no eager kernel registered at all runs its lowering the same way (CPUBackend.compiled_kernel):
on the CPU a new opaque op is written once, as a lowering. The compiled program is cached with
the backend's other kernel plans (per signature in memory; its object file on disk,
native_jit.py), so a new shape costs one LLVM compile, a warm process none.
"""
from __future__ import annotations

from ...core.graph import ir
from ...core.primitive import REGISTRY, normalize_attrs

NATIVE_EAGER_OPS = ("sum", "mean", "prod", "batch_norm", "layer_norm", "conv2d", "conv2d_backprop_input", "conv2d_backprop_filter")


def one_node_graph(name: str, in_metas, attrs: dict, out_metas) -> ir.Graph:
    """The graph `outputs = name(inputs; attrs)` over fresh values of the given metas."""
    op = REGISTRY[name]
    inputs = [ir.Value(tuple(m.shape), m.dtype) for m in in_metas]
    outputs = [ir.Value(tuple(m.shape), m.dtype) for m in out_metas]
    node = ir.Node(op, inputs, normalize_attrs(op, attrs), outputs)
    return ir.Graph(f"eager_{name}", inputs=inputs, nodes=[node], outputs=outputs)


def has_lowering(name: str) -> bool:
    """Whether the native sink has a lowering for op `name` (imports the lowering families)."""
    from .native_graph import LOWER
    return name in LOWER


def native_factory(name: str, fallback):
    """A kernel factory: the native program of the one-node graph, or `fallback`'s kernel
    where the native sink cannot lower this signature (None without a fallback)."""
    def factory(in_metas, attrs, out_meta):
        from .native_jit import NativeUnavailable, native_sink_enabled
        if native_sink_enabled():      # MINISPORE_NATIVE_SINK=0: no native programs
            from .native_sink import NativeProgram, NativeUnsupported
            several = not hasattr(out_meta, "shape")      # a tuple of Metas
            outs = tuple(out_meta) if several else (out_meta,)
            try:
                program = NativeProgram(one_node_graph(name, in_metas, attrs, outs))
            except (NativeUnsupported, NativeUnavailable):
                program = None
            if program is not None:
                run_program = program.run
                if several:
                    return lambda *bufs: tuple(run_program(list(bufs))[0])
                return lambda *bufs: run_program(list(bufs))[0][0]
        return None if fallback is None else fallback(in_metas, attrs, out_meta)
    factory.native = True
    return factory


def register(backend) -> None:
    """Wrap the registered kernel factories of NATIVE_EAGER_OPS (kernels.register_all calls this
    last, so the numpy kernels they fall back to are registered already)."""
    for name in NATIVE_EAGER_OPS:
        backend.register(name)(native_factory(name, backend._kernels[name]))
