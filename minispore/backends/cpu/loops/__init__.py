"""What the CPU backend's loop-nest op families compute, each written once.

A family module (rows.py: softmax, log_softmax, logsumexp, the sparse cross-entropy pair) holds
`Definition`s: Python functions written against the loop-builder protocol of builder.py
(input/output/scratch buffers, counted loops whose extent is a buffer's dimension, loads and
stores, scalar_expr expressions, scalar variables). Tracing a definition gives a small statement
tree with no numba or llvmlite in it; the renderers of `minispore.backends.cpu.render` turn that
tree into an eager numba kernel (runtime extents, one kernel for every shape) and into the LLVM IR
of the native sink (static extents), so PyNative and jit_level O2 run the same algorithm, and the
same floating-point operations in the same order, by construction.
"""
