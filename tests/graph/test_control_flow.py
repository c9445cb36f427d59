"""Graph-mode control flow (core/graph/control.py): `if`/conditional expressions/`while` on tensor
conditions become If/While nodes, loops over constants unroll, `return` works anywhere, and
gradients (ms.grad, value_and_grad, GradOperation) of such code equal PyNative's bit for bit;
type mismatches between branches and unsupported exits are clear errors."""
from __future__ import annotations

import os

import numpy as np
import pytest

import minispore as ms
from minispore import Parameter, Tensor, nn, ops
from minispore.core.errors import GraphSyntaxError
from minispore.core.graph import compile as graph_compile
from frontend_helpers import (assert_same, fresh_cache,  # noqa: F401 (autouse fixture)
                              graph_vs_pynative, line_of, t)

THIS_FILE = os.path.basename(__file__)


# ---------------------------------------------------------------- helpers ------------------------
def graph_nodes(entry=None):
    """Node names of the (single) compiled graph, subgraphs included."""
    if entry is None:
        (entry,) = graph_compile.cache.entries()
    return [n.name for n in entry.graph.all_nodes()]


def assert_located(err, fn, needle):
    msg = str(err)
    assert THIS_FILE in msg and f"line {line_of(fn, needle)}" in msg, msg
    assert needle in msg, msg
    assert any(ln.strip() == "^" for ln in msg.splitlines()), f"no caret line:\n{msg}"


# inputs that take each side of the conditions below
POS = t([1.0, 2.0, 3.0])
NEG = t([-1.0, -2.0, 0.5])
MIX = t([0.25, -3.0, 2.0])
INPUTS = [POS, NEG, MIX]
IDS = ["pos", "neg", "mix"]


# ---------------------------------------------------------------- tensor if ----------------------
def if_elif_else(x):
    s = x.sum()
    if s > 2:
        y = x * 2
        z = s
    elif s > -1:
        y = x - 1
        z = s * 3
    else:
        y = -x
        z = s - 1
    return y + z, z


@pytest.mark.parametrize("x", INPUTS, ids=IDS)
def test_tensor_if_elif_else(x):
    graph_vs_pynative(if_elif_else, x)
    assert graph_nodes().count("If") == 2


def test_one_compiled_graph_takes_both_branches():
    ms.set_context(mode=ms.GRAPH_MODE)
    f = ms.jit(if_elif_else)
    before = dict(graph_compile.stats)
    outs = [f(x) for x in INPUTS]
    assert graph_compile.stats["compiles"] == before["compiles"] + 1
    ms.set_context(mode=ms.PYNATIVE_MODE)
    for x, g in zip(INPUTS, outs):
        assert_same(g, if_elif_else(x))


def if_one_branch_assigns(x):
    y = x + 1
    if x.max() > 2.5:
        y = y * 10           # otherwise y keeps its value from before the if
    if x.min() < -1.5:
        tmp = x * 3          # defined in one branch only, not used after
        y = y + tmp
    return y


@pytest.mark.parametrize("x", INPUTS, ids=IDS)
def test_tensor_if_without_else_merges_with_the_value_before(x):
    graph_vs_pynative(if_one_branch_assigns, x)


def nested_ifs(x, y):
    out = x * 0
    if x.sum() > 0:
        if y.sum() > 0:
            out = x + y
        else:
            out = x - y
        out = out * 2
    else:
        for i in range(2):               # unrolled loop inside a tensor branch
            if (x * i).sum() < -1:
                out = out + x * i
    return out


@pytest.mark.parametrize("x,y", [(POS, POS), (POS, NEG), (NEG, POS), (NEG, MIX)],
                         ids=["pp", "pn", "np", "nm"])
def test_nested_tensor_ifs_and_loops_in_branches(x, y):
    graph_vs_pynative(nested_ifs, x, y)


def if_in_unrolled_loop(x):
    for i in range(3):
        if x.sum() > i:
            x = x - 1
        else:
            x = x * 2
    return x


@pytest.mark.parametrize("x", INPUTS, ids=IDS)
def test_tensor_if_in_an_unrolled_for_loop(x):
    graph_vs_pynative(if_in_unrolled_loop, x)
    assert graph_nodes().count("If") == 3


def if_on_various_conditions(x, flag, n):
    a = x * 2 if flag else x          # 0-d bool tensor
    b = x + 1 if n else x - 1         # 0-d int tensor: nonzero is true
    c = x if (x > 0).astype(ms.int32).min() > 0 else -x
    d = x if x[0] > x[1] else x[::-1]
    e = x if (x.sum() > 0) & (x.max() < 3) else x * 0
    f = x if not (x.min() > 0) else x * 5
    return a, b, c, d, e, f


@pytest.mark.parametrize("flag", [True, False])
@pytest.mark.parametrize("n", [0, 3])
@pytest.mark.parametrize("x", INPUTS, ids=IDS)
def test_conditional_expressions_on_tensor_conditions(x, flag, n):
    graph_vs_pynative(if_on_various_conditions, x, t(flag, np.bool_), t(n, np.int32))


def ifexp_with_numbers_same_shape(x):
    s = x.sum()
    k = s * 2 if s > 0 else 0.0                  # a number becomes a 0-d tensor like s
    return x * k


@pytest.mark.parametrize("x", INPUTS, ids=IDS)
def test_tensor_conditional_expression_mixing_numbers_and_tensors(x):
    graph_vs_pynative(ifexp_with_numbers_same_shape, x)


# ---------------------------------------------------------------- return anywhere ---------------
def return_in_both_branches(x):
    y = x * 2
    if y.sum() > 0:
        return y + 1, y.sum()
    else:
        return y - 1, y.max()


def return_in_one_branch(x):
    y = x * 2
    if y.sum() > 0:
        return y + 1
    y = y * y                       # the rest of the function is the other path
    if y.max() > 3:
        return y - 100
    return y


def return_in_nested_tensor_ifs(x):
    if x.min() < 0:
        if x.max() > 2:
            return x * 0
        x = x + 1
    if x.sum() > 7:
        return x * 10
    return -x


@pytest.mark.parametrize("x", [POS, NEG, MIX, t([5.0, 6.0, 7.0]), t([-9.0, 8.0, 9.0])],
                         ids=["pos", "neg", "mix", "big", "wide"])
def test_return_inside_nested_tensor_ifs(x):
    graph_vs_pynative(return_in_nested_tensor_ifs, x)


def return_under_constant_if(x, mode):
    if mode == "early":
        return x
    if mode == "twice":
        x = x * 2
        if x.sum() > 0:
            return x
    return x - 7


@pytest.mark.parametrize("x", INPUTS + [t([5.0, 6.0, 7.0])], ids=IDS + ["big"])
def test_return_inside_tensor_if(x):
    graph_vs_pynative(return_in_both_branches, x)
    graph_vs_pynative(return_in_one_branch, x)


def return_numbers_from_tensor_if(x):
    if x.sum() > 0:
        return x, 1
    return x * 2, 2


@pytest.mark.parametrize("x", [POS, NEG], ids=["pos", "neg"])
def test_numbers_returned_from_tensor_if_keep_their_type(x):
    ms.set_context(mode=ms.PYNATIVE_MODE)
    e_out, e_num = return_numbers_from_tensor_if(x)
    ms.set_context(mode=ms.GRAPH_MODE)
    g_out, g_num = ms.jit(return_numbers_from_tensor_if)(x)
    np.testing.assert_array_equal(g_out.asnumpy(), e_out.asnumpy())
    if isinstance(g_num, Tensor):          # a runtime value: an integer scalar tensor
        assert g_num.shape == () and g_num.dtype in (ms.int32, ms.int64), g_num
        assert g_num.asnumpy().item() == e_num
    else:
        assert g_num == e_num and type(g_num) is int


def return_in_loop_tensors_only(x):
    for i in range(3):
        if x.sum() > 4 * i:
            x = x + 1
        else:
            return x * i
    if x.min() < 0:
        if x.max() > 5:
            return x * 0
        return x
    return -x


@pytest.mark.parametrize("x", [POS, NEG, MIX, t([5.0, 6.0, 7.0]), t([-9.0, 8.0, 9.0])],
                         ids=["pos", "neg", "mix", "big", "wide"])
def test_return_inside_tensor_if_in_a_loop_and_nested(x):
    graph_vs_pynative(return_in_loop_tensors_only, x)


@pytest.mark.parametrize("mode", ["early", "twice", "other"])
@pytest.mark.parametrize("x", [POS, NEG], ids=["pos", "neg"])
def test_early_return_under_constant_if(x, mode):
    graph_vs_pynative(return_under_constant_if, x, mode)


# ---------------------------------------------------------------- while --------------------------
def while_tensor(x):
    n = ops.zeros((), ms.int32)
    while x.sum() < 100:
        x = x * 2 + 1
        n = n + 1
    return x, n


def while_nested(x):
    i = t(0.0)
    acc = x * 0
    while i < 3:
        j = t(0.0)
        while j < i:
            acc = acc + x * j
            j = j + 1
        i = i + 1
    return acc, i


def while_python_then_body_if(x):
    k = 0
    while k < 2:                         # Python condition: unrolled
        x = x + k
        k += 1
    while x.max() < 20:                  # tensor condition: a While node
        if x.sum() > 10:
            x = x + 5
        else:
            x = x * 2
    return x


@pytest.mark.parametrize("x", [t([1.0, 2.0, 3.0]), t([0.5, 0.5, 0.5]), t([200.0, 0.0, 0.0])],
                         ids=["some", "many", "none"])
def test_while_on_a_tensor_condition(x):
    graph_vs_pynative(while_tensor, x)
    assert "While" in graph_nodes()


@pytest.mark.parametrize("x", [POS, NEG], ids=["pos", "neg"])
def test_nested_tensor_whiles_and_if_in_a_while_body(x):
    graph_vs_pynative(while_nested, x)
    graph_vs_pynative(while_python_then_body_if, x)


class WhileCell(nn.Cell):
    def __init__(self):
        super().__init__()
        self.step = Parameter(t([0.5, 1.0]), name="step")
        self.limit = 10.0

    def construct(self, x):
        while x.min() < self.limit:
            x = x + self.step
        return x


def test_while_in_a_cell_reads_parameters_and_config():
    net = WhileCell()
    graph_vs_pynative(net, t([1.0, 2.0]))
    net.step.set_data(t([2.0, 3.0]))
    graph_vs_pynative(net, t([1.0, 2.0]))


# ---------------------------------------------------------------- errors -------------------------
def mismatched_shapes(x):
    if x.sum() > 0:
        y = x * 2
    else:
        y = x.sum()
    return y


def mismatched_dtypes(x):
    if x.sum() > 0:
        y = x * 2
    else:
        y = x.astype(ms.int32)
    return y


def mismatched_ifexp(x):
    return x if x.sum() > 0 else x[0]


def mismatched_while(x):
    while x.sum() < 10:
        x = ops.concat((x, x))
    return x


@pytest.mark.parametrize("fn,var,types", [
    (mismatched_shapes, "'y'", ("f32[3]", "f32[]")),
    (mismatched_dtypes, "'y'", ("f32[3]", "i32[3]")),
    (mismatched_ifexp, "value", ("f32[3]", "f32[]")),
    (mismatched_while, "'x'", ("f32[3]", "f32[6]")),
], ids=["shape", "dtype", "ifexp", "while"])
def test_branch_type_mismatch_is_a_type_error_naming_variable_and_types(fn, var, types):
    ms.set_context(mode=ms.GRAPH_MODE)
    with pytest.raises(TypeError) as info:
        ms.jit(fn)(POS)
    msg = str(info.value)
    assert var in msg and types[0] in msg and types[1] in msg, msg
    assert THIS_FILE in msg and "hint:" in msg, msg


def test_branch_type_mismatch_names_both_assignment_lines():
    ms.set_context(mode=ms.GRAPH_MODE)
    with pytest.raises(TypeError) as info:
        ms.jit(mismatched_shapes)(POS)
    msg = str(info.value)
    for needle in ("y = x * 2", "y = x.sum()"):
        assert f"line {line_of(mismatched_shapes, needle)}" in msg, msg


def python_value_in_tensor_while(x):
    n = 0
    while x.sum() < 10:
        x = x * 2
        n += 1
    return x, n


def python_value_differs_in_tensor_if(x):
    if x.sum() > 0:
        mode = "a"
    else:
        mode = "b"
    return x, mode


def break_in_tensor_while(x):
    while x.sum() < 10:
        x = x * 2
        if True:
            break
    return x


def continue_under_tensor_if(x):
    for i in range(3):
        if x.sum() > i:
            continue
        x = x + 1
    return x


def non_scalar_condition(x):
    if x > 0:
        x = x * 2
    return x


@pytest.mark.parametrize("x", INPUTS, ids=IDS)
def test_python_number_changed_in_tensor_while_is_a_variable_scalar(x):
    """MindSpore 2.10 returns the counter as a Python int (test_control_flow_ms.py has its
    numbers)."""
    out = graph_vs_pynative(python_value_in_tensor_while, x)
    assert type(out[1]) is int


def test_python_value_differing_between_tensor_branches_is_a_type_error():
    ms.set_context(mode=ms.GRAPH_MODE)
    with pytest.raises(TypeError) as info:
        ms.jit(python_value_differs_in_tensor_if)(POS)
    msg = str(info.value)
    assert "'mode'" in msg and "'a'" in msg and "'b'" in msg, msg
    assert_located(info.value, python_value_differs_in_tensor_if, "if x.sum() > 0:")


@pytest.mark.parametrize("fn", [break_in_tensor_while, continue_under_tensor_if],
                         ids=["break-in-tensor-while", "continue-under-tensor-if"])
@pytest.mark.parametrize("x", INPUTS, ids=IDS)
def test_break_continue_under_tensor_conditions_match_pynative(fn, x):
    graph_vs_pynative(fn, x)


def test_multi_element_condition_is_a_value_error_as_in_pynative():
    ms.set_context(mode=ms.PYNATIVE_MODE)
    with pytest.raises(ValueError):
        non_scalar_condition(POS)
    ms.set_context(mode=ms.GRAPH_MODE)
    with pytest.raises(ValueError) as info:
        ms.jit(non_scalar_condition)(POS)
    msg = str(info.value)
    assert "(3,)" in msg and "hint:" in msg, msg
    assert_located(info.value, non_scalar_condition, "x > 0")


# ---------------------------------------------------------------- gradients ----------------------
class LoopNet(nn.Cell):
    """for loops over range and a CellList, constant ifs on config attributes."""

    def __init__(self, act="tanh", n=3):
        super().__init__()
        self.w = Parameter(t([[0.5, -0.25], [0.75, 1.5], [-1.0, 0.3]]), name="w")
        self.b = Parameter(t([0.1, -0.2]), name="b")
        self.scales = nn.CellList([Scale(0.5), Scale(1.5)])
        self.act, self.n = act, n

    def construct(self, x):
        h = ops.matmul(x, self.w) + self.b
        for i in range(self.n):
            if i % 2 == 0:
                h = h * self.b + i
            elif self.act == "tanh":
                h = ops.tanh(h)
            else:
                h = ops.relu(h)
        for cell in self.scales:
            h = cell(h)
        if self.act == "tanh":
            h = h * h
        return h.sum()


class Scale(nn.Cell):
    def __init__(self, s):
        super().__init__()
        self.s = Parameter(t([s, -s]), name="s")

    def construct(self, x):
        return x * self.s


class TensorIfNet(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = Parameter(t([0.5, -1.0, 2.0]), name="w")

    def construct(self, x):
        y = x * self.w
        if y.sum() > 0:
            y = y * y + x
        else:
            y = ops.sin(y) * self.w
        return y.sum()


class TensorWhileNet(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = Parameter(t([0.5, 1.0, 1.5]), name="w")

    def construct(self, x):
        y = x * self.w
        while y.sum() < 20:
            y = y * self.w + 1
        return y.sum()


def grads_in_both_modes(make_call, x):
    ms.set_context(mode=ms.PYNATIVE_MODE)
    eager = make_call()(x)
    ms.set_context(mode=ms.GRAPH_MODE)
    call = make_call()
    calls = graph_compile.ran["calls"]
    graph = call(x)
    # one graph ran (compiled now, or found in the cache: a fresh ms.grad of the same function
    # with the same inputs reuses the graph an earlier one compiled)
    assert graph_compile.ran["calls"] == calls + 1, "the gradient did not run as a graph"
    assert_same(graph, eager)
    compiles = graph_compile.stats["compiles"]
    assert_same(call(x), eager)                     # cached
    assert graph_compile.stats["compiles"] == compiles


X2 = t([[1.0, -2.0, 0.5], [0.25, 3.0, -1.0]])


@pytest.mark.parametrize("act", ["tanh", "relu"])
def test_grad_value_and_grad_grad_operation_through_loops_and_constant_ifs(act):
    net = LoopNet(act)
    params = net.trainable_params()
    grads_in_both_modes(lambda: ms.grad(net), X2)
    grads_in_both_modes(lambda: ms.grad(net, grad_position=None, weights=params), X2)
    grads_in_both_modes(lambda: ms.value_and_grad(net, 0, params), X2)
    grads_in_both_modes(lambda: ops.GradOperation()(net), X2)
    grads_in_both_modes(lambda: ops.GradOperation(get_all=True, get_by_list=True)(net, params),
                        X2)
    grads_in_both_modes(lambda: ops.GradOperation(get_by_list=True)(net, params), X2)


def test_grad_of_a_jit_function_with_loops():
    w = Parameter(t([1.5, -0.5, 2.0]), name="w")

    def f(x):
        acc = x * 0
        for i, k in enumerate((0.5, 2.0, -1.0)):
            acc = acc + ops.exp(x * k) * w * i
        return acc.sum()

    grads_in_both_modes(lambda: ms.value_and_grad(f, 0, [w]), POS)


@pytest.mark.parametrize("x", [POS, NEG, MIX], ids=IDS)
def test_grad_through_tensor_if(x):
    net = TensorIfNet()
    grads_in_both_modes(lambda: ms.value_and_grad(net, 0, net.trainable_params()), x)
    grads_in_both_modes(lambda: ops.GradOperation(get_all=True)(net), x)


@pytest.mark.parametrize("x", [t([0.5, 0.5, 0.5]), t([1.0, 2.0, 3.0]), t([30.0, 1.0, 1.0])],
                         ids=["loops", "once", "never"])
def test_grad_through_tensor_while(x):
    net = TensorWhileNet()
    grads_in_both_modes(lambda: ms.value_and_grad(net, 0, net.trainable_params()), x)


class CountedWhile(nn.Cell):
    """n trips (a tensor) carrying a float state and an int counter, reading a Parameter and an
    outer value (x) inside the body."""

    def __init__(self):
        super().__init__()
        self.w = Parameter(t([0.9, 1.05, 0.5]), name="w")

    def construct(self, x, n):
        i = ops.zeros((), ms.int32)
        y = x
        while i < n:
            y = ops.tanh(y * self.w) + 0.1 * x
            i = i + 1
        return (y * y).sum()


@pytest.mark.parametrize("slots", [3, 64], ids=["3-slots", "64-slots"])
@pytest.mark.parametrize("trips", [0, 1, 2, 7, 9, 10, 40])
def test_grad_through_a_long_tensor_while(trips, slots, monkeypatch):
    """The While gradient's checkpoints (cf_grad): with 3 slots, 7 trips fill whole segments
    of 3, 9 = 3^2 is the last count each segment keeps whole, 10 and 40 recompute past the
    kept slots; every count gives PyNative's gradients. Within 1 ulp, not bit for bit: x, read
    by every iteration, sums its per-iteration gradients in another order than the tape does
    (the same numbers as before the checkpoints, when every state was recomputed)."""
    from minispore.core.graph import cf_grad
    monkeypatch.setattr(cf_grad, "MAX_CHECKPOINTS", slots)
    net = CountedWhile()
    x, n = t([0.3, -0.7, 1.2]), Tensor(np.int32(trips))
    ms.set_context(mode=ms.PYNATIVE_MODE)
    eager = ms.value_and_grad(net, 0, net.trainable_params())(x, n)
    ms.set_context(mode=ms.GRAPH_MODE)
    graph = ms.value_and_grad(net, 0, net.trainable_params())(x, n)
    (gv, (gx, (gw,))), (ev, (ex, (ew,))) = graph, eager
    for a, b_ in ((gv, ev), (gx, ex), (gw, ew)):
        np.testing.assert_allclose(a.asnumpy(), b_.asnumpy(), rtol=3e-7, atol=1e-7)


def test_while_gradient_cost_grows_linearly_with_the_trips():
    """Kernels run by one O0 gradient call (counted by ms.Profiler) at 16, 32 and 64 trips:
    linear (each doubling ~2x), where recomputing every state from the first was quadratic."""
    from minispore.profiler import KBK, KERNEL
    net = CountedWhile()
    ms.set_context(mode=ms.GRAPH_MODE, jit_level="O0")
    f = ms.value_and_grad(net, 0, net.trainable_params())
    x = t([0.3, -0.7, 1.2])
    f(x, Tensor(np.int32(1)))                                  # compile once
    counts = []
    for trips in (16, 32, 64):
        with ms.Profiler(output_path=os.devnull) as prof:
            f(x, Tensor(np.int32(trips)))
        counts.append(sum(1 for r in prof.records() if r["kind"] == KERNEL and r["mode"] == KBK))
    ms.set_context(jit_level="O2")
    assert counts[0] > 0
    assert counts[1] / counts[0] < 2.3 and counts[2] / counts[1] < 2.3, counts


def test_grad_through_tensor_ifexp_and_return_in_branch():
    def f(x):
        y = ops.exp(x) if x.sum() > 0 else x * x
        if y.max() > 2:
            return (y * 3).sum()
        return y.sum()

    for x in INPUTS:
        grads_in_both_modes(lambda: ms.grad(f), x)


# ---------------------------------------------------------------- effects under control flow -----
def prints_in_branches_and_loops(x):
    if x.sum() > 0:
        print("pos", x)
    else:
        print("neg")
    while x.sum() < 4:
        print("loop", x.sum())
        x = x + 1
    return x


def _labels(out: str) -> list:
    """The label words printed, in order (graph-mode print, as MindSpore's, puts each
    argument on its own line; PyNative's Python print puts them on one)."""
    words = [ln.split()[0] for ln in out.splitlines() if ln.split()]
    return [w for w in words if w in ("pos", "neg", "loop")]


@pytest.mark.parametrize("x", [t([1.0]), t([-1.0]), t([9.0])], ids=["pos", "neg", "noloop"])
def test_print_runs_only_in_the_taken_branch_and_once_per_iteration(x, capsys):
    ms.set_context(mode=ms.PYNATIVE_MODE)
    prints_in_branches_and_loops(x)
    eager = _labels(capsys.readouterr().out)
    ms.set_context(mode=ms.GRAPH_MODE)
    f = ms.jit(prints_in_branches_and_loops)
    for _ in range(2):                       # compiled, then cached
        f(x)
        assert _labels(capsys.readouterr().out) == eager


def _helper_returns_early(x):
    for k in range(3):
        if x.sum() > 10 * k:
            x = x + k
        else:
            return x * 100
    return x


def return_in_while_and_helper(x):
    n = 0
    while n < 4:
        if x.sum() > 3:
            return _helper_returns_early(x) - 1      # the helper's returns stay inside it
        x = x * 2
        n += 1
    return -x


@pytest.mark.parametrize("x", [t([0.1, 0.2]), t([2.0, 3.0]), t([40.0, 1.0])],
                         ids=["small", "mid", "big"])
def test_return_under_tensor_if_in_unrolled_while_and_helper(x):
    graph_vs_pynative(return_in_while_and_helper, x)
