"""`mindspore.export(net, *inputs, file_name, file_format, **kwargs)` for file_format="ONNX", and
`mindspore.onnx.export` (onnx_export: the same model with named inputs/outputs and the
Parameters as inputs if asked; minispore/onnx.py exposes it).

The network is compiled the way a GRAPH_MODE call compiles it (the parser over construct, in
inference mode: `net.set_train(False)` for the export, restored after; jit_syntax_level STRICT,
as MindSpore exports), after the optimisation passes (simplify, fold, cse, dce) and before any
backend sees it (no fusion: jit_level O0 while building), whatever the caller's mode. Each node
of that graph becomes ONNX nodes through the mapping in onnx_ops.py / onnx_ops_nn.py; a tensor
`if` (an If node) becomes ONNX If and a tensor loop (a While node) ONNX Loop, their subgraphs
reading the enclosing values by name. A node with no mapping (a print, a Parameter assignment,
a primitive the table refuses) raises NotImplementedError naming it and its source line, so the
exported model never computes something else; a matmul followed by its bias is one Gemm, as
MindSpore writes nn.Dense. Parameters become initializers named by their Parameter names,
inputs are named after construct's arguments with the static shapes and dtypes of the given
inputs, outputs are "output_0", "output_1", ... in the order of the flattened return value. The
model uses opset onnx_ops.OPSET of the default domain. The file is written as MindSpore writes it: ".onnx" appended when missing, a missing
directory created, the file left read-only for its owner. "MINDIR" and "AIR" are refused naming
ONNX as the format minispore writes. Needs the `onnx` package (`pip install "minispore[onnx]"`).
"""
from __future__ import annotations

import inspect
import os
import re
import stat

from ..core import context
from ..core import dtype as dt
from ..core.graph import ir
from ..core.primitive import OpDef
from ..core.tensor import Parameter, Tensor

_FORMATS = ("AIR", "ONNX", "MINDIR")
_PROTO_LIMIT_KB = 2 * 1024 * 1024                  # protobuf's 2 GB message limit
_FILE_NAME = r"^[0-9a-zA-Z@\_\-\.\:\/\\]+$"       # MindSpore's file-name rule
_NO_HALF_WRAP = ("cast", "reshape", "transpose", "broadcast_to", "concat", "split",
                 "strided_slice", "gather", "tile", "stop_gradient", "fill", "fill_like",
                 "arange", "one_hot", "where")
_HALF = (dt.float16, dt.bfloat16)


def _import_onnx():
    try:
        import onnx
    except ImportError as e:
        raise ImportError("ms.export(file_format='ONNX') needs the onnx package: "
                          "pip install \"minispore[onnx]\"") from e
    return onnx


def export(net, *inputs, file_name, file_format, **kwargs):
    """Export `net` run on `inputs` as a model file (MindSpore 2.10's mindspore.export); only
    file_format="ONNX" is written. kwargs: enc_key (bytes) with enc_mode (a callable
    `enc_mode(model_bytes, enc_key) -> bytes`, MindSpore's customized encryption); custom_func
    must be None for ONNX; any other option raises naming it."""
    if "obf_func" in kwargs:
        raise NotImplementedError("Dynamic model structure obfuscation is no longer supported.")
    if file_format not in _FORMATS:
        raise ValueError(f"For 'export', 'file_format' must be one of {list(_FORMATS)}, but got "
                         f"{file_format}.")
    if file_format != "ONNX":
        raise NotImplementedError(
            f"ms.export: file_format={file_format!r} is not supported by minispore; it writes "
            f"file_format='ONNX' only (an ONNX model runs with onnxruntime)")
    _check_file_name(file_name)
    encrypt = _encryption(kwargs)
    if not _is_cell(net):
        raise ValueError(f"Export ONNX format model only support nn.Cell object, but got "
                         f"{type(net)}.")
    if inputs and all(hasattr(i, "create_tuple_iterator") for i in inputs):
        raise NotImplementedError("ms.export(file_format='ONNX'): a Dataset as the input is not "
                                  "supported; pass Tensors of the network's input shapes")
    for t in inputs:
        if isinstance(t, Tensor) and any(d is None or d == -1 for d in t.shape):
            raise ValueError("Export ONNX format model not support dynamic shape mode.")
    _check_size(net)
    model = to_onnx(net, *inputs)
    data = model.SerializeToString()
    if encrypt is not None:
        data = encrypt[1](data, encrypt[0])
    _write(os.path.realpath(file_name), data)


def onnx_export(net, *inputs, file_name, input_names=None, output_names=None,
                export_params=True, keep_initializers_as_inputs=False, dynamic_axes=None):
    """MindSpore 2.10's mindspore.onnx.export: the same model as export(file_format="ONNX"),
    with the inputs and outputs named by `input_names`/`output_names` (lists, in order; the
    rest keep their default names), the Parameters as graph inputs (export_params=False) or
    also listed among them (keep_initializers_as_inputs=True). The file is written as that
    function writes it (".onnx" appended when missing, an ordinary file mode). dynamic_axes is
    refused: the graph is compiled for the given static shapes."""
    _check_file_name(file_name)
    if not _is_cell(net):
        raise ValueError(f"The parameter 'net' must be isinstance of <class "
                         f"'mindspore.nn.cell.Cell'>, but got {net}.")
    for what, value, kind in (("input_names", input_names, list),
                              ("output_names", output_names, list),
                              ("dynamic_axes", dynamic_axes, dict)):
        if value is not None and not isinstance(value, kind):
            raise ValueError(f"The parameter '{what}' must be isinstance of {kind}, but got "
                             f"{value}.")
    if dynamic_axes:
        raise NotImplementedError(
            f"ms.onnx.export: dynamic_axes={dynamic_axes!r} is not supported: minispore "
            f"compiles the graph for the shapes of the given inputs (reshapes and broadcasts "
            f"hold those sizes); export once per input shape instead")
    if inputs and all(hasattr(i, "create_tuple_iterator") for i in inputs):
        raise ValueError("Can not support dataset as inputs to export ONNX model.")
    _check_size(net)
    model = to_onnx(net, *inputs, input_names=input_names, output_names=output_names,
                    export_params=bool(export_params),
                    keep_initializers_as_inputs=bool(keep_initializers_as_inputs))
    path = os.path.abspath(file_name)
    if not path.endswith(".onnx"):
        path += ".onnx"
    folder = os.path.dirname(path)
    if folder and not os.path.exists(folder):
        os.makedirs(folder, exist_ok=True)
    with open(path, "wb") as f:
        f.write(model.SerializeToString())


def _check_size(net) -> None:
    total_kb = sum(p.asnumpy().nbytes for p in net.get_parameters()) / 1024
    if total_kb > _PROTO_LIMIT_KB:
        raise RuntimeError(f"Export onnx model failed. Network size is: {total_kb / 1024 / 1024}G,"
                           f" it exceeded the protobuf: {_PROTO_LIMIT_KB / 1024 / 1024}G limit.")


def _check_file_name(file_name) -> None:
    if not isinstance(file_name, str):
        raise TypeError(f"The '{file_name}' must be string, but got {type(file_name)}.")
    if file_name.endswith(("\\", "/")):
        raise ValueError(f"The '{file_name}' cannot be a directory path.")
    if re.match(_FILE_NAME, file_name) is None:
        raise ValueError(f"The '{file_name}' is illegal, it must be match regular "
                         f"'{_FILE_NAME}'.")


def _encryption(kwargs):
    """(enc_key, enc_mode) when the model is to be encrypted, else None; refuses every option
    ONNX export cannot honour."""
    kwargs = dict(kwargs)
    if kwargs.pop("custom_func", None) is not None:
        raise ValueError("Currently only support custom_func for MindIR format, but got ONNX "
                         "format.")
    enc = None
    if "enc_key" in kwargs:
        key, mode = kwargs.pop("enc_key"), kwargs.pop("enc_mode", "AES-GCM")
        if not isinstance(key, bytes):
            raise TypeError(f"The 'enc_key' must be bytes, but got {type(key)}.")
        if not callable(mode):
            raise ValueError(f"AIR/ONNX only support customized encryption, but got {mode}.")
        enc = (key, mode)
    elif "enc_mode" in kwargs:
        raise ValueError("ms.export: 'enc_mode' needs 'enc_key' (bytes), the key it encrypts "
                         "the model with; pass both or neither")
    if kwargs:
        raise NotImplementedError(
            f"ms.export(file_format='ONNX'): option(s) {sorted(kwargs)} are not supported for "
            f"ONNX ('dataset' and 'incremental' are MINDIR options); remove them")
    return enc


def _is_cell(net) -> bool:
    from ..nn.cell import Cell
    return isinstance(net, Cell)


def _write(path: str, data: bytes) -> None:
    if not path.endswith(".onnx"):
        path += ".onnx"
    if os.path.exists(path):
        os.chmod(path, stat.S_IWUSR)
    else:
        folder = os.path.dirname(path)
        if folder and not os.path.exists(folder):
            os.makedirs(folder, mode=0o700, exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
    os.chmod(path, stat.S_IRUSR)


# ---------------------------------------------------------------- the graph --------------------
def compile_for_export(net, *inputs):
    """The optimized inference graph of `net(*inputs)` and its output tree."""
    from ..core.graph import compile as graph_compile
    from ..nn.cell import _hooked_entry
    from ..core import hooks
    state = context._state
    saved = (net.training, state["jit_level"], state["jit_syntax_level"])
    net.set_train(False)
    state["jit_level"], state["jit_syntax_level"] = "O0", context.STRICT
    try:
        fn = type(net).construct
        fn = getattr(fn, "__wrapped_jit__", fn)
        if "_ms_hooks" in net.__dict__ and hooks.cell_hooks(net) is not None:
            fn = _hooked_entry
        g, tree, _ = graph_compile.build(fn, (net,) + tuple(inputs), {}, True,
                                         type(net).__name__)
    finally:
        net.set_train(saved[0])
        state["jit_level"], state["jit_syntax_level"] = saved[1], saved[2]
    return g, tree


def _input_names(net, inputs, count: int) -> list:
    """construct's argument names for the graph inputs (a tuple argument's tensors: name_0,
    name_1, ...), or input_0, ... where they cannot be matched."""
    try:
        params = list(inspect.signature(type(net).construct).parameters.values())[1:]
    except (TypeError, ValueError):
        params = []
    names: list = []

    def visit(arg, name):
        if isinstance(arg, Parameter):
            return
        if isinstance(arg, Tensor) or type(arg).__module__ == "numpy" and hasattr(arg, "shape"):
            names.append(name)
        elif isinstance(arg, (tuple, list)):
            for i, a in enumerate(arg):
                visit(a, f"{name}_{i}")
    for i, arg in enumerate(inputs):
        p = params[min(i, len(params) - 1)] if params else None
        if p is None or p.kind is p.VAR_KEYWORD:
            visit(arg, f"input_{i}")
        elif p.kind is p.VAR_POSITIONAL:
            visit(arg, f"{p.name}_{i - params.index(p)}")
        else:
            visit(arg, p.name)
    if len(names) != count or len(set(names)) != count:
        names = [f"input_{i}" for i in range(count)]
    return names


def _located(n) -> str:
    return f" at {n.loc.short()}\n{n.loc.caret()}" if n.loc is not None else ""


def _refuse(n, why: str):
    raise NotImplementedError(
        f"ms.export(file_format='ONNX'): the graph's {n.name!r} node{_located(n)}\n{why}; ONNX "
        f"export does not support it yet")


def to_onnx(net, *inputs, input_names=None, output_names=None, export_params=True,
            keep_initializers_as_inputs=False):
    """The onnx.ModelProto of `net(*inputs)` (export() and onnx_export() write it).
    input_names/output_names replace the first default names; export_params=False makes the
    Parameters graph inputs instead of initializers; keep_initializers_as_inputs=True lists them
    among the inputs too (as mindspore.onnx.export does)."""
    onnx = _import_onnx()
    from . import onnx_ops, onnx_ops_nn  # noqa: F401  (onnx_ops_nn registers its converters)
    g, tree = compile_for_export(net, *inputs)
    if any(t[0] == "C" for t in _leaves(tree)):
        raise NotImplementedError("ms.export(file_format='ONNX'): the network returns a Python "
                                  "value (not a Tensor), which an ONNX graph cannot output")
    helper = onnx.helper
    w = onnx_ops.OnnxWriter()
    names: dict = {}
    in_names = _renamed("input_names", _input_names(net, inputs, len(g.inputs)), input_names)
    for v, name in zip(g.inputs, in_names):
        names[v.id] = name
    taken = set(in_names)
    param_inputs = []
    for v, p in g.params:
        if p.name in taken:
            raise ValueError(f"ms.export(file_format='ONNX'): the Parameter name {p.name!r} is "
                             f"also an input name or another Parameter's; give Parameters "
                             f"unique names")
        taken.add(p.name)
        names[v.id] = p.name
        if export_params:
            w.initializer(p.asnumpy(), p.name)
        if keep_initializers_as_inputs or not export_params:
            param_inputs.append(helper.make_tensor_value_info(
                p.name, onnx_ops.onnx_type(v.dtype), list(v.shape)))
    default_out = [f"output_{k}" for k in range(len(g.outputs))]
    out_list = _renamed("output_names", default_out, output_names)
    clash = set(out_list) & taken
    if clash:
        raise ValueError(f"ms.export(file_format='ONNX'): output name(s) {sorted(clash)} are "
                         f"also input or Parameter names; choose other output_names")
    out_names = {}
    for v, name in zip(g.outputs, out_list):
        out_names.setdefault(v.id, name)
    for n in g.nodes:
        _write_node(w, n, names, out_names, onnx_ops)
    outputs = []
    for v, name in zip(g.outputs, out_list):
        if names.get(v.id) != name:                 # an input, a Parameter, a repeated value
            w.add("Identity", [names[v.id]], [name])
        outputs.append(helper.make_tensor_value_info(name, onnx_ops.onnx_type(v.dtype),
                                                     list(v.shape)))
    graph_inputs = [helper.make_tensor_value_info(names[v.id], onnx_ops.onnx_type(v.dtype),
                                                  list(v.shape)) for v in g.inputs]
    nodes = onnx_ops.fuse_gemm_bias(onnx_ops.tidy(w.nodes, {o.name for o in outputs}), w)
    graph = helper.make_graph(nodes, f"{type(net).__name__}_construct",
                              graph_inputs + param_inputs, outputs, initializer=w.initializers)
    from .. import __version__
    model = helper.make_model(graph, producer_name="minispore", producer_version=__version__,
                              opset_imports=[helper.make_opsetid("", onnx_ops.OPSET)])
    model.ir_version = onnx_ops.IR_VERSION
    return model


def _renamed(what: str, defaults: list, given) -> list:
    """`defaults` with its first entries replaced by the names `given` (a list of strs)."""
    if not given:
        return defaults
    if len(given) > len(defaults) or not all(isinstance(x, str) and x for x in given):
        raise ValueError(f"ms.onnx.export: '{what}' must be a list of at most {len(defaults)} "
                         f"non-empty strs (the graph has {len(defaults)}), got {given!r}")
    names = list(given) + defaults[len(given):]
    if len(set(names)) != len(names):
        raise ValueError(f"ms.onnx.export: '{what}' {given!r} repeat a name (the full list is "
                         f"{names}); give each one its own name")
    return names


def _leaves(tree):
    if tree[0] in ("T", "S", "C"):
        yield tree
    elif tree[0] == "dict":
        for _, t in tree[1]:
            yield from _leaves(t)
    else:
        for t in tree[1]:
            yield from _leaves(t)


def _write_node(w, n, names, out_names, onnx_ops):
    from ..core.graph.ir import Value
    if n.op == ir.CONST:
        v = n.outputs[0]
        names[v.id] = w.initializer(n.attr("value"), w.fresh("const"))
        return
    if n.op == ir.IF:
        _write_if(w, n, names, out_names, onnx_ops)
        return
    if n.op == ir.WHILE:
        _write_while(w, n, names, out_names, onnx_ops)
        return
    if not isinstance(n.op, OpDef):
        what = {ir.PRINT: "a print", ir.FUSED: "a fused group"}.get(n.op, "a node of this kind")
        if n.op == ir.ASSIGN:
            what = f"an assignment to the Parameter {n.attr('param').name!r} (a state update)"
        _refuse(n, f"it is {what}")
    conv = onnx_ops.CONVERTERS.get(n.name)
    if conv is None:
        _refuse(n, f"the primitive {n.name!r} has no ONNX mapping"
                + (f" ({onnx_ops.UNSUPPORTED[n.name]})" if n.name in onnx_ops.UNSUPPORTED
                   else ""))
    xs = [names[v.id] for v in n.inputs]
    ys = [out_names.get(v.id) or w.fresh(n.name) for v in n.outputs]
    for v, y in zip(n.outputs, ys):
        names[v.id] = y
    half = [v for v in list(n.inputs) + list(n.outputs) if v.dtype in _HALF]
    if not half or n.name in _NO_HALF_WRAP:
        conv(w, n, xs, ys)
        return

    # minispore computes half-precision ops in float32 and rounds the result once: the same
    def widen(v):
        return Value(v.shape, dt.float32) if v.dtype in _HALF else v
    wide = ir.Node(n.op, [widen(v) for v in n.inputs], n.attrs, [widen(v) for v in n.outputs],
                   n.loc)
    wxs = [w.cast(x, v.dtype, wv.dtype) for x, v, wv in zip(xs, n.inputs, wide.inputs)]
    wys = [w.fresh("wide") if wv is not v else y for y, v, wv in zip(ys, n.outputs, wide.outputs)]
    conv(w, wide, wxs, wys)
    for y, wy, v, wv in zip(ys, wys, n.outputs, wide.outputs):
        if wv is not v:
            w.cast(wy, wv.dtype, v.dtype, out=y)


def _write_if(w, n, names, out_names, onnx_ops):
    """An If node as ONNX If: each branch a subgraph without inputs that reads the enclosing
    values by name (as the IR's branches do); constants go to the main graph's
    initializers."""
    from onnx import helper
    branches = []
    for label, sg in zip(("then", "else"), n.subgraphs):
        sub = w.child()
        for m in sg.nodes:
            _write_node(sub, m, names, {}, onnx_ops)
        outs = []
        for v in sg.outputs:
            y = sub.add("Identity", [names[v.id]], [sub.fresh(f"{label}_out")])
            outs.append(helper.make_tensor_value_info(y, onnx_ops.onnx_type(v.dtype),
                                                      list(v.shape)))
        nodes = onnx_ops.tidy(sub.nodes, {o.name for o in outs})
        branches.append(helper.make_graph(nodes, w.fresh(f"{label}_branch"), [], outs))
    ys = [out_names.get(v.id) or w.fresh("if") for v in n.outputs]
    for v, y in zip(n.outputs, ys):
        names[v.id] = y
    w.add("If", [names[n.inputs[0].id]], ys, then_branch=branches[0], else_branch=branches[1])


def _inline(w, sg, values, names, onnx_ops) -> list:
    """The nodes of subgraph `sg` written into `w` with its inputs bound to `values`; the names
    of its outputs."""
    for v, name in zip(sg.inputs, values):
        names[v.id] = name
    for m in sg.nodes:
        _write_node(w, m, names, {}, onnx_ops)
    return [names[v.id] for v in sg.outputs]


def _write_while(w, n, names, out_names, onnx_ops):
    """A While node as ONNX Loop without a trip count: the condition subgraph is written once
    before the loop (on the initial values) and again at the end of the body (on the next
    values), which gives Loop its cond_out."""
    from onnx import TensorProto, helper
    cond, body = n.subgraphs
    first = _inline(w, cond, [names[v.id] for v in n.inputs], names, onnx_ops)[0]
    sub = w.child()
    carried = [sub.fresh("carried") for _ in n.inputs]
    step, cond_in = sub.fresh("iteration"), sub.fresh("cond_in")
    nxt = _inline(sub, body, carried, names, onnx_ops)
    again = _inline(sub, cond, nxt, names, onnx_ops)[0]
    outs = []
    for name, v in [(again, cond.outputs[0])] + list(zip(nxt, body.outputs)):
        y = sub.add("Identity", [name], [sub.fresh("body_out")])
        outs.append(helper.make_tensor_value_info(y, onnx_ops.onnx_type(v.dtype),
                                                  list(v.shape)))
    ins = [helper.make_tensor_value_info(step, TensorProto.INT64, []),
           helper.make_tensor_value_info(cond_in, TensorProto.BOOL, [])] + \
        [helper.make_tensor_value_info(c, onnx_ops.onnx_type(v.dtype), list(v.shape))
         for c, v in zip(carried, n.inputs)]
    nodes = onnx_ops.tidy(sub.nodes, {o.name for o in outs})
    graph = helper.make_graph(nodes, w.fresh("loop_body"), ins, outs)
    ys = [out_names.get(v.id) or w.fresh("loop") for v in n.outputs]
    for v, y in zip(n.outputs, ys):
        names[v.id] = y
    w.add("Loop", ["", first] + [names[v.id] for v in n.inputs], ys, body=graph)


__all__ = ["export", "onnx_export"]
