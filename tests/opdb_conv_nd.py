"""Op-database entries (see opdb.py) for the composites of core/ops/conv_nd.py: conv1d, conv3d and
conv3d_backprop_input (the 3-D transposed convolution). Tiny shapes covering stride > 1 on every
axis, dilation (depth included), groups, 'same' with even kernels (the odd padding element at
the end), explicit asymmetric padding, a 1-sized input axis and 1-sized kernels; gradients of
both inputs by float64 finite differences (the composites are differentiated through their
parts: strided slices, reshapes, transposes and the conv2d family)."""
from __future__ import annotations

from minispore.core import dtype as dt
from minispore.core.primitive import REGISTRY, Meta

from helpers import rand_default

f32, f64 = dt.float32, dt.float64

# (x shape, w shape, attrs)
CONV1D_SPECS = [
    ((2, 2, 7), (3, 2, 3), {}),
    ((1, 2, 7), (2, 2, 2), {"stride": 2, "pad_mode": "same"}),                    # even kernel
    ((1, 4, 6), (2, 2, 3), {"dilation": 2, "group": 2, "pad_mode": "pad", "pad": (2, 1)}),
    ((1, 3, 1), (2, 3, 3), {"pad_mode": "same"}),                                 # length 1
    ((2, 2, 5), (4, 1, 1), {"group": 2, "stride": 3}),                            # 1-tap kernel
]
CONV3D_SPECS = [
    ((1, 2, 3, 4, 4), (2, 2, 2, 2, 2), {}),
    ((1, 2, 5, 4, 3), (3, 2, 2, 2, 2), {"stride": (2, 2, 2), "pad_mode": "same"}),
    ((1, 4, 5, 4, 5), (2, 2, 2, 2, 3), {"dilation": (2, 1, 2), "group": 2, "pad_mode": "pad",
                                        "pad": (1, 0, 0, 1, 2, 1)}),
    ((2, 1, 1, 3, 2), (2, 1, 3, 2, 1), {"pad_mode": "same", "stride": (1, 2, 1)}),  # depth 1
    ((1, 2, 4, 3, 3), (2, 1, 1, 1, 1), {"group": 2, "stride": (3, 1, 2)}),         # 1x1x1
]


def _fmt(d):
    return " ".join(f"{k}={v}" for k, v in d.items())


def _out_shape(name, metas, attrs):
    op = REGISTRY[name]
    return op.infer(*metas, **{**op.attrs, **attrs}).shape


def conv_nd_cases(OpCase, Sample):
    def conv_samples(specs):
        def gen(rng, dtype):
            return [Sample((rand_default(rng, xs, dtype), rand_default(rng, ws, dtype)), a,
                           f"x{xs} w{ws} {_fmt(a)}") for xs, ws, a in specs]
        return gen

    def bpi3_samples(rng, dtype):
        out = []
        for xs, ws, a in CONV3D_SPECS:
            ys = _out_shape("conv3d", (Meta(xs, dtype), Meta(ws, dtype)), a)
            out.append(Sample((rand_default(rng, ys, dtype), rand_default(rng, ws, dtype)),
                              {**a, "input_shape": xs}, f"dy{ys} w{ws} x{xs} {_fmt(a)}"))
        return out

    FL2 = (f32, f64)
    # the simulated Ascend runs the parts' conv2d as Cube ops (fp16 operands): helpers.CUBE_OPS
    # names these composites, so float32 there is held to the Cube's bound, elsewhere tight
    return [
        OpCase("conv1d", conv_samples(CONV1D_SPECS), FL2, accum=True),
        OpCase("conv3d", conv_samples(CONV3D_SPECS), FL2, accum=True),
        OpCase("conv3d_backprop_input", bpi3_samples, FL2, accum=True),
    ]
