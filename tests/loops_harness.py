"""Running one loop-nest Definition (minispore/backends/cpu/loops/) through the LLVM renderer on
its own, for the tests that compare the two renderings of a definition bit for bit: the
definition is emitted alone into `i32 f(i8** bufs)` (inputs, outputs, then the arena), compiled
with the native sink's JIT and called on numpy arrays."""
from __future__ import annotations

import ctypes

import numpy as np
from llvmlite import ir as L

from minispore.backends.cpu import native_jit
from minispore.backends.cpu.native_emit import I8, I32, Emitter
from minispore.backends.cpu.render import llvm as render_llvm
from minispore.core import dtype as dt
from minispore.core.graph import ir


class _NoConstants:
    """The graph an Emitter asks for its constants: a lone definition has none."""

    def all_nodes(self):
        return []


def llvm_call(defn, params: dict, inputs: dict, outputs: dict, scalars=None, sites=None):
    """Render `defn` with `params` over `inputs` (name -> array) and `outputs` (name -> (shape,
    dtype), zero-filled), its scalar arguments bound to `scalars` and its fail_if sites to
    `sites`; returns (return code, the arena's first word (the index-error word), the emitter's
    error sites, the output arrays)."""
    module = L.Module(name=f"loops_{defn.name}")
    module.triple = native_jit.triple()
    fn = L.Function(module, L.FunctionType(I32, [I8.as_pointer().as_pointer()]), "f")
    arrays = {**inputs, **{k: np.zeros(shape, d) for k, (shape, d) in outputs.items()}}
    values = {k: ir.Value(a.shape, dt.to_dtype(a.dtype)) for k, a in arrays.items()}
    slots = {v.id: k for k, v in enumerate(values.values())}
    slots["arena"] = len(values)
    scratch = max(render_llvm.scratch_bytes(defn, params, {k: a.shape for k, a in
                                                           inputs.items()}, scalars), 0)
    error_word = 8 if sites else 0
    e = Emitter(_NoConstants(), module, fn, slots, {"scratch": error_word}, {})
    if sites:
        e.error_offset = 0
    render_llvm.emit(e, defn, params, {k: (values[k], arrays[k].shape) for k in arrays},
                     "scratch", scalars, sites=sites)
    e.finish()
    lib = native_jit.NativeLibrary(str(module))
    arena = np.zeros(max((error_word + scratch + 7) // 8, 1), np.int64)
    ptrs = (ctypes.c_void_p * (len(arrays) + 1))(*[a.ctypes.data for a in arrays.values()],
                                                  arena.ctypes.data)
    call = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.POINTER(ctypes.c_void_p))(lib.address("f"))
    rc = call(ptrs)
    return rc, int(arena[0]), getattr(e, "errors", None), [arrays[k] for k in outputs]


def llvm_run(defn, params: dict, inputs: dict, outputs: dict, scalars=None):
    """The outputs of a rendering that must not fail (llvm_call's return code 0)."""
    rc, _, _, outs = llvm_call(defn, params, inputs, outputs, scalars)
    assert rc == 0, f"{defn.name}: the native function returned {rc}"
    return outs


def same_bits(a, b) -> bool:
    """Equal dtype, shape and bytes (NaN payloads and zero signs included)."""
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
