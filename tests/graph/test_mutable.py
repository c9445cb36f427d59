"""ms.mutable: scalars, tuples, lists and dicts passed to a compiled function as run-time inputs
of the graph (one compile for every value), following MindSpore's scalar rules inside the graph
(core/mutable.py). Expected values were observed running MindSpore 2.10 on the same code."""
import numpy as np
import pytest

import minispore as ms
from minispore import Tensor, dtype as mstype, nn, ops
from minispore.core.graph import compile as graph_compile


@pytest.fixture(autouse=True)
def _graph_mode():
    ms.set_context(mode=ms.GRAPH_MODE)
    yield
    ms.set_context(mode=ms.GRAPH_MODE)


X = Tensor(np.ones(2, np.float32))
X16 = Tensor(np.ones(2, np.float16))
XI = Tensor(np.ones(2, np.int32))


def compiles(call):
    """(result of call(), how many graphs it compiled)."""
    before = graph_compile.stats["compiles"]
    out = call()
    return out, graph_compile.stats["compiles"] - before


@ms.jit
def _affine(x, n):
    y = n * 2 + 1
    return x * y, y


def test_a_mutable_scalar_is_a_graph_input_and_the_graph_is_reused():
    # MindSpore: (Tensor [5. 5.], 5) then (Tensor [7. 7.], 7); y is a Python int
    (out, y), n = compiles(lambda: _affine(X, ms.mutable(2)))
    assert n == 1 and out.asnumpy().tolist() == [5.0, 5.0] and y == 5 and type(y) is int
    g = graph_compile.last_compiled().graph
    assert any(v.shape == () for v in g.inputs)         # the scalar is a run-time input
    (out, y), n = compiles(lambda: _affine(X, ms.mutable(3)))
    assert n == 0 and out.asnumpy().tolist() == [7.0, 7.0] and y == 7
    # without mutable each value is a constant of its own graph
    _, n = compiles(lambda: _affine(X, 11))
    assert n == 1


@ms.jit
def _add(x, n):
    return x + n


def test_a_mutable_scalar_with_a_tensor_takes_the_python_number_dtype_rule():
    # MindSpore: float32 [3.5 3.5]; int32 [3 3]; float16 [3.5 3.5]; int32+2.5 float32; int32+True
    # int32 [2 2]
    cases = [(X, 2.5, mstype.float32, [3.5, 3.5]), (XI, 2, mstype.int32, [3, 3]),
             (X16, 2.5, mstype.float16, [3.5, 3.5]), (XI, 2.5, mstype.float32, [3.5, 3.5]),
             (XI, True, mstype.int32, [2, 2])]
    for x, v, d, expect in cases:
        out = _add(x, ms.mutable(v))
        assert out.dtype == d and out.asnumpy().tolist() == expect, (x.dtype, v)


@ms.jit
def _scalar_math(n, m):
    return n * 3, n / 2, n // 2, m * 3, n + m, n > 1, -n, n ** 2


def test_arithmetic_on_mutable_scalars_follows_python_types_and_float32():
    # MindSpore: (15, 2.5, 2, 0.30000001192092896, 5.099999904632568, True, -5, 25)
    out = ms.jit(_scalar_math.__wrapped_jit__, jit_level="O1")(ms.mutable(5), ms.mutable(0.1))
    assert out == (15, 2.5, 2, 0.30000001192092896, 5.099999904632568, True, -5, 25)
    assert [type(v) for v in out] == [int, float, int, float, float, bool, int, int]


@ms.jit
def _identity(n):
    return n


def test_a_mutable_returned_unchanged_keeps_its_value():
    # MindSpore: 2 2.5 0.1 (1, 2)
    assert _identity(ms.mutable(2)) == 2 and type(_identity(ms.mutable(2))) is int
    assert _identity(ms.mutable(2.5)) == 2.5
    assert _identity(ms.mutable(0.1)) == 0.1
    assert _identity(ms.mutable((1, 2))) == (1, 2)


@ms.jit
def _from_tuple(x, t):
    return x * t[0] + t[1], t


@ms.jit
def _from_dict(x, d):
    return x * d["a"], d


def test_mutable_tuple_list_and_dict_elements_are_inputs():
    # MindSpore: (Tensor [5. 5.], (2, 3)); (Tensor [5. 5.], [2.0, 3]); (Tensor [2. 2.], {'a': 2})
    (out, t), _ = compiles(lambda: _from_tuple(X, ms.mutable((2, 3))))
    assert out.asnumpy().tolist() == [5.0, 5.0] and t == (2, 3) and type(t) is tuple
    (out, t), n = compiles(lambda: _from_tuple(X, ms.mutable((4, 1))))
    assert n == 0 and out.asnumpy().tolist() == [5.0, 5.0] and t == (4, 1)
    out, t = _from_tuple(X, ms.mutable([2.0, 3]))
    assert out.asnumpy().tolist() == [5.0, 5.0] and t == [2.0, 3] and type(t) is list
    out, d = _from_dict(X, ms.mutable({"a": 2}))
    assert out.asnumpy().tolist() == [2.0, 2.0] and d == {"a": 2}


@ms.jit
def _branch(x, n):
    if n > 2:
        return x + 1
    return x - 1


def test_a_condition_on_a_mutable_scalar_is_decided_at_run_time():
    # MindSpore: [2. 2.] [0. 0.]
    (a, _), (b, n) = compiles(lambda: _branch(X16, ms.mutable(3))), \
        compiles(lambda: _branch(X16, ms.mutable(1)))
    assert a.asnumpy().tolist() == [2.0, 2.0] and b.asnumpy().tolist() == [0.0, 0.0]
    assert n == 0


class _Scale(nn.Cell):
    def construct(self, x, k):
        return x * k[0] - k[1]


def test_a_cell_takes_a_mutable_tuple():
    net = _Scale()
    (a, _), (b, n) = compiles(lambda: net(X, ms.mutable((3.0, 1.0)))), \
        compiles(lambda: net(X, ms.mutable((5.0, 2.0))))
    assert a.asnumpy().tolist() == [2.0, 2.0] and b.asnumpy().tolist() == [3.0, 3.0] and n == 0


def test_in_pynative_mutable_behaves_as_the_value():
    # MindSpore: repr 2, (1, 2), True; a mutable Tensor is the Tensor itself
    ms.set_context(mode=ms.PYNATIVE_MODE)
    assert repr(ms.mutable(2)) == "2" and ms.mutable(2) + 1 == 3
    assert ms.mutable((1, 2)) == (1, 2) and repr(ms.mutable(True)) == "True"
    assert isinstance(ms.mutable(True), bool) and isinstance(ms.mutable(1.5), float)
    assert ms.mutable(X) is X
    assert _add(X, ms.mutable(2)).asnumpy().tolist() == [3.0, 3.0]


def test_mutable_rejects_other_types_with_mindspore_message():
    # MindSpore's TypeError text
    for bad in ["a", None, {1, 2}, 1.5j, (1, "a")]:
        with pytest.raises(TypeError, match=r"For 'mutable', the 'input_data' should be one of "
                                            r"\(bool, int, float, Tensor, tuple, list, dict\)"):
            ms.mutable(bad)
    with pytest.raises(TypeError, match="when the variable_len is True, the first input should "
                                        "be list or tuple, but got: int"):
        ms.mutable(3, dynamic_len=True)


def test_dynamic_len_is_refused_when_a_graph_gets_it():
    v = ms.mutable((1, 2), dynamic_len=True)       # MindSpore accepts it here
    assert v == (1, 2)
    with pytest.raises(NotImplementedError, match="dynamic_len=True"):
        _identity(v)


def test_a_mutable_scalar_cannot_be_a_compile_time_value():
    @ms.jit
    def shape_from(x, n):
        return x.reshape((n, 1))
    with pytest.raises(Exception, match="mutable"):
        shape_from(X, ms.mutable(2))


# ------------------------------------------ float/int/bool of a tensor: run-time scalars -------
XF = Tensor(np.array([1.5, -2.0, 3.25], np.float32))
XN = Tensor(np.array([1, 2, 3], np.int32))
H = Tensor(np.array([1, 2, 3], np.float16))


def _f_sum(x):
    return float(x.sum())


def _i_sum(x):
    return int(x.sum())


def _i_neg(x):
    return int(x[1] - 0.5)


def _b_cmp(x):
    return bool(x.sum() > 0)


def _b_val(x):
    return bool(x.sum())


def _from_ints(xi):
    return float(xi[0]), int(xi.sum()) // 4, int(xi.sum()) / 4


def _with_tensors(x, h):
    return h * float(x.sum()), XN * int(x[0]), h + int(x[2])


def _f_math(x):
    return float(x.sum()) + 0.1, float(x[0]) > 1


def _f_tensor(x):
    return Tensor(float(x.sum()))


def _b_if(x):
    return x * 2 if bool(x.sum() > 0) else x


SCALARS = [  # MindSpore's results and types
    (_f_sum, (XF,), 2.75), (_i_sum, (XF,), 2), (_i_neg, (XF,), -2), (_b_cmp, (XF,), True),
    (_b_val, (XF,), True), (_from_ints, (XN,), (1.0, 1, 1.5)),
    (_f_math, (XF,), (2.8499999046325684, True)),
]


@pytest.mark.parametrize("fn,args,expect", SCALARS, ids=[s[0].__name__ for s in SCALARS])
def test_python_scalar_of_a_graph_tensor(fn, args, expect):
    out = ms.jit(fn)(*args)
    assert out == expect
    types = [type(v) for v in out] if isinstance(out, tuple) else type(out)
    assert types == ([type(v) for v in expect] if isinstance(expect, tuple) else type(expect))


def test_python_scalar_of_a_graph_tensor_with_tensors():
    # MindSpore: float16 [2.75 5.5 8.25], int32 [1 2 3], float16 [4. 5. 6.]; Tensor(2.75)
    # float32; [3. -4. 6.5]
    a, b, c = ms.jit(_with_tensors)(XF, H)
    assert a.dtype == mstype.float16 and a.asnumpy().tolist() == [2.75, 5.5, 8.25]
    assert b.dtype == mstype.int32 and b.asnumpy().tolist() == [1, 2, 3]
    assert c.dtype == mstype.float16 and c.asnumpy().tolist() == [4.0, 5.0, 6.0]
    t = ms.jit(_f_tensor)(XF)
    assert t.dtype == mstype.float32 and t.shape == () and t.asnumpy() == 2.75
    assert ms.jit(_b_if)(XF).asnumpy().tolist() == [3.0, -4.0, 6.5]


def test_python_scalar_of_a_multi_element_graph_tensor_raises():
    # MindSpore: ValueError "Can not convert Tensor with more than one element to Scalar"
    def whole(x):
        return float(x)
    with pytest.raises(ValueError, match="more than one element"):
        ms.jit(whole)(XF)


# ------------------------------------------------------- gradients w.r.t. a mutable tuple ------
def _matmul_pair(z):
    return ops.matmul(z[0], z[1])


A = Tensor(np.array([[1.0, 2.0]], np.float32))
B = Tensor(np.array([[3.0], [4.0]], np.float32))
GRAD_A, GRAD_B = [[3.0, 4.0]], [[1.0], [2.0]]


@pytest.mark.parametrize("mode", [ms.GRAPH_MODE, ms.PYNATIVE_MODE])
def test_gradient_with_respect_to_a_mutable_tuple_of_tensors(mode):
    # MindSpore: a mutable tuple of tensors is a differentiable input of a graph (its grads, one
    # per element); a plain tuple is a constant (grads ()); in PyNative only a compiled gradient
    # differentiates it
    ms.set_context(mode=mode)
    forms = {"GradOperation": lambda z: ops.GradOperation()(_matmul_pair)(z),
             "grad": lambda z: ms.grad(_matmul_pair)(z),
             "jit_grad": lambda z: ms.jit(ms.grad(_matmul_pair))(z)}
    for name, form in forms.items():
        assert form((A, B)) == (), name
        got = form(ms.mutable((A, B)))
        if mode == ms.PYNATIVE_MODE and name != "jit_grad":
            assert got == (), name
            continue
        assert isinstance(got, tuple) and len(got) == 2, name
        assert got[0].asnumpy().tolist() == GRAD_A and got[1].asnumpy().tolist() == GRAD_B


class _PairNet(nn.Cell):
    def construct(self, z):
        return ops.matmul(z[0], z[1])


class _GradWrtInput(nn.Cell):
    def __init__(self, net):
        super().__init__()
        self.net = net
        self.grad_op = ops.GradOperation()

    def construct(self, z):
        return self.grad_op(self.net)(z)


def test_mindspores_mutable_example_gradient():
    # the example of MindSpore's mutable docstring, as MindSpore 2.10 printed it
    z = ms.mutable((Tensor([[0.5, 0.6, 0.4], [1.2, 1.3, 1.1]], dtype=mstype.float32),
                    Tensor([[0.01, 0.3, 1.1], [0.1, 0.2, 1.3], [2.1, 1.2, 3.3]],
                           dtype=mstype.float32)))
    gx, gy = _GradWrtInput(_PairNet())(z)
    np.testing.assert_allclose(gx.asnumpy(), [[1.41000009, 1.59999990, 6.59999990]] * 2,
                               rtol=1e-6)
    np.testing.assert_allclose(gy.asnumpy(), [[1.70000005] * 3, [1.89999998] * 3, [1.5] * 3],
                               rtol=1e-6)


@ms.jit
def _op_functions(h, xi, n, m):
    return (ops.add(h, m), ops.mul(xi, n), ops.add(xi, m), ops.maximum(h, m), ops.pow(h, n),
            ops.sub(n, h))


def test_op_functions_take_a_mutable_scalar_as_a_python_number():
    # MindSpore: float16 [3.5 4.5 5.5], int32 [2 4 6], float32 [3.5 4.5 5.5], float16
    # [2.5 2.5 3.], float16 [1. 4. 9.], float16 [1. 0. -1.]
    h = Tensor(np.array([1, 2, 3], np.float16))
    xi = Tensor(np.array([1, 2, 3], np.int32))
    out = _op_functions(h, xi, ms.mutable(2), ms.mutable(2.5))
    expect = [(mstype.float16, [3.5, 4.5, 5.5]), (mstype.int32, [2, 4, 6]),
              (mstype.float32, [3.5, 4.5, 5.5]), (mstype.float16, [2.5, 2.5, 3.0]),
              (mstype.float16, [1.0, 4.0, 9.0]), (mstype.float16, [1.0, 0.0, -1.0])]
    assert [(o.dtype, o.asnumpy().tolist()) for o in out] == expect


# ------------------------------------------- variable scalars through control flow -------------
@ms.jit
def _bool_ops(n):
    return n + 1, n and True, not n


@ms.jit
def _number_from_branches(x, n):
    if x.sum() > 0:
        y = n + 1
    else:
        y = n - 1
    return y


@ms.jit
def _constants_from_branches(x):
    if x.sum() > 0:
        y = 1
    else:
        y = 2
    return y, x * y


def test_variable_scalars_through_logic_and_tensor_if_stay_python_numbers():
    # MindSpore: (2, True, False) as int, bool, bool; 4 (int); (1, Tensor [1. 2.]) with an int
    out = _bool_ops(ms.mutable(True))
    assert out == (2, True, False) and [type(v) for v in out] == [int, bool, bool]
    y = _number_from_branches(Tensor(np.array([1.0, 2.0], np.float32)), ms.mutable(3))
    assert y == 4 and type(y) is int
    y, t = _constants_from_branches(Tensor(np.array([1.0, 2.0], np.float32)))
    assert y == 1 and type(y) is int and t.asnumpy().tolist() == [1.0, 2.0]


def _scaled_by_own_sum(x):
    return (x * float(x.sum())).sum()


def _times_square(x, n):
    return (x * n * n).sum()


@pytest.mark.parametrize("mode", [ms.GRAPH_MODE, ms.PYNATIVE_MODE])
def test_variable_scalars_are_not_differentiated(mode):
    # MindSpore, both modes: grad of (x * float(x.sum())).sum() is [3. 3.] (the Python number is
    # a constant of the gradient); grad w.r.t. (x, mutable(2.0)) of (x*n*n).sum() is
    # ([4. 4.], 0.0) compiled, [4. 4.] in PyNative (a Python number has no gradient)
    ms.set_context(mode=mode)
    x = Tensor(np.array([1.0, 2.0], np.float32))
    assert ms.grad(_scaled_by_own_sum)(x).asnumpy().tolist() == [3.0, 3.0]
    assert ms.jit(ms.grad(_scaled_by_own_sum))(x).asnumpy().tolist() == [3.0, 3.0]
    gx, gn = ms.jit(ms.grad(_times_square, grad_position=(0, 1)))(x, ms.mutable(2.0))
    assert gx.asnumpy().tolist() == [4.0, 4.0] and gn == 0.0 and type(gn) is float
    eager = ms.grad(_times_square, grad_position=(0, 1))(x, ms.mutable(2.0))
    if mode == ms.GRAPH_MODE:
        assert eager[0].asnumpy().tolist() == [4.0, 4.0] and eager[1] == 0.0
    else:
        assert eager.asnumpy().tolist() == [4.0, 4.0]


@ms.jit
def _extremes(n, m):
    return max(n, m), min(n, 2), ops.scalar_to_tensor(n), max(n, m, 7)


def test_max_min_and_scalar_to_tensor_of_variable_scalars():
    # MindSpore: (4, 2, Tensor(shape=[], dtype=Float32, value= 3), 7)
    a, b, t, c = _extremes(ms.mutable(3), ms.mutable(4))
    assert (a, b, c) == (4, 2, 7) and all(type(v) is int for v in (a, b, c))
    assert t.dtype == mstype.float32 and t.shape == () and t.asnumpy() == 3.0


def test_mutable_scalars_on_the_simulated_ascend():
    # no float64 there: a float mutable is a float32 input, and comes back as the value passed
    ms.set_context(device_target="Ascend")
    x = Tensor(np.array([1.5, -2.0], np.float32))

    @ms.jit
    def f(x, n, m):
        return x * n + m, n, m, m * 2, float(x.sum())
    out, n, m, m2, s = f(x, ms.mutable(2), ms.mutable(0.1))
    np.testing.assert_allclose(out.asnumpy(), [3.1, -3.9], rtol=1e-6)
    assert (n, m, m2, s) == (2, 0.1, float(np.float32(0.1) * 2), -0.5)


@ms.jit
def _types_of(x, n, m, b):
    s = float(x.sum())
    return (isinstance(n, int), isinstance(n, Tensor), isinstance(m, float), isinstance(b, bool),
            isinstance(b, int), isinstance(s, float), isinstance(n, (float, Tensor)),
            type(n) == int, type(m) is float, Tensor(n), Tensor(m, mstype.float16))


def test_a_variable_scalar_has_its_python_type():
    # MindSpore: (True, False, True, True, True, True, False, True, True, Tensor(Int64, 3),
    # Tensor(Float16, 4))
    *flags, tn, tm = _types_of(X, ms.mutable(3), ms.mutable(4.0), ms.mutable(True))
    assert flags == [True, False, True, True, True, True, False, True, True]
    assert tn.dtype == mstype.int64 and tn.asnumpy() == 3
    assert tm.dtype == mstype.float16 and tm.asnumpy() == 4.0


@ms.jit
def _nested(d, n=1):
    return d["a"][0] + d["a"][1] + n, d


def test_nested_mutable_dict_and_a_mutable_keyword():
    # MindSpore: (3.5, {'a': (1, 2.5), 'b': [3]}) for n=0; the keyword n is a graph input too
    (s, d), c = compiles(lambda: _nested(ms.mutable({"a": (1, 2.5), "b": [3]}), n=ms.mutable(0)))
    assert s == 3.5 and d == {"a": (1, 2.5), "b": [3]}
    (s, _), c2 = compiles(lambda: _nested(ms.mutable({"a": (2, 0.5), "b": [3]}), n=ms.mutable(4)))
    assert s == 6.5 and c2 == 0
