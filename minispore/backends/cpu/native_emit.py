"""Emitting LLVM IR for the native sink: buffers, loops and scalar expressions.

`Emitter` writes one function of a native program with llvmlite.ir: typed pointers to the
program's buffers (a slot of the caller's table, or an offset in the arena), computed once in the
entry block; counted loops and loop nests over static shapes, and loops split over pthreads
(native_threads.py); stack slots hoisted to the entry block; dtype conversions with numpy's
semantics (float->int truncates, a float's truth is `!= 0`, float16/bfloat16 stored as their
bits and converted by native_half.py); and scalar_expr trees rendered to IR in a float or
integer compute type, with the transcendentals of core/scalar_math.py as llvm_math.py renders
them (the same IR vecmath's numba kernels run) and numba's `//`, `%` and constant-divisor
semantics of native_arith.py. The per-node lowerings that use it are the family modules of
native_registry.py.
"""
from __future__ import annotations

from contextlib import contextmanager

from llvmlite import ir as L

from ...core import dtype as dt
from ...core import scalar_expr as E
from ...core import scalar_math
from ...core.graph import ir
from ...core.shape import size_of
from . import native_half, native_threads
from .native_arith import div_f32_by_constant, int_divmod, real_divmod
from .native_half import HALF
from .native_int_pow import int_power


class NativeUnsupported(NotImplementedError):
    """The native sink has no lowering for something in this graph (it then runs kernel by
    kernel, as O1)."""


I1, I8, I32, I64 = L.IntType(1), L.IntType(8), L.IntType(32), L.IntType(64)
F32, F64 = L.FloatType(), L.DoubleType()
I16 = L.IntType(16)
P8 = I8.as_pointer()
# float16 and bfloat16 are stored as their bits (i16) and computed in float32 (native_half.py)
STORAGE = {dt.float32: F32, dt.float64: F64, dt.int32: I32, dt.int64: I64, dt.bool_: I8,
           dt.int8: I8, dt.uint8: I8, dt.int16: I16, dt.float16: I16, dt.bfloat16: I16,
           dt.uint16: I16, dt.uint32: I32, dt.uint64: I64}
FLOAT = {dt.float32: F32, dt.float64: F64}
# the unsigned dtypes share their signed twins' storage: compares, divisions, widenings and
# conversions to float are the unsigned instructions (icmp ult, udiv, zext, uitofp) for them
UNSIGNED = (dt.uint8, dt.uint16, dt.uint32, dt.uint64)
INTS = (dt.int8, dt.int16, dt.int32, dt.int64) + UNSIGNED
_MATH = scalar_math.names("decomposed")
_INTRINSIC = {name: name for name in scalar_math.names("intrinsic")}
_CMP = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "=="}


def is_float(ty) -> bool:
    return ty in (F32, F64)


def const(v, ty=I64):
    return L.Constant(ty, v)


def compute_dtype(d: dt.DType) -> dt.DType:
    """The dtype the eager CPU kernels compute a value of dtype d in: float32 for the half
    dtypes (elementwise.py cpu_np), d itself otherwise."""
    return dt.float32 if d in HALF else d


def storage(d: dt.DType):
    """The LLVM type an element of dtype d is stored as (bool: i8)."""
    if d not in STORAGE:
        raise NativeUnsupported(f"dtype {d}")
    return STORAGE[d]


class Emitter:
    """Writes one function: `slots` maps value ids to the caller's table, `offsets` value ids
    (and nodes, for their scratch) to arena offsets, `alias` value ids to the value whose
    storage they share."""

    def __init__(self, graph: ir.Graph | None, module: L.Module, fn: L.Function, slots: dict,
                 offsets: dict, alias: dict, scalars: dict | None = None, direct: bool = False):
        self.g, self.m, self.fn = graph, module, fn
        # pointers and allocas go in `entry` (dominating every use, allocas hoisted); the code
        # starts in `start`; finish() joins them
        self.entry = fn.append_basic_block("entry")
        self.b = L.IRBuilder(fn.append_basic_block("start"))
        self.slots, self.offsets, self.alias = slots, offsets, alias
        self.ptrs: dict = {}
        self.raws: dict = {}
        # direct: slot k is the function's argument k (a kernel, native_split.py); else the
        # function's first argument is the table of slots
        self.direct = direct
        self._bufs = None if direct else fn.args[0]
        self._arena = None
        self.errors: list = []            # the IndexCheck whose failure is error code k + 1
        self.error_offset = None          # arena byte offset of the failed check's value (i64)
        # 0-d constants of the graph (or the given ones): a load of one is the constant itself,
        # so LLVM folds it and scalar() sees divisors known at compile time
        self.scalars = scalars if scalars is not None else {
            n.outputs[0].id: n.attr("value") for n in graph.all_nodes()
            if n.op == ir.CONST and not n.outputs[0].shape and n.outputs[0].dtype in STORAGE}
        self.kernels = None               # native_split.KernelTable: split nodes are calls
        self.unroll = True                # False: loops carry llvm.loop.unroll.disable

    def finish(self):
        """Return (0: success, for a function returning i32) and join entry to the code."""
        if self.fn.function_type.return_type == I32:
            self.b.ret(const(0, I32))
        else:
            self.b.ret_void()
        start = self.fn.blocks[1]
        with self.b.goto_block(self.entry):
            self.b.branch(start)

    def fail_index(self, cond, site, value):
        """When `cond` (i1) holds, store `value` (i64, the offending index) at the arena's error
        word and return error code k + 1 from this i32 function; the caller raises
        site.error(value) (site: an IndexCheck, NativeProgram.errors). Nothing is assigned
        then."""
        if self.fn.function_type.return_type != I32 or (self.error_offset is None
                                                         and "error" not in self.slots):
            raise NativeUnsupported("a run-time index check inside a loop split over threads")
        self.errors.append(site)
        b = self.b
        bad, ok = b.append_basic_block("fail"), b.append_basic_block("ok")
        b.cbranch(cond, bad, ok)
        b.position_at_end(bad)
        b.store(value, b.bitcast(self.error_word_i8(), I64.as_pointer()))
        b.ret(const(len(self.errors), I32))
        b.position_at_end(ok)

    def error_word_i8(self):
        """The address of the error word a failed check stores its value at: a kernel's
        argument, or the program's arena at error_offset."""
        if "error" in self.slots:
            return self._slot_ptr(self.slots["error"])
        with self.at_entry() as b:
            return b.gep(self.arena(), [const(self.error_offset)])

    def forward_errors(self, rc, sites: list):
        """After a call of a kernel whose checks are `sites` (its codes 1..len(sites)) returned
        rc: return rc + the codes this function had so far when rc is nonzero."""
        base = len(self.errors)
        self.errors.extend(sites)
        b = self.b
        bad, ok = b.append_basic_block("fail"), b.append_basic_block("ok")
        b.cbranch(b.icmp_signed("!=", rc, const(0, I32)), bad, ok)
        b.position_at_end(bad)
        b.ret(b.add(rc, const(base, I32)))
        b.position_at_end(ok)

    def fresh_name(self, prefix: str) -> str:
        """A function name not yet used in this module: prefix_0, prefix_1, ... (so that a
        module's text does not depend on value ids)."""
        k = 0
        while f"{prefix}_{k}" in self.m.globals:
            k += 1
        return f"{prefix}_{k}"

    # -- buffers ----------------------------------------------------------------------------------
    @contextmanager
    def at_entry(self):
        with self.b.goto_block(self.entry):
            yield self.b

    def _slot_ptr(self, k: int):
        if self.direct:
            return self.fn.args[k]
        with self.at_entry() as b:
            return b.load(b.gep(self._bufs, [const(k)]))

    def table(self):
        """The i8** table of this function's slots, which the chunk functions of a parallel
        loop read: the caller's, or a direct kernel's arguments stored once in its entry."""
        if self._bufs is None:
            with self.at_entry() as b:
                t = b.alloca(L.ArrayType(I8.as_pointer(), len(self.fn.args)))
                for k, a in enumerate(self.fn.args):
                    b.store(a, b.gep(t, [const(0, I32), const(k, I32)]))
                self._bufs = b.bitcast(t, I8.as_pointer().as_pointer())
        return self._bufs

    def slot_value(self, key):
        """The raw pointer in the caller's table at `key`'s slot (a callback's address)."""
        return self._slot_ptr(self.slots[key])

    def raw_ptr(self, v: ir.Value):
        """The i8* address of v's first byte (computed once, in the entry block)."""
        v = self.alias.get(v.id, v)
        p = self.raws.get(v.id)
        if p is None:
            if v.id in self.slots:
                p = self._slot_ptr(self.slots[v.id])
            else:
                arena = self.arena()
                with self.at_entry() as b:
                    p = b.gep(arena, [const(self.offsets[v.id])])
            self.raws[v.id] = p
        return p

    def ptr(self, v: ir.Value):
        """Typed pointer to v's first element (computed once, in the entry block)."""
        v = self.alias.get(v.id, v)
        p = self.ptrs.get(v.id)
        if p is None:
            raw = self.raw_ptr(v)
            with self.at_entry() as b:
                p = b.bitcast(raw, storage(v.dtype).as_pointer())
            self.ptrs[v.id] = p
        return p

    def arena(self):
        if self._arena is None:
            self._arena = self._slot_ptr(self.slots["arena"])
        return self._arena

    def scratch(self, key, ty):
        arena = self.arena()
        with self.at_entry() as b:
            return b.bitcast(b.gep(arena, [const(self.offsets[key])]), ty.as_pointer())

    def alloca(self, ty):
        with self.at_entry() as b:
            return b.alloca(ty)

    def copy(self, src: ir.Value, dst: ir.Value, src_ptr=None, dst_ptr=None):
        """dst = src element by element (same size and dtype); a typed pointer given as src_ptr
        or dst_ptr stands for that side's buffer."""
        b = self.b
        sp = src_ptr if src_ptr is not None else self.ptr(src)
        dp = dst_ptr if dst_ptr is not None else self.ptr(dst)
        with self.loop(size_of(dst.shape)) as i:
            b.store(b.load(b.gep(sp, [i])), b.gep(dp, [i]))

    def copy_blocks(self, src: ir.Value, src_at, dst: ir.Value, dst_at, count: int,
                    elements: int):
        """`count` blocks of `elements` contiguous elements (same dtype), block k from element
        src_at(k) of src to element dst_at(k) of dst (k an IR or Python int; each *_at an IR
        or Python int): one llvm.memcpy per block, in a loop when there are many. A copy kernel
        so compiles in milliseconds at any level and runs at memcpy's speed."""
        if count <= 0 or elements <= 0:
            return
        b = self.b
        size = src.dtype.itemsize
        memcpy = self.m.declare_intrinsic("llvm.memcpy", [P8, P8, I64])

        def block(k):
            def addr(v, at):
                off = at(k)
                off = b.mul(off, const(size)) if isinstance(off, L.Value) else const(off * size)
                return b.gep(self.raw_ptr(v), [off])
            b.call(memcpy, [addr(dst, dst_at), addr(src, src_at), const(elements * size),
                            L.Constant(I1, 0)])
        if count <= 8:
            for k in range(count):
                block(k)
        else:
            with self.loop(count) as k:
                block(k)

    def load(self, v: ir.Value, idx):
        if v.id in self.scalars:
            x = self.scalars[v.id]
            if v.dtype in HALF:
                return L.Constant(I16, native_half.bits(v.dtype, x))
            ty = storage(v.dtype)
            return L.Constant(ty, float(x) if is_float(ty) else int(x))
        return self.b.load(self.b.gep(self.ptr(v), [idx]))

    def store(self, val, v: ir.Value, idx):
        self.b.store(val, self.b.gep(self.ptr(v), [idx]))

    # -- control ----------------------------------------------------------------------------------
    @contextmanager
    def loop(self, n, start=0, step=1, interleave: int = 0, vectorize: bool = True):
        """A counted loop; yields the index. `interleave` > 1 asks LLVM's vectoriser to run that
        many vector iterations side by side (loop metadata llvm.loop.interleave.count): a
        transcendental's long dependency chain leaves the FP pipes idle otherwise, and the
        vectoriser's cost model picks 1 for such register-hungry bodies. `vectorize=False`
        tells the loop vectoriser to leave the loop alone (llvm.loop.vectorize.enable false):
        for a body of straight-line code it cannot widen, where its analysis alone took half of
        O3's time on a conv kernel."""
        b = self.b
        pre = b.block
        head, body, done = (b.append_basic_block(s) for s in ("head", "body", "done"))
        b.branch(head)
        b.position_at_end(head)
        i = b.phi(I64)
        i.add_incoming(start if isinstance(start, L.Value) else const(start), pre)
        b.cbranch(b.icmp_signed("<", i, n if isinstance(n, L.Value) else const(n)), body, done)
        b.position_at_end(body)
        yield i
        i.add_incoming(b.add(i, const(step)), b.block)
        latch = b.branch(head)
        if interleave > 1 or not vectorize or not self.unroll:
            latch.set_metadata("llvm.loop", self._loop_md(interleave, vectorize))
        b.position_at_end(done)

    @contextmanager
    def loops_kept_rolled(self):
        """The loops emitted inside are not unrolled by LLVM (llvm.loop.unroll.disable): for
        code whose time is in the BLAS calls between its copy loops (the convolutions), where
        O3's full unrolling of constant trip counts doubled the compile time and bought
        nothing measurable at run time."""
        old, self.unroll = self.unroll, False
        try:
            yield
        finally:
            self.unroll = old

    def _loop_md(self, interleave: int, vectorize: bool = True):
        m = self.m
        props = []
        if not self.unroll:
            props.append(m.add_metadata([L.MetaDataString(m, "llvm.loop.unroll.disable")]))
        if interleave > 1:
            props.append(m.add_metadata([L.MetaDataString(m, "llvm.loop.interleave.count"),
                                         const(interleave, I32)]))
        if not vectorize:
            props.append(m.add_metadata([L.MetaDataString(m, "llvm.loop.vectorize.enable"),
                                         const(0, I1)]))
        md = m.add_metadata(props)
        md.operands = (md,) + md.operands       # a loop ID refers to itself (LangRef)
        return md

    @contextmanager
    def nest(self, shape, interleave: int = 0):
        """Loops over `shape` (row-major); yields the index list. `interleave` is the innermost
        loop's (see loop)."""
        with _Nest(self, shape, interleave) as idx:
            yield idx

    def parallel(self, name: str, n: int, threads: int, emit_chunk):
        """Run a loop over [0, n) on `threads` threads: `emit_chunk(emitter, lo, hi)` writes the
        loop into a new function `void name(i8** bufs, i64 lo, i64 hi)`; the calling thread and
        threads - 1 pthreads (created and joined here: tens of us, paid only by loops of
        millions of elements) take chunks of ~n / (8 * threads) elements from a shared atomic
        counter until none is left, so a thread slowed by another process leaves its share to
        the others. A thread that cannot be created just takes no chunk."""
        m, b = self.m, self.b
        PP = I8.as_pointer().as_pointer()
        cty = L.FunctionType(L.VoidType(), [PP, I64, I64])
        chunk = L.Function(m, cty, name)
        chunk.linkage = "internal"
        ce = Emitter(self.g, m, chunk, self.slots, self.offsets, self.alias, self.scalars)
        emit_chunk(ce, chunk.args[1], chunk.args[2])
        ce.finish()
        size = max(4096, -(-n // (8 * threads) // 64) * 64)   # multiples of 64 elements
        worker = native_threads.worker(m)
        create = m.globals.get("pthread_create") or L.Function(m, L.FunctionType(
            I32, [I8.as_pointer(), I8.as_pointer(), worker.type, I8.as_pointer()]),
            "pthread_create")
        join = m.globals.get("pthread_join") or L.Function(m, L.FunctionType(
            I32, [I64, I8.as_pointer().as_pointer()]), "pthread_join")
        task, counter = self.alloca(native_threads.TASK), self.alloca(I64)
        b.store(const(0), counter)
        for k, v in enumerate((b.bitcast(chunk, I8.as_pointer()), self.table(), counter,
                               const(n), const(size))):
            b.store(v, b.gep(task, [const(0, I32), const(k, I32)]))
        arg = b.bitcast(task, I8.as_pointer())
        started = []
        for _ in range(threads - 1):
            tid = self.alloca(I64)
            rc = b.call(create, [b.bitcast(tid, I8.as_pointer()),
                                 L.Constant(I8.as_pointer(), None), worker, arg])
            started.append((b.icmp_signed("==", rc, const(0, I32)), tid))
        b.call(worker, [arg])
        for ok, tid in started:
            with b.if_then(ok):
                b.call(join, [b.load(tid), L.Constant(I8.as_pointer().as_pointer(), None)])

    def blas(self, T, routine: str, lib: str = "numpy"):
        """(declared function, integer type of its dimensions) of CBLAS ?<routine> (gemm, gemv,
        dot, syrk) of numpy's OpenBLAS (np.matmul's) or, lib="scipy", scipy's (numba's np.dot's),
        bound by native_jit as minispore_s<routine> / minispore_scipy_s<routine> etc."""
        from . import native_jit
        IT = L.IntType(native_jit.blas_int_bits(lib))
        name = f"minispore_{'scipy_' if lib == 'scipy' else ''}{'s' if T == F32 else 'd'}{routine}"
        fn = self.m.globals.get(name)
        if fn is None:
            P = T.as_pointer()
            args = {"gemm": [I32, I32, I32, IT, IT, IT, T, P, IT, P, IT, T, P, IT],
                    "gemv": [I32, I32, IT, IT, T, P, IT, P, IT, T, P, IT],
                    "dot": [IT, P, IT, P, IT],
                    "syrk": [I32, I32, I32, IT, IT, T, P, IT, T, P, IT]}[routine]
            fn = L.Function(self.m, L.FunctionType(T if routine == "dot" else L.VoidType(),
                                                   args), name)
        return fn, IT

    def gemm(self, T, ta: bool, tb: bool, M: int, N: int, K: int, A, lda: int, B, ldb: int,
             C, ldc: int, lib: str = "numpy"):
        """C (M x N, row-major, leading dimension ldc) = op(A) @ op(B) through CBLAS ?gemm (of
        `lib`, see blas); A, B, C are typed pointers, op transposes when ta/tb. The caller skips
        empty products (M, N or K = 0)."""
        fn, IT = self.blas(T, "gemm", lib)
        self.b.call(fn, [const(101, I32), const(112 if ta else 111, I32),
                         const(112 if tb else 111, I32), const(M, IT), const(N, IT),
                         const(K, IT), L.Constant(T, 1.0), A, const(lda, IT), B, const(ldb, IT),
                         L.Constant(T, 0.0), C, const(ldc, IT)])

    def flat_index(self, idx, strides):
        b, acc = self.b, const(0)
        for i, s in zip(idx, strides):
            if s:
                acc = b.add(acc, b.mul(i, const(s)))
        return acc

    def intrinsic(self, name, args):
        ty = args[0].type
        fn = self.m.declare_intrinsic(f"llvm.{name}", [ty])
        return self.b.call(fn, args)

    # -- scalar values ----------------------------------------------------------------------------
    def convert(self, x, src: dt.DType, dst: dt.DType):
        """A loaded value of dtype `src` (i1 for a computed bool) as dtype `dst`'s storage, as
        numpy's astype converts (a half value through float32, exactly; into a half dtype from
        float64 and integers by way of float64, from the rest by way of float32, rounded once:
        native_half.py)."""
        b = self.b
        quiet = src is dt.bfloat16            # ml_dtypes' casts of a bfloat16 quiet its NaN
        if src in HALF and x.type != I1:
            if src is dst:
                return x
            wide = dt.float64 if dst is dt.float64 else dt.float32
            x, src = native_half.widen(b, x, src, STORAGE[wide]), wide
        if dst in HALF:
            wide = dt.float64 if src is dt.float64 or src in INTS else dt.float32
            return native_half.narrow(b, self.convert(x, src, wide), dst, quiet)
        if x.type == I1:
            src = dt.bool_
        elif src is dt.bool_:
            x = b.icmp_unsigned("!=", x, const(0, I8))
        if src is dst and x.type != I1:
            return x
        to = STORAGE[dst]
        if dst is dt.bool_:
            t = b.fcmp_unordered("!=", x, L.Constant(x.type, 0.0)) if src.is_float else \
                x if x.type == I1 else b.icmp_signed("!=", x, L.Constant(x.type, 0))
            return b.zext(t, I8)
        if src is dt.bool_:
            return b.uitofp(x, to) if dst.is_float else b.zext(x, to)
        if src.is_float and dst.is_float:
            return b.fpext(x, to) if to == F64 else b.fptrunc(x, to)
        if src.is_float:          # C's (type)x: a narrow integer takes the low bits of an i32
            if dst is dt.uint32:              # x86-64's (uint32)x: the low bits of an i64
                return b.trunc(b.fptosi(x, I64), to)
            if dst is dt.uint64:              # x86-64's (uint64)x: from 2**63 on, x - 2**63
                top = L.Constant(x.type, float(1 << 63))
                high = b.xor(b.fptosi(b.fsub(x, top), I64), const(-(1 << 63)))
                return b.select(b.fcmp_ordered(">=", x, top), high, b.fptosi(x, I64))
            return b.fptosi(x, to) if to.width >= 32 else b.trunc(b.fptosi(x, I32), to)
        unsigned = src in UNSIGNED
        if dst.is_float:
            return b.uitofp(x, to) if unsigned else b.sitofp(x, to)
        w_src, w_dst = x.type.width, to.width
        if w_src == w_dst:
            return x
        if w_dst < w_src:
            return b.trunc(x, to)
        return b.zext(x, to) if unsigned else b.sext(x, to)

    def as_num(self, x, T):
        """x (T, or an i1 bool) as T."""
        if x.type == T:
            return x
        if x.type == I1:
            return self.b.uitofp(x, T) if is_float(T) else self.b.zext(x, T)
        raise NativeUnsupported(f"mixed types in an expression ({x.type} and {T})")

    def truth(self, x):
        if x.type == I1:
            return x
        if is_float(x.type):
            return self.b.fcmp_unordered("!=", x, L.Constant(x.type, 0.0))
        return self.b.icmp_signed("!=", x, L.Constant(x.type, 0))

    def scalar(self, e: E.Expr, xs: list, T, signed=True):
        """Render scalar_expr `e` with argument values xs in type T, a float or an integer type
        (bools are i1; `signed` says how integers compare)."""
        b, op, a = self.b, e.op, e.args
        fl = is_float(T)
        if op == "arg":
            return xs[a[0]]
        if op == "const":
            v = a[0]
            if isinstance(v, bool):
                return const(int(v), I1)
            if not fl and float(v) != int(v):
                raise NativeUnsupported(f"constant {v!r} in integer arithmetic")
            return L.Constant(T, float(v) if fl else int(v))
        if op in ("add", "sub", "mul", "div", "pow"):
            x, y = (self.scalar(z, xs, T, signed) for z in a)
            if x.type == I1 and y.type == I1 and op in ("add", "mul"):
                # bool + bool is True unless both are False and bool * bool is logical and,
                # as in every other backend (an i1 add would wrap: 1 + 1 = 0)
                return b.or_(x, y) if op == "add" else b.and_(x, y)
            if T == I1:
                raise NativeUnsupported(f"bool '{op}'")
            x, y = self.as_num(x, T), self.as_num(y, T)
            if not fl:
                if op == "pow" and signed and T.width < 64:    # numba's int_power_impl
                    return int_power(b, self.m, x, y, T)
                if op in ("div", "pow"):
                    raise NativeUnsupported(f"integer '{op}'")
                return {"add": b.add, "sub": b.sub, "mul": b.mul}[op](x, y)
            if op == "pow":
                fn = self.m.declare_intrinsic("llvm.pow", [T])
                return b.call(fn, [x, y])
            if op == "div" and T == F32 and isinstance(y, L.Constant):
                return div_f32_by_constant(b, x, y)
            return {"add": b.fadd, "sub": b.fsub, "mul": b.fmul, "div": b.fdiv}[op](x, y)
        if op in ("floordiv", "mod", "shl", "shr"):
            x, y = (self.as_num(self.scalar(z, xs, T, signed), T) for z in a)
            if fl:
                if op in ("shl", "shr"):
                    raise NativeUnsupported(f"float '{op}'")
                q, r = real_divmod(b, x, y, self.m.declare_intrinsic("llvm.floor", [T]))
                return q if op == "floordiv" else r
            if T.width < 64:        # numba computes narrower integers' // % << >> in 64 bits
                ext = b.sext if signed else b.zext
                x, y = ext(x, I64), ext(y, I64)
            if op in ("shl", "shr"):              # numba's int_shl_impl / int_shr_impl
                z = b.shl(x, y) if op == "shl" else (b.ashr(x, y) if signed else b.lshr(x, y))
            else:
                q, r = int_divmod(b, x, y, signed)
                z = q if op == "floordiv" else r
            return z if z.type == T else b.trunc(z, T)
        if op == "bnot" and not fl:
            x = self.scalar(a[0], xs, T, signed)
            return b.xor(x, L.Constant(x.type, 1 if x.type == I1 else -1))
        if op in ("band", "bor", "bxor") and not fl:
            x, y = (self.scalar(z, xs, T, signed) for z in a)
            if x.type != y.type:
                x, y = self.as_num(x, T), self.as_num(y, T)
            return {"band": b.and_, "bor": b.or_, "bxor": b.xor}[op](x, y)
        if op in _CMP or op == "ne":
            x, y = (self.scalar(z, xs, T, signed) for z in a)
            if x.type == I1 and y.type == I1:
                return b.icmp_unsigned(_CMP.get(op, "!="), x, y)
            x, y = self.as_num(x, T), self.as_num(y, T)
            if not fl:
                cmp = b.icmp_signed if signed else b.icmp_unsigned
                return cmp(_CMP.get(op, "!="), x, y)
            return b.fcmp_unordered("!=", x, y) if op == "ne" else \
                b.fcmp_ordered(_CMP[op], x, y)
        if op in ("and", "or"):
            x, y = (self.truth(self.scalar(z, xs, T, signed)) for z in a)
            return b.and_(x, y) if op == "and" else b.or_(x, y)
        if op == "not":
            return b.xor(self.truth(self.scalar(a[0], xs, T, signed)), const(1, I1))
        if op == "neg":
            x = self.as_num(self.scalar(a[0], xs, T, signed), T)
            return b.fneg(x) if fl else b.neg(x)
        if op == "where":
            c = self.truth(self.scalar(a[0], xs, T, signed))
            x, y = self.scalar(a[1], xs, T, signed), self.scalar(a[2], xs, T, signed)
            if not (x.type == I1 and y.type == I1):
                x, y = self.as_num(x, T), self.as_num(y, T)
            return b.select(c, x, y)
        if op == "isnan" and not fl:            # an integer is never NaN (minimum/maximum's
            return const(0, I1)                 # NaN rule on integer tensors)
        if op == "fabs" and not fl:     # numba's abs of an integer: -x below 0 (MIN stays MIN)
            x = self.as_num(self.scalar(a[0], xs, T, signed), T)
            return b.select(b.icmp_signed("<", x, L.Constant(x.type, 0)), b.neg(x), x) \
                if signed else x
        if not fl:
            raise NativeUnsupported(f"integer scalar op '{op}'")
        if op == "isnan":
            x = self.as_num(self.scalar(a[0], xs, T), T)
            return b.fcmp_unordered("uno", x, x)
        if op in _INTRINSIC:
            return self.intrinsic(_INTRINSIC[op], [self.as_num(self.scalar(a[0], xs, T), T)])
        if op in _MATH:
            from .llvm_math import math_fn
            return b.call(math_fn(self.m, op, T), [self.as_num(self.scalar(a[0], xs, T), T)])
        raise NativeUnsupported(f"scalar op '{op}'")

class _Nest:
    def __init__(self, e: Emitter, shape, interleave: int = 0):
        self.e, self.shape, self.cms, self.interleave = e, shape, [], interleave

    def __enter__(self):
        idx = []
        for k, d in enumerate(self.shape):
            cm = self.e.loop(d, interleave=self.interleave if k == len(self.shape) - 1 else 0)
            idx.append(cm.__enter__())
            self.cms.append(cm)
        return idx

    def __exit__(self, *exc):
        for cm in reversed(self.cms):
            cm.__exit__(*exc)
        return False
