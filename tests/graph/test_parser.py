"""Graph-mode frontend (core/graph/parser.py): every supported Python form gives, in GRAPH_MODE,
bit-for-bit the numbers the same code gives in PYNATIVE_MODE; every rejected form raises
GraphSyntaxError showing the user's file:line, source line, caret and a hint
(DESIGN.md "Graph mode"). Control flow on tensors lives in test_control_flow.py."""
from __future__ import annotations

import functools
import os
import re

import numpy as np
import pytest

import minispore as ms
from minispore import Parameter, Tensor, nn, ops
from minispore.core.errors import GraphSyntaxError
from minispore.core.graph import compile as graph_compile
from frontend_helpers import (F32, assert_same, fresh_cache,  # noqa: F401 (autouse fixture)
                              graph_vs_pynative, line_of, t)

THIS_FILE = os.path.basename(__file__)


# ---------------------------------------------------------------- helpers ------------------------
def X(*shape, start=0.0, dtype=F32):
    n = int(np.prod(shape))
    return Tensor((np.arange(n, dtype=np.float64) * 0.5 - n / 4 + start).astype(dtype)
                  .reshape(shape))


def graph_error(exc_type, fn, *args):
    """Compile `fn` (a function or a Cell) in GRAPH_MODE; return the exception it raised."""
    ms.set_context(mode=ms.GRAPH_MODE)
    compiled = fn if isinstance(fn, nn.Cell) else ms.jit(fn)
    with pytest.raises(exc_type) as info:
        compiled(*args)
    return info.value



def assert_located(err, fn, needle: str):
    """The message shows this file and the line of `needle`, the source line and a caret line
    right under it."""
    msg = str(err)
    line = line_of(fn, needle)
    assert THIS_FILE in msg, msg
    assert f"line {line}" in msg or f"{THIS_FILE}:{line}" in msg, f"want line {line}:\n{msg}"
    lines = msg.splitlines()
    src = [i for i, ln in enumerate(lines) if needle in ln and "File" not in ln]
    assert src, f"source line {needle!r} not shown:\n{msg}"
    i = src[-1]
    caret = lines[i + 1] if i + 1 < len(lines) else ""
    # SyntaxError.__str__ may append " (file, line N)" after the last line
    caret = re.sub(r" \(\S+, line \d+\)$", "", caret)
    assert caret.strip() == "^", f"no caret line:\n{msg}"
    # the caret points into the source line, not past its end
    assert len(caret) <= len(lines[i]) + 1, msg
    assert "minispore/core" not in msg, f"compiler internals leak into the message:\n{msg}"


def assert_graph_syntax_error(err, fn, needle, construct):
    assert isinstance(err, GraphSyntaxError)
    assert isinstance(err, SyntaxError) and isinstance(err, RuntimeError)
    msg = str(err)
    assert construct in msg, f"construct {construct!r} not named:\n{msg}"
    assert_located(err, fn, needle)
    assert "hint:" in msg or "PyNative" in msg, f"no hint:\n{msg}"
    # the SyntaxError fields point at the user's code too (tracebacks and IDEs use them)
    assert err.filename is not None and err.filename.endswith(THIS_FILE), err.filename
    assert err.lineno == line_of(fn, needle), (err.lineno, msg)


# ---------------------------------------------------------------- assignment ---------------------
def assign_forms(x, y):
    a, b = x, y
    (c, d), e = (a * 2, b), 3.0
    first, second = x                      # unpack a tensor along axis 0
    p = q = a + b
    [m, n] = [p - 1, q + 1]
    head, *rest = (x, y, a, b)
    return c + d * e, first - second, m * n, head + rest[-1]


def test_assignment_and_unpacking():
    graph_vs_pynative(assign_forms, X(2, 3), X(2, 3, start=1.0))


def augmented(x, y):
    z = x * 1.0
    z += y
    z -= 0.5
    z *= y
    z /= 4.0
    z **= 2
    k = 3
    k += 2
    k *= 2
    k //= 3
    w = y + 0.0
    w //= 0.75
    w %= 0.5
    return z, z + k, w


def test_augmented_assignment():
    graph_vs_pynative(augmented, X(3, 4), X(3, 4, start=2.0))


def augmented_int(i, j):
    r = i * 1
    r &= j
    r |= 8
    r ^= j
    r <<= 1
    r >>= 2
    return r


def test_augmented_bitwise_on_int_tensors():
    graph_vs_pynative(augmented_int, t([1, 6, 13, 255], np.int32), t([3, 5, 7, 9], np.int32))


def subscript_assign(x, v):
    y = x * 1.0
    y[0] = 5.0
    y[1, 2] = v[0, 0]
    y[:, 0] = -1.0
    y[2] = v[1]
    return y


def test_subscripted_tensor_assignment():
    graph_vs_pynative(subscript_assign, X(3, 4), X(2, 4, start=7.0))


def test_subscripted_assignment_in_cell_of_a_local():
    class Net(nn.Cell):
        def construct(self, x):
            out = ops.zeros((2, 3), ms.float32)
            out[0] = x.sum(axis=0)
            out[1, 1:] = x[0, :2]
            return out

    graph_vs_pynative(Net(), X(4, 3))


# ---------------------------------------------------------------- operators ----------------------
def arithmetic(x, y, m):
    return (x + y, x - y, x * y, x / y, x // y, x % y, x ** 2, x @ m, -x, +x, abs(x),
            2.0 - x, 3.0 / y, 2 ** y, 1.5 * x + 0.5)


def test_arithmetic_operators():
    graph_vs_pynative(arithmetic, X(2, 3), X(2, 3, start=5.0), X(3, 2))


def comparisons(x, y):
    s = x.sum()
    return (x < y, x <= y, x > y, x >= y, x == y, x != y, x < 0.5, 0.5 <= x,
            (x > -1) & (x < 1), (x < -1) | (x > 1), (x > 0) ^ (y > 0), ~(x > 0),
            -1.0 < s < 1.0, s < y.sum() <= 2.0, 0.0 < s < 100.0 < y.sum())


def test_comparison_and_chained_comparison_operators():
    graph_vs_pynative(comparisons, X(2, 4), X(2, 4, start=0.25))
    graph_vs_pynative(comparisons, X(2, 4, start=0.3), X(2, 4, start=-0.25))


def boolean_ops(x, y):
    a, b = x.sum() > 0, y.sum() > 0
    r1 = x if (a and b) else -x
    r2 = x if (a or b) else -x
    r3 = x if not a else -x
    r4 = x if (a and b and x.max() < 1) else -x
    k = 3 and 4
    n = 0 or 5
    z = None or 7
    e = [] and x
    return a and b, a or b, r1, r2, r3, r4, k, n, z, e


@pytest.mark.parametrize("sx,sy", [(0.5, 0.5), (0.5, -9.0), (-9.0, 0.5), (-9.0, -9.0)])
def test_boolean_operators_on_tensors_and_constants(sx, sy):
    graph_vs_pynative(boolean_ops, X(2, 2, start=sx), X(2, 2, start=sy))


def bool_ops_values(x, y):
    return x.sum() and y.sum(), x.sum() or y.sum()


def test_and_or_on_non_bool_tensors_return_an_operand():
    graph_vs_pynative(bool_ops_values, X(2, 2, start=1.0), X(2, 2, start=3.0))


def bitwise(i, j):
    return i & j, i | j, i ^ j, ~i, i << 2, j >> 1, i & 6, 12 | j


def test_bitwise_operators_on_int_tensors():
    graph_vs_pynative(bitwise, t([1, 6, 13, 255, -3], np.int32), t([3, 5, 7, 9, 1], np.int32))


def python_operators(x):
    k = 7
    return (x * (k // 2), x + (k % 4), x * (2 ** 3), x - (k << 1), x + (k >> 1),
            x * (k & 3), x * (k | 8), x * (k ^ 1), x + (-k), x * (1 if 2 in (1, 2) else 0),
            x * (1 if 3 not in (1, 2) else 0), x * (k is not None), x + (k > 3 > 1))


def test_operators_on_python_constants_are_folded():
    graph_vs_pynative(python_operators, X(3))


# ---------------------------------------------------------------- constant if / ifexp -----------
class ModeNet(nn.Cell):
    def __init__(self, mode, scale, shape):
        super().__init__()
        self.mode, self.scale, self.shape = mode, scale, shape

    def construct(self, x):
        if self.mode == "double":
            y = x * 2
        elif self.mode == "square":
            y = x * x
        elif self.mode is None:
            y = x
        else:
            y = -x
        if self.scale > 1 and len(self.shape) == 2:
            y = y.reshape(self.shape) * self.scale
        z = y if self.scale < 3 else y + 1
        return z, ("big" if self.scale > 2 else "small")


@pytest.mark.parametrize("mode", ["double", "square", None, "other"])
@pytest.mark.parametrize("scale", [1, 2, 5])
def test_if_elif_else_and_ifexp_on_constants(mode, scale):
    graph_vs_pynative(ModeNet(mode, scale, (3, 2)), X(6))


def test_constant_if_emits_only_the_taken_branch():
    ms.set_context(mode=ms.GRAPH_MODE)
    net = ModeNet("square", 1, (3, 2))
    net(X(6))
    (entry,) = graph_compile.cache.entries()
    names = [n.name for n in entry.graph.all_nodes()]
    assert "If" not in names
    assert "neg" not in names


# ---------------------------------------------------------------- loops over constants ----------
def for_range(x):
    acc = x * 0
    for i in range(4):
        acc = acc + x * i
    for i in range(5, 1, -2):
        acc = acc - i
    return acc


def test_for_over_range():
    graph_vs_pynative(for_range, X(2, 3))


def for_containers(x, y):
    acc = x
    for v in (x, y, x * y):
        acc = acc + v
    for s in [0.5, 2.0]:
        acc = acc * s
    for i, v in enumerate((x, y)):
        acc = acc + v * i
    for i, v in enumerate([x, y], 1):
        acc = acc - v * i
    for a, (b, s) in zip((x, y), ((y, 1.0), (x, 2.0))):
        acc = acc + a * b * s
    for k, v in {"a": x, "b": y}.items():
        acc = acc + v if k == "a" else acc - v
    return acc


def test_for_over_tuple_list_enumerate_zip_dict():
    graph_vs_pynative(for_containers, X(2, 3), X(2, 3, start=1.0))


def for_over_tensor_rows(x):
    acc = x[0] * 0
    for row in x:
        acc = acc + row * row
    return acc


def test_for_over_a_tensor_iterates_its_first_axis():
    graph_vs_pynative(for_over_tensor_rows, X(4, 3))


class Scale(nn.Cell):
    def __init__(self, s):
        super().__init__()
        self.w = Parameter(Tensor(np.full((3,), s, F32)), name="w")

    def construct(self, x):
        return x * self.w + 1.0


class ListNet(nn.Cell):
    def __init__(self):
        super().__init__()
        self.layers = nn.CellList([Scale(0.5), Scale(2.0), Scale(-1.0)])
        self.seq = nn.SequentialCell([Scale(1.5), Scale(3.0)])

    def construct(self, x):
        for layer in self.layers:
            x = layer(x)
        for i, layer in enumerate(self.layers):
            x = x + layer(x) * i
        for layer in self.seq:
            x = layer(x)
        x = self.seq(x)
        x = self.layers[1](x) + self.layers[-1](x)
        return x, len(self.layers)


def test_for_over_cell_list_and_sequential_cell():
    graph_vs_pynative(ListNet(), X(2, 3))


def while_python(x):
    i = 0
    acc = x
    while i < 4:
        acc = acc * 2 + i
        i += 1
    n = 10
    while n > 0:
        n -= 3
        if n % 2:
            continue
        acc = acc - n
    return acc, i, n


def test_while_on_a_python_condition_unrolls():
    graph_vs_pynative(while_python, X(3))


def break_continue(x):
    acc = x
    for i in range(10):
        if i == 1:
            continue
        if i > 4:
            break
        acc = acc + x * i
    else:
        acc = acc * 100            # not reached: the loop breaks
    for i in range(3):
        acc = acc + 1
    else:
        acc = acc * 2              # reached
    j = 0
    while True:
        j += 1
        if j >= 3:
            break
        acc = acc - 1
    for a in range(3):
        for b in range(3):
            if b > a:
                break
            acc = acc + a * b
    return acc


def test_break_continue_and_loop_else_in_constant_loops():
    graph_vs_pynative(break_continue, X(2, 2))


def early_return(x, flag):
    if flag:
        return x * 2
    for i in range(5):
        if i == 2:
            return x + i
    return x


def test_return_anywhere_under_constant_control_flow():
    graph_vs_pynative(early_return, X(3), True)
    graph_vs_pynative(early_return, X(3), False)


# ---------------------------------------------------------------- literals, indexing -------------
def literals(x, y):
    tup = (x, y, 3)
    lst = [x * 2, y * 2]
    d = {"a": x, "b": y, 1: x + y}
    nested = {"k": (x, [y, 5.0])}
    lst.append(x - y)
    merged = {**d, "c": x * y}
    return (tup[0] + tup[-2] * tup[2], lst[1] - lst[2], d["a"] * d[1], nested["k"][1][0] *
            nested["k"][1][1], merged["c"], tup[:2], len(lst), [a + 1 for a in lst[::2]])


def test_tuple_list_dict_literals_and_constant_indexing():
    graph_vs_pynative(literals, X(2, 2), X(2, 2, start=1.0))


def comprehensions(x):
    squares = [x * i for i in range(4)]
    evens = [i * i for i in range(10) if i % 2 == 0]
    pairs = [(i, j) for i in range(3) for j in range(i)]
    table = {i: x + i for i in (1, 2)}
    total = sum(evens)
    acc = x * 0
    for s in squares:
        acc = acc + s
    return acc + total, tuple(evens), tuple(pairs), table[2] - table[1], \
        tuple(v * 2 for v in (x, x))


def test_list_comprehensions_over_constants():
    graph_vs_pynative(comprehensions, X(3))


def slicing(x):
    return (x[0], x[-1], x[1:], x[:, ::2], x[..., 1], x[None], x[:, None, 1:3], x[1, 2],
            x[::-1], x[1:3, -2:], x[:, 1], x[0:2][1])


def test_tensor_slicing():
    graph_vs_pynative(slicing, X(4, 5))


def tensor_methods(x):
    rows, cols = x.shape
    return (x.sum(), x.sum(axis=1), x.mean(axis=0, keep_dims=True), x.reshape((cols, rows)),
            x.reshape(-1), x.transpose(), x.T, x.astype(ms.int32), x.abs().max(), x.min(),
            x.exp().log(), x.square().sqrt(), x.flatten(), x.expand_dims(0), x.argmax(axis=1),
            x.ndim, x.size, x.dtype == ms.float32, x.shape[1] * 2)


def test_tensor_methods_and_static_metadata():
    graph_vs_pynative(tensor_methods, X(3, 4, start=3.0))


# ---------------------------------------------------------------- ops and primitives -------------
def functional_ops(x, w):
    h = ops.matmul(x, w)
    h = ops.relu(h) + ops.sigmoid(h)
    h = ops.where(h > 1.0, h, ops.zeros_like(h))
    c = ops.concat((h, h * 2), axis=1)
    return ops.sum(c, 1), ops.exp(-ops.square(x)), ops.cast(x, ms.float64), \
        ops.reshape(c, (-1,)), ops.stack([x, x * 2]), ops.maximum(x, 0.5)


def test_ops_functional_calls():
    graph_vs_pynative(functional_ops, X(2, 3), X(3, 4, start=1.0))


class PrimNet(nn.Cell):
    def __init__(self):
        super().__init__()
        self.matmul = ops.MatMul()
        self.matmul_tb = ops.MatMul(transpose_b=True)
        self.reduce = ops.ReduceSum(keep_dims=True)
        self.w = Parameter(X(3, 4, start=0.3), name="w")

    def construct(self, x):
        h = self.matmul(x, self.w)
        g = self.matmul_tb(h, h)
        s = ops.ReduceSum(keep_dims=False)(g, 0)        # a primitive created in construct
        return self.reduce(h, 1), self.reduce(h, (0, 1)), s


def test_primitive_instances():
    graph_vs_pynative(PrimNet(), X(2, 3))


# ---------------------------------------------------------------- print --------------------------
class PrintNet(nn.Cell):
    def construct(self, x):
        y = x * 2
        print("y:", y, "and", 3)
        ops.Print()("ops.Print says", y + 1)
        print("constant only")
        return y


def _expected_print(y_eager, eager_out: str) -> str:
    """What the graph prints, as MindSpore's graph-mode print and ops.Print do: each argument
    on its own line, tensors as Tensor(shape=..., dtype=..., value=[...]) without commas."""
    from minispore.core.tensor import format_printed
    y = y_eager.asnumpy()
    return (f"y:\n{format_printed(y)}\nand\n3\nops.Print says\n{format_printed(y + 1)}\n"
            f"constant only\n")


def test_print_runs_at_every_call_including_cached_calls(capsys):
    net = PrintNet()
    x = X(2, 2)
    ms.set_context(mode=ms.PYNATIVE_MODE)
    y = net(x)
    eager = capsys.readouterr().out
    assert eager.startswith(f"y: {y} and 3\nops.Print says\nTensor(")   # one input a line
    assert eager.endswith("constant only\n")
    ms.set_context(mode=ms.GRAPH_MODE)
    before = dict(graph_compile.stats)
    outs = []
    for _ in range(3):
        net(x)
        outs.append(capsys.readouterr().out)
    assert graph_compile.stats["compiles"] == before["compiles"] + 1
    assert graph_compile.stats["parses"] == before["parses"] + 1
    # each call prints once, with the runtime values (never at compile time only)
    assert outs == [_expected_print(y, eager)] * 3


def test_print_shows_runtime_values_of_each_call(capsys):
    net = PrintNet()
    ms.set_context(mode=ms.GRAPH_MODE)
    net(t([1.0, 2.0]))
    first = capsys.readouterr().out
    before = dict(graph_compile.stats)
    net(t([7.0, 9.0]))               # same signature: cached, new values
    second = capsys.readouterr().out
    assert graph_compile.stats == before
    assert first != second
    ms.set_context(mode=ms.PYNATIVE_MODE)
    y = net(t([7.0, 9.0]))
    assert second == _expected_print(y, capsys.readouterr().out)


# ---------------------------------------------------------------- user code inlined --------------
def helper_scale(v, k=2.0):
    """A module-level helper: parsed and inlined."""
    if k > 1:
        return v * k
    return v


def helper_pair(v):
    return v + 1, v - 1


class Sub(nn.Cell):
    def __init__(self):
        super().__init__()
        self.b = Parameter(t([0.5, -0.5, 1.5]), name="b")

    def construct(self, x, shift=0.0):
        return x + self.b + shift


class UserCode(nn.Cell):
    def __init__(self):
        super().__init__()
        self.sub = Sub()
        self.cells = nn.CellList([Sub(), Sub()])
        self.act = lambda v: ops.relu(v) * 3
        self.factor = 3
        self.dims = (1, 3)
        self.name_ = "net"

    def helper(self, x, n):
        return x * n + self.factor

    def construct(self, x):
        k = 1.5

        def closure(v):
            return v * k + self.factor

        sq = lambda v, p=2: v ** p            # noqa: E731
        a = self.sub(x)
        a = self.sub(a, shift=1.0)
        b = self.cells[0](x) + self.cells[1](a)
        c = helper_scale(x) + helper_scale(x, k=0.5)
        p, m = helper_pair(x)
        d = closure(a) + self.helper(b, 2) + self.act(x) + sq(x) + sq(x, 3)
        e = (lambda v: v - 1)(x)
        e = e.reshape(self.dims) * len(self.name_)
        return a + b + c + d + p * m, e


def test_sub_cells_helpers_closures_methods_lambdas():
    graph_vs_pynative(UserCode(), X(3))


class ConfigNet(nn.Cell):
    def __init__(self):
        super().__init__()
        self.n = 3
        self.shape = (2, 6)
        self.act = "relu"
        self.eps = 1e-3
        self.flags = [True, False]

    def construct(self, x):
        out = x.reshape(self.shape)
        for _ in range(self.n):
            out = out + self.eps
        if self.act == "relu":
            out = ops.relu(out)
        if isinstance(self.n, int) and not isinstance(self.act, int):
            out = out * len(self.shape)
        m = max(self.shape) + min(2, self.n) + abs(-4) + int(2.7) + float(self.n) \
            + bool(self.flags[1]) + sum(range(self.n))
        return out * m, self.shape[1], self.act, m


def test_config_attributes_and_builtins_on_constants():
    graph_vs_pynative(ConfigNet(), X(12))


def test_builtins_on_constants_are_computed_at_compile_time():
    ms.set_context(mode=ms.GRAPH_MODE)
    net = ConfigNet()
    net(X(12))
    (entry,) = graph_compile.cache.entries()
    names = {n.name for n in entry.graph.all_nodes()}
    # only tensor ops remain: the builtins and config arithmetic became constants
    assert names <= {"const", "reshape", "add", "relu", "mul"}, names


def _pair_diff(a, b):
    return a - b


def _make_scaler(s):
    def scaler(v):
        return v * s          # a real closure: s lives in scaler.__closure__
    return scaler


_triple = _make_scaler(3.0)
_square = lambda v: v * v     # noqa: E731


def _countdown(x, n):
    if n == 0:
        return x
    return _countdown(x * 2, n - 1) + 1


def more_call_forms(x):
    pair = (x, x * 2)
    cat = ops.concat((*pair, x), 0)
    a = _pair_diff(*pair) + _pair_diff(**{"a": x, "b": x * 3})
    b = _triple(x) + _square(x) + _countdown(x, 3)
    c = functools.partial(_pair_diff, b=x)(x * 3)      # called natively: plain ops only
    k = 2.0

    def inner(v, s=k, *rest, scale=1.0, **extra):
        return v * s * scale + len(rest) + len(extra)

    k = 5.0                  # defaults were evaluated at the def, as in Python
    d = inner(x) + inner(x, 3.0, 0, 0, scale=2.0, flag=True)
    e = 1 if isinstance(x, Tensor) else 0
    f = 1 if isinstance(x, (int, float)) else 0
    return cat, a, b, c, d * e + f


def test_star_args_kwargs_closures_defaults_recursion():
    graph_vs_pynative(more_call_forms, X(2, 3))


def containers_mutation(x):
    lst = [x, x]
    lst[0] = x * 3
    d = {"a": x}
    d["a"] = x - 1
    d["b"] = 2.0
    y = x * 1
    y[0] += 10
    y[1:, 1] *= 2
    return lst[0] + d["a"] * d["b"] + y


def test_item_assignment_on_lists_dicts_and_augmented_tensor_items():
    graph_vs_pynative(containers_mutation, X(3, 3))


class TwoLambdas(nn.Cell):
    def __init__(self):
        super().__init__()
        self.f, self.g = (lambda v: v + 1), (lambda v: v * 2)   # same line, same parameters

    def construct(self, x):
        return self.f(x), self.g(x)


def test_two_lambdas_on_one_line_are_told_apart():
    graph_vs_pynative(TwoLambdas(), X(3))


_LAMBDAS_IN_A_CALL = dict(double=lambda v: v * 2, shift=lambda v: v - 1,
                          square=lambda v:
                          v * v)                      # a lambda spanning lines of a call too


def test_lambdas_inside_an_expression_spanning_lines():
    """A lambda whose line is no complete statement (an argument of a call that continues on
    the next lines) is found in the parsed file: its source lines alone do not parse."""
    x = X(3)
    for name, want in (("double", x.asnumpy() * 2), ("shift", x.asnumpy() - 1),
                       ("square", x.asnumpy() * x.asnumpy())):
        ms.set_context(mode=ms.GRAPH_MODE)
        got = ms.jit(_LAMBDAS_IN_A_CALL[name])(x)
        np.testing.assert_array_equal(got.asnumpy(), want, err_msg=name)


class Base(nn.Cell):
    def construct(self, x):
        return x * 2

    @staticmethod
    def shift(v):
        return v - 1

    @classmethod
    def kind(cls):
        return cls.__name__


class Derived(Base):
    def construct(self, x):
        return super().construct(x) + self.shift(x) * len(self.kind())


def test_super_staticmethod_and_classmethod():
    graph_vs_pynative(Derived(), X(3))


def return_dict(x):
    return {"double": x * 2, "n": 3}


def test_returning_a_dict():
    graph_vs_pynative(return_dict, X(3))


def print_end(x):
    print("a", x.sum(), sep=", ", end="!\n")
    print("b", end="")
    print("c")
    return x


def test_print_end_keyword(capsys):
    ms.set_context(mode=ms.GRAPH_MODE)
    s = ms.jit(print_end)(t([1.0, 2.0]))
    out = capsys.readouterr().out
    assert s is not None
    assert out.endswith("!\nbc\n"), out


# ---------------------------------------------------------------- parameters ---------------------
class ParamNet(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = Parameter(t([1.0, 2.0, 3.0]), name="w")
        self.steps = Parameter(t(0.0), name="steps", requires_grad=False)

    def construct(self, x):
        return x * self.w + self.steps


def test_parameters_are_read_at_each_call_without_recompiling():
    net = ParamNet()
    x = t([1.0, 1.0, 1.0])
    ms.set_context(mode=ms.GRAPH_MODE)
    np.testing.assert_array_equal(net(x).asnumpy(), [1.0, 2.0, 3.0])
    stats = dict(graph_compile.stats)
    net.w.set_data(t([10.0, 20.0, 30.0]))
    net.steps.set_data(t(5.0))
    graph = net(x).asnumpy()
    assert graph_compile.stats == stats, "set_data must not recompile"
    ms.set_context(mode=ms.PYNATIVE_MODE)
    np.testing.assert_array_equal(graph, net(x).asnumpy())
    np.testing.assert_array_equal(graph, [15.0, 25.0, 35.0])


class AssignNet(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = Parameter(t([1.0, 2.0]), name="w")
        self.count = Parameter(t(0.0), name="count", requires_grad=False)

    def construct(self, x):
        before = self.w * 1
        ops.assign(self.w, self.w * x)
        ops.assign(self.count, self.count + 1)
        after = self.w + 0          # reads the assigned value
        return before, after


def test_ops_assign_lands_after_the_call():
    x = t([2.0, 3.0])
    eager_net, graph_net = AssignNet(), AssignNet()
    ms.set_context(mode=ms.PYNATIVE_MODE)
    eager = [eager_net(x) for _ in range(3)]
    ms.set_context(mode=ms.GRAPH_MODE)
    before = dict(graph_compile.stats)
    graph = [graph_net(x) for _ in range(3)]
    assert graph_compile.stats["compiles"] == before["compiles"] + 1
    for g, e in zip(graph, eager):
        assert_same(g, e)
    np.testing.assert_array_equal(graph_net.w.asnumpy(), [8.0, 54.0])
    np.testing.assert_array_equal(graph_net.w.asnumpy(), eager_net.w.asnumpy())
    np.testing.assert_array_equal(graph_net.count.asnumpy(), 3.0)


class AttrAssignNet(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = Parameter(t([1.0, 2.0]), name="w")

    def construct(self, x):
        self.w = self.w + x
        return self.w * 2


def test_parameter_attribute_assignment_lands_after_the_call():
    x = t([0.5, 0.25])
    eager_net, graph_net = AttrAssignNet(), AttrAssignNet()
    ms.set_context(mode=ms.PYNATIVE_MODE)
    eager = [eager_net(x).asnumpy() for _ in range(2)]
    ms.set_context(mode=ms.GRAPH_MODE)
    graph = [graph_net(x).asnumpy() for _ in range(2)]
    np.testing.assert_array_equal(graph, eager)
    np.testing.assert_array_equal(graph_net.w.asnumpy(), eager_net.w.asnumpy())
    assert isinstance(graph_net.w, Parameter)


def test_jit_function_on_kwargs_and_defaults():
    def f(x, y=None, *, scale=2.0):
        if y is None:
            return x * scale
        return x + y

    graph_vs_pynative(f, X(3))
    graph_vs_pynative(f, X(3), X(3, start=1.0))
    graph_vs_pynative(f, X(3), scale=3.0)


# ---------------------------------------------------------------- rejected forms -----------------
def uses_try(x):
    try:
        y = x + 1
    except ValueError:
        y = x
    return y


def uses_with(x):
    with open(os.devnull):
        y = x + 1
    return y


def uses_yield(x):
    yield x + 1


def uses_del(x):
    y = x + 1
    del y
    return x


_G = 1


def uses_global(x):
    global _G
    _G = 2
    return x


def uses_nonlocal(x):
    k = 1

    def inner(v):
        nonlocal k
        k = 2
        return v * k
    return inner(x)


def uses_class(x):
    class Local:
        pass
    return x


def uses_import(x):
    import math
    return x * math.pi


def uses_from_import(x):
    from math import pi
    return x * pi


def uses_set(x):
    s = {1, 2}
    return x * len(s)


def uses_walrus(x):
    if (n := 3) > 2:
        return x * n
    return x


def uses_fstring(x):
    msg = f"value {x}"
    return x, msg


def uses_asnumpy(x):
    return Tensor(x.asnumpy() * 2)


def uses_float(x):
    return x * float(x.sum())


def uses_bool(x):
    return x * 2 if bool(x.sum() > 0) else x


class _NativeHelper:
    """A callable object: not parsed, so its `if` reads the tensor natively."""

    def __call__(self, v):
        if v.sum() > 0:
            return v
        return -v


_native_helper = _NativeHelper()


def uses_native_if(x):
    return _native_helper(x) + 1


def uses_async_comprehension_set(x):
    return x * len({i for i in range(3)})


REJECTED = [
    (uses_try, "try:", "try/except"),
    (uses_with, "with open", "with"),
    (uses_yield, "yield x + 1", "yield"),
    (uses_del, "del y", "del"),
    (uses_global, "global _G", "global"),
    (uses_nonlocal, "nonlocal k", "nonlocal"),
    (uses_class, "class Local", "class definition"),
    (uses_import, "import math", "import"),
    (uses_from_import, "from math import", "import"),
    (uses_set, "s = {1, 2}", "set literal"),
    (uses_walrus, "(n := 3)", ":="),
    (uses_fstring, 'f"value {x}"', "f-string"),
    (uses_async_comprehension_set, "{i for i", "set comprehension"),
]


@pytest.mark.parametrize("fn,needle,construct", REJECTED, ids=[r[0].__name__ for r in REJECTED])
def test_rejected_syntax_raises_graph_syntax_error(fn, needle, construct):
    err = graph_error(GraphSyntaxError, fn, X(3))
    assert_graph_syntax_error(err, fn, needle, construct)


READS = [
    (uses_asnumpy, "x.asnumpy()"),
    (uses_native_if, "_native_helper(x)"),
]


def test_float_and_bool_of_a_one_element_tensor_are_run_time_scalars():
    # MindSpore converts them at run time (tests/graph/test_mutable.py has more): on ones(3),
    # [3. 3. 3.] and [2. 2. 2.]
    x = Tensor(np.ones(3, np.float32))
    assert ms.jit(uses_float)(x).asnumpy().tolist() == [3.0, 3.0, 3.0]
    assert ms.jit(uses_bool)(x).asnumpy().tolist() == [2.0, 2.0, 2.0]


@pytest.mark.parametrize("fn,needle", READS, ids=[r[0].__name__ for r in READS])
def test_reading_a_tensor_value_while_compiling_is_rejected(fn, needle):
    # at jit_syntax_level STRICT (LAX runs such reads at run time: tests/graph/test_fallback.py)
    ms.set_context(jit_syntax_level=ms.STRICT)
    err = graph_error(GraphSyntaxError, fn, X(3))
    assert_graph_syntax_error(err, fn, needle, "not known while the graph is compiled")
    assert needle in str(err).splitlines()[0], f"the expression is not named:\n{err}"
    # each still runs in PyNative
    ms.set_context(mode=ms.PYNATIVE_MODE)
    fn(X(3))


def test_rejected_syntax_in_a_cell_construct_and_in_a_sub_cell():
    class Inner(nn.Cell):
        def construct(self, x):
            with open(os.devnull):
                pass
            return x

    class Outer(nn.Cell):
        def __init__(self):
            super().__init__()
            self.inner = Inner()

        def construct(self, x):
            return self.inner(x) + 1

    err = graph_error(GraphSyntaxError, Outer(), X(3))
    assert_graph_syntax_error(err, Inner.construct, "with open", "with")


def test_rejected_syntax_in_a_helper_names_the_helper_line():
    err = graph_error(GraphSyntaxError, lambda x: uses_try(x) * 2, X(3))
    assert_graph_syntax_error(err, uses_try, "try:", "try/except")


def test_a_cell_created_inside_construct_is_built_at_compile_time():
    # MindSpore builds a Cell made in construct from constant arguments (tests/graph/
    # test_jit_forms.py has more)
    class Makes(nn.Cell):
        def construct(self, x):
            return Sub()(x)

    ms.set_context(mode=ms.GRAPH_MODE)
    out = Makes()(X(3)).asnumpy()
    ms.set_context(mode=ms.PYNATIVE_MODE)
    np.testing.assert_array_equal(out, Makes()(X(3)).asnumpy())


def test_undefined_name_is_a_name_error_at_the_users_line():
    def f(x):
        return x + undefined_thing       # noqa: F821

    err = graph_error(NameError, f, X(3))
    assert "undefined_thing" in str(err)
    assert_located(err, f, "undefined_thing")


def test_shape_error_in_construct_matches_pynative_plus_the_source_line():
    class Bad(nn.Cell):
        def construct(self, x, y):
            h = x + 1
            return ops.matmul(h, y)

    net, x, y = Bad(), X(2, 3), X(4, 5)
    ms.set_context(mode=ms.PYNATIVE_MODE)
    with pytest.raises(Exception) as eager:
        net(x, y)
    err = graph_error(Exception, net, x, y)
    assert type(err) is type(eager.value)
    eager_msg, graph_msg = str(eager.value), str(err)
    assert graph_msg.startswith(eager_msg.splitlines()[0]), (eager_msg, graph_msg)
    assert_located(err, Bad.construct, "ops.matmul(h, y)")


def test_shape_error_through_matmul_operator_and_primitive():
    class Bad(nn.Cell):
        def __init__(self):
            super().__init__()
            self.mm = ops.MatMul()

        def construct(self, x, y):
            a = x @ y
            return self.mm(a, y)

    net = Bad()
    x, y = X(2, 3), X(3, 3)
    ms.set_context(mode=ms.PYNATIVE_MODE)
    with pytest.raises(Exception) as eager:
        net(x, X(2, 2))
    err = graph_error(Exception, net, x, X(2, 2))
    assert type(err) is type(eager.value)
    assert str(err).startswith(str(eager.value).splitlines()[0])
    assert_located(err, Bad.construct, "a = x @ y")
    graph_vs_pynative(net, x, y)      # and the good shapes work
