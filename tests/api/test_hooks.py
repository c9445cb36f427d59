"""Cell forward/backward hooks, ops.HookBackward and Tensor.register_hook against MindSpore 2.10.

The expected values were observed running the same scripts with MindSpore 2.10 on CPU (its
PyNative and GRAPH_MODE: all four Cell hook kinds run in both modes there; HookBackward and a
Tensor.register_hook made inside a graph are not called in GRAPH_MODE)."""
from __future__ import annotations

import numpy as np
import pytest

import minispore as ms
from minispore import Tensor, nn, ops


class Affine(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = ms.Parameter(Tensor(np.array([2.0, 3.0], np.float32)), name="w")

    def construct(self, x, y):
        return x * self.w + y


class Inner(nn.Cell):
    def construct(self, x):
        return x * 2


class Outer(nn.Cell):
    def __init__(self):
        super().__init__()
        self.inner = Inner()

    def construct(self, x):
        return self.inner(x) + 1


X = np.array([1.0, 1.0], np.float32)
Y = np.array([0.5, 0.5], np.float32)


def _vals(gs):
    return [g.asnumpy().tolist() for g in gs]


def test_forward_hooks_replace_inputs_and_output_and_remove():
    net, seen = Affine(), []

    def pre(cell, inputs):
        seen.append(("pre", type(cell).__name__, len(inputs)))
        return (inputs[0] * 2, inputs[1])

    def fwd(cell, inputs, output):
        seen.append(("fwd", output.asnumpy().tolist()))
        return output + 1
    h1, h2 = net.register_forward_pre_hook(pre), net.register_forward_hook(fwd)
    out = net(Tensor(X), Tensor(Y))
    assert out.asnumpy().tolist() == [5.5, 7.5]            # MindSpore: [5.5 7.5]
    assert seen == [("pre", "Affine", 2), ("fwd", [4.5, 6.5])]
    h1.remove()
    h2.remove()
    h2.remove()                                            # a second remove does nothing
    assert net(Tensor(X), Tensor(Y)).asnumpy().tolist() == [2.5, 3.5]


def test_forward_pre_hook_non_tuple_result_is_the_only_input():
    net = Affine()
    net.register_forward_pre_hook(lambda cell, inputs: inputs[0] * 10)
    with pytest.raises(TypeError, match="y"):                # MindSpore: missing argument 'y'
        net(Tensor(X), Tensor(Y))


def test_with_kwargs_and_prepend():
    net, seen = Affine(), []
    net.register_forward_pre_hook(lambda c, a, k: seen.append((len(a), sorted(k))),
                                  with_kwargs=True)
    net.register_forward_hook(lambda c, a, k, o: seen.append("fwd-kw"), with_kwargs=True)
    net.register_forward_hook(lambda c, a, o: seen.append("first"), prepend=True)
    out = net(Tensor(X), y=Tensor(Y))
    assert out.asnumpy().tolist() == [2.5, 3.5]
    assert seen == [(1, ["y"]), "first", "fwd-kw"]


def test_forward_pre_hook_with_kwargs_must_return_args_and_kwargs():
    net = Affine()
    net.register_forward_pre_hook(lambda c, a, k: a[0], with_kwargs=True)
    with pytest.raises(RuntimeError, match="new_args, new_kwargs"):
        net(Tensor(X), Tensor(Y))


def test_always_call_forward_hook_runs_when_construct_raises():
    class Bad(nn.Cell):
        def construct(self, x):
            raise ValueError("boom")
    seen = []
    net = Bad()
    net.register_forward_hook(lambda c, a, o: seen.append(o), always_call=True)
    net.register_forward_hook(lambda c, a, o: seen.append("not always"))
    with pytest.raises(ValueError, match="boom"):
        net(Tensor(X))
    assert seen == [None]


def test_hook_fn_must_be_callable():
    with pytest.raises(TypeError, match="callable"):
        Affine().register_forward_hook(3)


def test_backward_hooks_pynative():
    net, seen = Affine(), []

    def bh(cell, grad_input, grad_output):
        seen.append(("bh", _vals(grad_input), _vals(grad_output)))
        return (grad_input[0] * 100, grad_input[1])

    def bph(cell, grad_output):
        seen.append(("bph", _vals(grad_output)))
        return (grad_output[0] * 3,)
    x, y = Tensor(X), Tensor(Y)
    hb = net.register_backward_hook(bh)
    g = ms.grad(net, grad_position=(0, 1))(x, y)
    assert _vals(g) == [[200.0, 300.0], [1.0, 1.0]]        # MindSpore's values
    assert seen == [("bh", [[2.0, 3.0], [1.0, 1.0]], [[1.0, 1.0]])]
    seen.clear()
    hbp = net.register_backward_pre_hook(bph)
    g, (gw,) = ms.grad(net, grad_position=(0, 1), weights=net.trainable_params())(x, y)
    assert _vals(g) == [[600.0, 900.0], [3.0, 3.0]]
    assert gw.asnumpy().tolist() == [3.0, 3.0]            # the weights see the new grad_output
    assert seen == [("bph", [[1.0, 1.0]]), ("bh", [[6.0, 9.0], [3.0, 3.0]], [[3.0, 3.0]])]
    hb.remove()
    assert _vals(ms.grad(net, grad_position=(0, 1))(x, y)) == [[6.0, 9.0], [3.0, 3.0]]
    hbp.remove()
    assert _vals(ms.grad(net, grad_position=(0, 1))(x, y)) == [[2.0, 3.0], [1.0, 1.0]]


def test_backward_hook_runs_on_every_step_of_a_loop():
    """A tape with a hook is walked eagerly: the hook's side effect happens every backward."""
    net, calls = Affine(), []
    net.register_backward_pre_hook(lambda c, go: calls.append(1))
    f = ms.grad(net, grad_position=0)
    for _ in range(6):
        g = f(Tensor(X), Tensor(Y))
    assert len(calls) == 6 and g.asnumpy().tolist() == [2.0, 3.0]


def _pre10(cell, inputs):
    return (inputs[0] * 10,)


def _fwd10(cell, inputs, output):
    return output * 10


def _bwd10(cell, grad_input, grad_output):
    return (grad_input[0] * 10,)


def _bpre10(cell, grad_output):
    return (grad_output[0] * 10,)


# (where, kind, hook) -> MindSpore's forward and gradient of Outer at x = [1, 2], both modes
CASES = [("top", "forward_pre", _pre10, [21.0, 41.0], [20.0, 20.0]),
         ("top", "forward", _fwd10, [30.0, 50.0], [20.0, 20.0]),
         ("inner", "forward_pre", _pre10, [21.0, 41.0], [20.0, 20.0]),
         ("inner", "forward", _fwd10, [21.0, 41.0], [20.0, 20.0]),
         ("top", "backward", _bwd10, [3.0, 5.0], [20.0, 20.0]),
         ("inner", "backward", _bwd10, [3.0, 5.0], [20.0, 20.0]),
         ("inner", "backward_pre", _bpre10, [3.0, 5.0], [20.0, 20.0])]


@pytest.mark.parametrize("where,kind,hook,fwd,grad", CASES,
                         ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_hooks_in_both_modes(mode, where, kind, hook, fwd, grad):
    net = Outer()
    cell = net if where == "top" else net.inner
    handle = getattr(cell, f"register_{kind}_hook")(hook)
    x = Tensor(np.array([1.0, 2.0], np.float32))
    assert net(x).asnumpy().tolist() == fwd
    assert ms.grad(net)(x).asnumpy().tolist() == grad
    handle.remove()                                        # a compiled graph is not reused
    assert net(x).asnumpy().tolist() == [3.0, 5.0]
    assert ms.grad(net)(x).asnumpy().tolist() == [2.0, 2.0]


def test_hook_registered_after_a_graph_compiled_recompiles():
    ms.set_context(mode=ms.GRAPH_MODE)
    net = Outer()
    x = Tensor(np.array([1.0, 2.0], np.float32))
    assert net(x).asnumpy().tolist() == [3.0, 5.0]
    h = net.inner.register_forward_hook(_fwd10)
    assert net(x).asnumpy().tolist() == [21.0, 41.0]
    h.remove()
    assert net(x).asnumpy().tolist() == [3.0, 5.0]


def test_tensor_register_hook_inside_the_function():
    def hook_fn(grad):
        return grad * 2

    def f(x, y):
        z = x * y
        z.register_hook(hook_fn)
        return z * y
    g = ms.grad(f, grad_position=(0, 1))(Tensor(1, ms.float32), Tensor(2, ms.float32))
    assert _vals(g) == [8.0, 6.0]                          # MindSpore PyNative: (8, 6)


def test_tensor_register_hook_inside_a_graph(capsys):
    ms.set_context(mode=ms.GRAPH_MODE)

    def hook_fn(grad):
        print("hook", grad)
        return grad * 2

    def f(x, y):
        z = x * y
        same = z.register_hook(hook_fn)          # in a graph: the Tensor itself
        return same * y
    g = ms.grad(f, grad_position=(0, 1))(Tensor(1, ms.float32), Tensor(2, ms.float32))
    assert _vals(g) == [8.0, 6.0]                          # MindSpore GRAPH_MODE: (8, 6)
    assert capsys.readouterr().out == "hook\n2\n"
    g = ms.grad(ms.jit(f), grad_position=(0, 1))(Tensor(1, ms.float32), Tensor(2, ms.float32))
    assert _vals(g) == [8.0, 6.0]                          # MindSpore: (8, 6)
    out = ms.jit(f)(Tensor(1, ms.float32), Tensor(2, ms.float32))   # no gradient: no hook
    assert out.asnumpy().item() == 4.0


def test_tensor_register_hook_on_an_input_and_remove(mode):
    def f(x, y):
        return x * y * y
    x, y = Tensor(1, ms.float32), Tensor(2, ms.float32)
    h = x.register_hook(lambda g: g * 2)
    g = ms.grad(f, grad_position=(0, 1))
    for _ in range(2):                                   # GRAPH_MODE: compiled, then cached
        assert _vals(g(x, y)) == [8.0, 4.0]              # MindSpore, both modes: (8, 4)
    h.remove()
    assert _vals(g(x, y)) == [4.0, 4.0]


def test_tensor_hook_on_an_input_runs_in_the_graph(capsys):
    ms.set_context(mode=ms.GRAPH_MODE)

    def hook_fn(grad):
        print("hook got", grad)
        return grad * 2
    x = Tensor(1, ms.float32)
    x.register_hook(hook_fn)
    assert ms.grad(lambda a: a * 4)(x).asnumpy().item() == 8.0
    assert capsys.readouterr().out == "hook got\n4\n"    # MindSpore's graph-mode print


def test_hook_backward_pynative():
    x, y = Tensor(1, ms.float32), Tensor(2, ms.float32)
    seen = []

    def hb(grads):
        seen.append(len(grads))
        return grads[0] * 3
    hk = ops.HookBackward(hb)
    g = ms.grad(lambda a, b: hk(a * b) * b, grad_position=(0, 1))(x, y)
    assert _vals(g) == [12.0, 8.0] and seen == [1]          # MindSpore: (12, 8)
    hk2 = ops.HookBackward(lambda gs: (gs[0] * 3, gs[1]))

    def f2(a, b):
        p, q = hk2(a, b)
        return p * q
    assert _vals(ms.grad(f2, grad_position=(0, 1))(x, y)) == [6.0, 1.0]   # MindSpore: (6, 1)
    assert hk2(x, y)[1].asnumpy().item() == 2.0 and hk(x).asnumpy().item() == 1.0
    bad = ops.HookBackward(lambda gs: gs)                   # one input: must return a Tensor
    with pytest.raises(TypeError, match="should be a tensor"):
        ms.grad(lambda a: bad(a) * 2)(x)
    none = ops.HookBackward(lambda gs: None)                 # None: the gradient unchanged
    assert ms.grad(lambda a, b: none(a * b) * b)(x, y).asnumpy().item() == 4.0


def test_hook_backward_graph_mode_passes_through():
    ms.set_context(mode=ms.GRAPH_MODE)
    hk = ops.HookBackward(lambda gs: gs[0] * 3)
    x, y = Tensor(1, ms.float32), Tensor(2, ms.float32)
    with pytest.warns(UserWarning, match="HookBackward"):
        g = ms.grad(lambda a, b: hk(a * b) * b, grad_position=(0, 1))(x, y)
    assert _vals(g) == [4.0, 4.0]                            # MindSpore GRAPH_MODE: (4, 4)


W = ms.Parameter(Tensor(np.array([2.0, 3.0], np.float32)), name="w_hooked")


def _dot_w(t):                          # a plain function: no Cell call keys its graph
    return (t * W).sum()


def test_parameter_hook_registered_and_removed_around_a_compiled_gradient(mode):
    x = Tensor(np.array([1.0, 2.0], np.float32))
    f = ms.value_and_grad(_dot_w, None, (W,))
    assert _vals(f(x)[1]) == [[1.0, 2.0]]
    h = W.register_hook(lambda g: g * 10)
    for _ in range(2):
        assert _vals(f(x)[1]) == [[10.0, 20.0]]          # MindSpore: [10, 20]
    h.remove()
    assert _vals(f(x)[1]) == [[1.0, 2.0]]                # MindSpore PyNative: [1, 2]


def test_hook_backward_inside_jit_in_pynative_is_a_graph():
    hk = ops.HookBackward(lambda gs: gs[0] * 3)

    def f(a, b):
        return hk(a * b) * b
    x, y = Tensor(1, ms.float32), Tensor(2, ms.float32)
    with pytest.warns(UserWarning, match="HookBackward"):
        g = ms.grad(ms.jit(f), grad_position=(0, 1))(x, y)
    assert _vals(g) == [4.0, 4.0]                  # MindSpore: (4, 4), the hook not called
    assert _vals(ms.grad(f, grad_position=(0, 1))(x, y)) == [12.0, 8.0]


def test_cell_backward_hook_inside_a_jit_construct():
    class Scaled(nn.Cell):
        def __init__(self):
            super().__init__()
            self.inner = Inner()

        @ms.jit
        def construct(self, x):
            return self.inner(x) + 1
    net = Scaled()
    net.inner.register_backward_hook(_bwd10)
    assert ms.grad(net)(Tensor(np.array([1.0, 2.0], np.float32))).asnumpy().tolist() == \
        [20.0, 20.0]                                # MindSpore PyNative: [20, 20]


def test_registering_a_cell_hook_inside_a_graph_is_refused():
    ms.set_context(mode=ms.GRAPH_MODE)

    class Registers(nn.Cell):
        def __init__(self):
            super().__init__()
            self.inner = Inner()

        def construct(self, x):
            self.inner.register_forward_hook(_fwd10)
            return self.inner(x)
    with pytest.raises(RuntimeError, match="register_forward_hook' is not supported in "
                                           "'construct'"):           # MindSpore's message
        Registers()(Tensor(np.array([1.0], np.float32)))
