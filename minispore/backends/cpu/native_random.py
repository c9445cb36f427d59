"""The random ops and dropout in the native sink: loops/random.py's definitions (core/ops/random.py's
splitmix64 counter generator; uniform, Box-Muller normal, randint, dropout) rendered by
render/llvm.py, the definitions kernels_random.py renders as the eager numba kernels, so PyNative
and O2 draw the same bits. The node's attributes become the definitions' scalars (the op seed as a
uint64 word, the draw's size, randint's span and low, dropout's keep_prob and scale), its output
dtype their parameter; a half draw is computed in float64 and stored rounded once.
Registered in native_registry.py; dropout with half_as_float32 (the eager kernel computes a half
dropout in float32, as the reference does, and rounds once).
"""
from __future__ import annotations

from ...core import dtype as dt
from ...core.ops.random import _UNIT_BITS
from ...core.shape import size_of
from .loops import random as family
from .native_emit import FLOAT, HALF, INTS, Emitter, NativeUnsupported
from .native_registry import register
from .render.llvm import emit

_MASK64 = 0xFFFFFFFFFFFFFFFF


def _key(n, key):
    if key.dtype is not dt.int64:
        raise NativeUnsupported(f"{n.op.name}: random key of {key.dtype}")
    return key, (2,)


def _random(e: Emitter, n, a: dict):
    out = n.outputs[0]
    name, size = n.op.name, size_of(out.shape)
    scalars = {"seed": a["seed"] & _MASK64, "n": size}
    if name == "random_randint":
        if out.dtype not in INTS:
            raise NativeUnsupported(f"{name} into {out.dtype}")
        defn, params = family.randint, {"dtype": out.dtype.np.name}
        scalars.update(span=a["high"] - a["low"], low=a["low"])
    else:
        if out.dtype not in FLOAT and out.dtype not in HALF:
            raise NativeUnsupported(f"{name} into {out.dtype}")
        params = {"dtype": family.draw_dtype(out.dtype.np.name)}
        if name == "random_uniform":
            defn = family.uniform
            params["nbits"] = _UNIT_BITS[out.dtype.name]
        else:
            defn = family.normal
    emit(e, defn, params, {"key": _key(n, n.inputs[0]), "out": (out, (size,))}, n, scalars)


def _dropout(e: Emitter, n, a: dict):
    x, key = n.inputs
    y, mask = n.outputs
    if x.dtype not in FLOAT:
        raise NativeUnsupported(f"dropout of {x.dtype}")
    size, kp = (size_of(x.shape),), a["keep_prob"]
    scalars = {"seed": a["seed"] & _MASK64, "keep_prob": float(kp),
               "scale": float(x.dtype.np.type(1.0 / kp))}
    emit(e, family.dropout, {"dtype": x.dtype.np.name},
         {"x": (x, size), "key": _key(n, key), "y": (y, size), "mask": (mask, size)}, n,
         scalars)


register(("random_uniform", "random_normal", "random_randint"), _random)
# the reference computes a half dropout in float32 (ref_array_dtype) and rounds once
register("dropout", _dropout, half_as_float32=True)
