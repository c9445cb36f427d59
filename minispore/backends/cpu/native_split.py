"""The native program's kernels: one LLVM function per distinct node computation, compiled once.

A NativeProgram (native_sink.py) is a small *glue* function, `graph`, that computes each node's
buffer addresses and calls the node's kernel, plus one kernel function per distinct node
computation. A kernel is `i32 k_<hash>(i8*, ..., i8*)`: one address argument per input and
output position of the node, then its scratch (the arena at the node's scratch offset) and the
error word, so a call in the glue is one instruction. It is the node's usual lowering
(native_graph.lower_node) emitted into a module of its own over a *twin* of the node (fresh
values of the same shapes and dtypes), so its IR text depends only on the computation: op,
attributes, shapes, dtypes and the 0-d constants the lowering folds into the code. ResNet-50's
1,438 kernel calls are 279 such texts.

Each distinct text is optimised by LLVM on its own (O3, or O2 for a kernel that only moves data:
kernel_speed; a few ms to a few hundred ms: LLVM's
time grows faster than linearly with a function's size, so many small modules cost far less
than one big one), cached on disk by its text (native_jit.py), and shared by every node, every
graph and every process that needs it: a new model links the kernels it has seen before. The
glue is compiled at a low optimisation level (it only computes addresses and calls).

Not split (lowered in the glue, as one function): CONST/ASSIGN and reshape-like aliases of their
input (nothing to emit), tensor If/While (their bodies' nodes are split in turn), Print and host
callbacks (they call back into Python through the glue's table). A glue without If/While has no
loop of its own and is compiled at O0 (ResNet-18's: 0.09 s instead of 0.8 s at O1).

A kernel's run-time index checks return its own error codes 1..k; the glue adds the node's base
so that the program's `errors` list (one IndexCheck per code, native_sink.NativeProgram._check)
holds every node's checks in order; a node with checks is lowered each time (its checks name its
own source line).

Lowering a node costs ~2.5 ms of Python (llvmlite builds and prints the IR), so a node is not
lowered again when its *signature* was seen: the op (a registered one, or a fused expression),
its attributes, each position's shape, dtype and identity pattern, the folded constants and the
lowering's tunables (threads, thresholds: `_environment`), with the version of the code that
lowers (a hash of this package's backend and core sources). Seen in this process: the Kernel is
reused; seen in an earlier one: its text is read from the disk cache (`native_kernels/`, keyed
by the signature). A signature that cannot be formed (an attribute of a type `_canon` does not
know) just lowers the node. MINISPORE_KERNEL_KEY_CHECK=1 (the test suite sets it) lowers every
node anyway and raises when a signature's kernel differs from the node's own text: a signature
missing something that changes the code cannot go unnoticed.
"""
from __future__ import annotations

import functools
import hashlib
import os
import re
from dataclasses import fields, is_dataclass
from pathlib import Path

import numpy as np
from llvmlite import ir as L

from ...core import dtype as dt
from ...core import scalar_expr as E
from ...core.graph import ir
from ...core.primitive import REGISTRY, OpDef
from . import kernel_cache
from .native_emit import I8, I32, Emitter, const

P8 = I8.as_pointer()


def kernel_type(n_args: int) -> L.FunctionType:
    """`i32 (i8*, ..., i8*)`: a kernel takes each address as an argument of its own."""
    return L.FunctionType(I32, [P8] * n_args)


_ARITHMETIC = re.compile(r"\b(fadd|fsub|fmul|fdiv|frem|fneg|fcmp)\b|\bcall (?!void @\"?llvm\.memcpy)")


def kernel_speed(text: str) -> int:
    """LLVM's level for a kernel: 3, or 2 for one that only moves data (loads, stores, memcpy
    and their addresses: a concat of a sequence's 64 steps written as 64 copy loops took O3
    30-50 s for copies no faster than O2's, which took 1 s)."""
    return 3 if _ARITHMETIC.search(text) else 2


def glue_speed(g: ir.Graph) -> int:
    """LLVM's level for graph g's glue: 0 (addresses and calls only), 1 when it holds the loops
    of a tensor If/While (their copies of the carried values)."""
    return 1 if any(n.op in (ir.IF, ir.WHILE) for n in g.all_nodes()) else 0


class Kernel:
    """One distinct kernel: its function name, its module's IR text and its error sites' count."""
    __slots__ = ("name", "text", "n_errors")

    def __init__(self, name: str, text: str, n_errors: int):
        self.name, self.text, self.n_errors = name, text, n_errors


def _twin(n: ir.Node) -> ir.Node:
    """n over fresh values, so that the kernel names nothing of the graph; a value read at two
    positions stays one value (a lowering may see it: x @ x.T is a syrk)."""
    fresh: dict = {}

    def twin(v):
        if v.id not in fresh:
            fresh[v.id] = ir.Value(v.shape, v.dtype)
        return fresh[v.id]
    return ir.Node(n.op, [twin(v) for v in n.inputs], n.attrs, [twin(v) for v in n.outputs],
                   n.loc, n.subgraphs)


def lower_kernel(n: ir.Node, scalars: dict, triple: str, lower_node):
    """(Kernel, its error sites): node n lowered alone into a module of its own by
    `lower_node(emitter, node)` (native_graph's). `scalars` maps the ids of n's 0-d constant
    inputs to their values (folded into the code, as in one function)."""
    twin = _twin(n)
    module = L.Module(name="kernel")
    module.triple = triple
    vals = twin.inputs + twin.outputs
    fn = L.Function(module, kernel_type(len(vals) + 2), "kernel")
    slots: dict = {}
    for k, v in enumerate(vals):
        slots.setdefault(v.id, k)
    slots["arena"], slots["error"] = len(vals), len(vals) + 1
    folded = {t.id: scalars[v.id] for v, t in zip(n.inputs, twin.inputs) if v.id in scalars}
    e = Emitter(None, module, fn, slots, {twin: 0}, {}, scalars=folded, direct=True)
    lower_node(e, twin)
    e.finish()
    text = str(module)
    digest = hashlib.sha256(text.encode()).hexdigest()[:24]
    name = f"k_{digest}"
    text = text.replace('@"kernel"(', f'@"{name}"(', 1)
    return Kernel(name, text, len(e.errors)), e.errors


class _Uncanonical(Exception):
    """An attribute value without a canonical form: the node is lowered, not looked up."""


def _canon(v):
    """A hashable value that determines v exactly (floats by their bits, arrays by content)."""
    if v is None or isinstance(v, (bool, int, str)):
        return (type(v).__name__, v)
    if isinstance(v, float):
        return ("float", v.hex())
    if isinstance(v, (tuple, list)):
        return (type(v).__name__, tuple(_canon(x) for x in v))
    if isinstance(v, dict):
        return ("dict", tuple(sorted((repr(k), _canon(x)) for k, x in v.items())))
    if isinstance(v, (np.ndarray, np.generic)):
        a = np.asarray(v)
        return ("nd", a.dtype.str, a.shape, a.tobytes())
    if isinstance(v, dt.DType):
        return ("dtype", str(v))
    if isinstance(v, E.Expr):
        return ("expr", v.op, _canon(v.args))
    if isinstance(v, OpDef):
        if REGISTRY.get(v.name) is not v:
            raise _Uncanonical(v)
        return ("op", v.name)
    if is_dataclass(v) and not isinstance(v, type):
        return (type(v).__qualname__,) + tuple(_canon(getattr(v, f.name)) for f in fields(v))
    raise _Uncanonical(v)


@functools.lru_cache(maxsize=1)
def _code_version() -> str:
    """A hash of the sources that lower a node (the CPU backend and the core): a kernel text
    read back by signature was written by this code."""
    root = Path(__file__).resolve().parents[2]
    h = hashlib.sha256()
    for sub in ("backends/cpu", "core"):
        for path in sorted((root / sub).rglob("*.py")):
            h.update(path.relative_to(root).as_posix().encode())
            h.update(path.read_bytes())
    return h.hexdigest()[:24]


def _environment() -> tuple:
    """What a lowering reads besides the node: the tunables (tests and users may change them),
    the BLAS libraries' integer width (a numpy or scipy of another build) and the IR printer's
    version."""
    import llvmlite
    from . import native_jit, native_lower, native_windows
    return (native_jit.threads(), native_lower.INTERLEAVE, native_lower.PARALLEL_MIN_CHEAP,
            native_lower.PARALLEL_MIN_TRANSCENDENTAL, native_windows.UNROLL_PLANE,
            native_jit.blas_int_bits("numpy"), native_jit.blas_int_bits("scipy"),
            llvmlite.__version__)


def signature(n: ir.Node, scalars: dict):
    """The signature of node n's kernel (see the module docstring), or None."""
    if n.op == ir.FUSED:
        head = "fused"
    elif isinstance(n.op, OpDef) and REGISTRY.get(n.op.name) is n.op:
        head = n.op.name
    else:
        return None
    try:
        attrs = _canon(tuple((k, v) for k, v, *_ in n.attrs))
        folded = tuple(_canon(scalars[v.id]) if v.id in scalars else None for v in n.inputs)
    except _Uncanonical:
        return None
    first: dict = {}
    places = tuple((v.shape, str(v.dtype), first.setdefault(v.id, len(first)))
                   for v in n.inputs + n.outputs)
    return repr((head, attrs, places, len(n.inputs), folded, _environment()))


def _check_keys() -> bool:
    return os.environ.get("MINISPORE_KERNEL_KEY_CHECK", "0") == "1"


_MEMO: dict = {}        # signature -> Kernel, this process


def kernel_of(n: ir.Node, scalars: dict, triple: str, lower_node):
    """(Kernel, error sites) of node n: by its signature when seen before (in this process, or
    on disk), else lowered (and remembered)."""
    sig = signature(n, scalars)
    kernel = None
    if sig is not None:
        key = f"{_code_version()}|{triple}|{sig}"
        kernel = _MEMO.get(key)
        if kernel is None:
            blob = kernel_cache.load("native_kernels", key, ".ll")
            if blob is not None:
                head, text = blob.decode().split("\n", 1)
                name, n_errors = head.split()
                kernel = _MEMO[key] = Kernel(name, text, int(n_errors))
    if kernel is not None and not kernel.n_errors and not _check_keys():
        return kernel, []
    lowered, sites = lower_kernel(n, scalars, triple, lower_node)
    if kernel is not None and kernel.text != lowered.text:
        raise AssertionError(f"kernel signature of node '{n.name}' misses something that "
                             f"changes its code: {sig[:300]}")
    if sig is not None and kernel is None:
        _MEMO[key] = lowered
        kernel_cache.store("native_kernels", key,
                           f"{lowered.name} {lowered.n_errors}\n{lowered.text}".encode(), ".ll")
    return lowered, sites


class KernelTable:
    """The distinct kernels of one program, in first-use order, and the glue's calls to them."""

    def __init__(self, triple: str, lower_node):
        self.triple, self.lower_node = triple, lower_node
        self.kernels: dict = {}            # name -> Kernel
        self.calls = 0

    def emit_call(self, e: Emitter, n: ir.Node):
        """In the glue emitter e: fill an argument array with n's addresses and call n's kernel;
        a nonzero result returns the node's error code from the glue."""
        kernel, sites = kernel_of(n, {v.id: e.scalars[v.id] for v in n.inputs
                                      if v.id in e.scalars}, self.triple, self.lower_node)
        kernel = self.kernels.setdefault(kernel.name, kernel)
        self.calls += 1
        m, b = e.m, e.b
        ptrs = [e.raw_ptr(v) for v in list(n.inputs) + list(n.outputs)]
        ptrs.append(e.scratch(n, I8) if n in e.offsets else L.Constant(P8, None))
        ptrs.append(e.error_word_i8())
        fn = m.globals.get(kernel.name) or L.Function(m, kernel_type(len(ptrs)), kernel.name)
        rc = b.call(fn, ptrs)
        if kernel.n_errors:
            e.forward_errors(rc, sites)
