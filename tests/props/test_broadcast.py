"""Broadcasting, property-based (notes/testing.md 6.5): minispore's shape rule equals numpy's on
every mutually broadcastable set of shapes, and every pair numpy rejects raises ShapeError (a
ValueError) naming the op and the shapes. The kernels follow the same rule on small tensors."""
from __future__ import annotations

import zlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes, mutually_broadcastable_shapes

import minispore as ms
from minispore.core.errors import ShapeError
from minispore.core.shape import broadcast_shapes

from helpers import assert_close

broadcastable = st.integers(2, 3).flatmap(
    lambda n: mutually_broadcastable_shapes(num_shapes=n, min_dims=0, max_dims=4, min_side=0,
                                            max_side=4))
any_shape = array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4)


@given(broadcastable)
def test_broadcast_shapes_equals_numpy(shapes):
    inputs, result = shapes
    assert broadcast_shapes("add", *inputs) == np.broadcast_shapes(*inputs) == result


@given(st.lists(any_shape, min_size=2, max_size=3))
def test_incompatible_shapes_raise_shape_error(shapes):
    try:
        want = np.broadcast_shapes(*shapes)
    except ValueError:
        with pytest.raises(ShapeError) as info:
            broadcast_shapes("add", *shapes)
        assert isinstance(info.value, ValueError)
        msg = str(info.value)
        assert msg.startswith("add: shapes ")
        for s in shapes:
            assert str(tuple(s)) in msg
        assert "cannot be broadcast together" in msg
    else:
        assert broadcast_shapes("add", *shapes) == want


def test_single_and_no_shapes():
    assert broadcast_shapes("add", (2, 3)) == (2, 3)
    assert broadcast_shapes("add") == ()


@settings(max_examples=40)
@given(mutually_broadcastable_shapes(num_shapes=2, max_dims=4, max_side=3),
       st.sampled_from(["add", "mul", "maximum"]))
def test_kernels_broadcast_like_numpy(shapes, opname):
    """The CPU elementwise kernels (flat, hoisted-scalar and strided variants) on random
    broadcastable shapes give numpy's values."""
    (sa, sb), want_shape = shapes
    rng = np.random.default_rng(zlib.crc32(repr((sa, sb)).encode()))
    a = rng.standard_normal(sa).astype(np.float32)
    b = rng.standard_normal(sb).astype(np.float32)
    ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
    got = getattr(ms.ops, opname)(ms.Tensor(a), ms.Tensor(b))
    want = {"add": np.add, "mul": np.multiply, "maximum": np.maximum}[opname](a, b)
    assert got.shape == want_shape
    assert_close(got.asnumpy(), want.astype(np.float32), 1.3e-6, 1e-5, f"{opname} {sa} {sb}")


@pytest.mark.parametrize("shapes", [
    ([2] + [1] * 8, [1] * 8 + [2]),                          # rank 9, two axes that broadcast
    ([2, 1, 3, 1, 2, 1, 3, 1, 2, 2], [1, 4, 3, 1, 1, 5, 3, 1, 2, 1]),
    ([2, 1] * 5, [1, 2] * 5),                                # ten axes that all differ
], ids=["rank9", "rank10-collapsible", "rank10-alternating"])
@pytest.mark.parametrize("mode", ["pynative", "graph-O0", "graph-O2"])
def test_broadcasting_past_the_generated_loops_rank_equals_numpy(shapes, mode):
    """The CPU's generated broadcast loops go to rank 8: past it the axes that broadcast alike
    merge, and operands that still need more axes are expanded for one flat loop, so every mode
    computes what numpy does (no mode raises where another computes)."""
    ms.set_context(mode=ms.PYNATIVE_MODE if mode == "pynative" else ms.GRAPH_MODE,
                   jit_level=mode[-2:] if mode != "pynative" else "O0")
    r = np.random.default_rng(0)
    a, b = (r.standard_normal(s).astype(np.float32) for s in shapes)
    f = ms.ops.maximum if mode == "pynative" else ms.jit(lambda x, y: ms.ops.maximum(x, y))
    got = f(ms.Tensor(a), ms.Tensor(b)).asnumpy()
    np.testing.assert_array_equal(got, np.maximum(a, b))
