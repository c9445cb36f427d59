"""Renderers of the loop nests of `minispore.backends.cpu.loops`: how to run a traced definition,
with no knowledge of any op.

numba_source.py writes the Python source of one shape-generic @njit kernel per definition (its
loop extents are the arrays' shapes, read at run time), compiled and disk-cached like the
generated elementwise kernels (codegen.module_for); llvm.py emits the definition into a native
sink function through native_emit.Emitter with the node's static shapes. Both render the same
statement tree the same way: float64 arithmetic where the definition casts to float64, the
transcendentals of vecmath (numba) and llvm_math (LLVM), numba's `max` (b > a ? b : a) and
numba's store conversion (float64 -> float32 rounds to nearest), so their results agree bit for
bit. Each render is counted on the definition (`Definition.renders`).
"""
