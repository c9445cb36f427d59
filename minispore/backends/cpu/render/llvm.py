"""The LLVM renderer: a traced loop definition emitted into a native sink function.

`emit(e, definition, params, buffers, scratch_key)` traces the definition and writes its
statements with native_emit.Emitter `e`: `buffers` binds each input and output name to
(ir.Value of the graph, the static shape the definition sees it as: a row-major view of the
value); every extent is then a number, a load or store indexes the value's flat storage, scalar
variables are stack slots (promoted to registers by LLVM), and the scratch buffers lie one after
the other in the arena region of `scratch_key`, each 8-byte aligned (`scratch_bytes` says its
size).

Values are typed as numba types the numba rendering: a load has its buffer's dtype, a constant
is an int64 or float64 literal, the operands of a binary operation are converted to their
unified dtype (`unify`: float32 with float32 stays float32, float32 with a float literal is
float64), `f64`/`i64` convert as Emitter.convert (numpy's rules), an assignment converts to the
variable's dtype and a store to its buffer's (float64 -> float32 rounds to nearest);
comparisons are ordered but `!=` (true for a NaN), `maximum(a, b)` selects b where b > a, the
transcendentals are core/scalar_math's as llvm_math renders them (the IR vecmath's numba kernels
run too). A scalar argument is bound by `scalars` (name -> number) and is a constant of its
declared dtype (an int64 one may size an output); `libm(name, x)` calls llvm.<name> (the C
library's function, which numba's math.<name> calls too); a uint64 value is an i64 (add and mul
wrap, `>>` is lshr, `%` urem, f64 uitofp); an output of a declared dtype stores converted to
the bound value's dtype. A `fail_if` is Emitter.fail_index: the program returns the error code
of the IndexCheck bound to its site by `sites`.
"""
from __future__ import annotations

from llvmlite import ir as L

from ....core import dtype as dt
from ....core import scalar_expr as E
from ....core import scalar_math
from ....core.shape import size_of
from ..loops.builder import Assign, Definition, Fail, Loop, Program, Store
from ..loops.builder import When
from ..native_emit import F64, FLOAT, STORAGE, Emitter, NativeUnsupported, const, storage

_CMP = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}
_ARITH = {"add": ("fadd", "add"), "sub": ("fsub", "sub"), "mul": ("fmul", "mul"),
          "div": ("fdiv", None)}
_MATH = scalar_math.names("decomposed")
U64 = dt.DType("UInt64", "uint64", "u", 0)       # the protocol's unsigned 64-bit words
_CASTS = {"float64": dt.float64, "float32": dt.float32, "int64": dt.int64, "uint64": U64}


def _static(ex: E.Expr, shapes: dict):
    """The int value of an expression of dims and integer constants (None otherwise)."""
    op, a = ex.op, ex.args
    if op == "dim":
        return shapes[a[0].name][a[1]]
    if op == "const" and isinstance(a[0], int) and not isinstance(a[0], bool):
        return a[0]
    if op == "scalar" and a[1] == "int64":
        return shapes.get(a[0])
    if op in ("add", "mul"):
        x, y = _static(a[0], shapes), _static(a[1], shapes)
        if x is not None and y is not None:
            return x + y if op == "add" else x * y
    if op in ("sub", "mod"):
        x, y = _static(a[0], shapes), _static(a[1], shapes)
        if x is not None and y is not None and (op == "sub" or y > 0):
            return x - y if op == "sub" else x % y
    return None


def _shapes(prog: Program, buffers: dict, scalars=None) -> dict:
    shapes = {v.name: int((scalars or {})[v.name]) for v in prog.scalars if v.dtype == "int64"}
    for b in prog.inputs:
        shape = tuple(buffers[b.name][1])
        if len(shape) != b.rank:
            raise ValueError(f"{prog.definition.name}: {b.name} bound with shape {shape}")
        shapes[b.name] = shape
    for b in prog.outputs + prog.scratch:
        shapes[b.name] = tuple(_static(s, shapes) for s in b.shape)
        if None in shapes[b.name]:
            raise ValueError(f"{prog.definition.name}: the shape of {b.name} is not a sum or "
                             "product of input dims and integers")
    return shapes


def scratch_bytes(definition: Definition, params: dict, shapes: dict, scalars=None) -> int:
    """Arena bytes of the definition's scratch buffers with inputs of `shapes` (name -> shape)
    and int64 scalars `scalars`."""
    prog = definition.trace(**params)
    sizes = _shapes(prog, {k: (None, v) for k, v in shapes.items()}, scalars)
    return sum(_scratch_words(s, sizes[s.name]) * 8 for s in prog.scratch)


def _scratch_dtype(buf) -> dt.DType:
    return dt.to_dtype(buf.dtype or "float64")


def _scratch_words(buf, shape) -> int:
    """8-byte words of scratch buffer buf of `shape` (each buffer starts 8-byte aligned)."""
    return -(-size_of(shape) * _scratch_dtype(buf).itemsize // 8)


class _Render:
    def __init__(self, e: Emitter, prog: Program, buffers: dict, scratch_key, scalars=None,
                 read_as=None):
        self.e, self.b = e, e.b
        # input name -> the dtype the definition reads it as (each load converted, as the
        # eager caller converts the array before its kernel); an output like= such an input
        # is of that dtype, each store converted to it and then to the bound value's dtype
        self.read_as = dict(read_as or {})
        self.declared = {o.name: self.read_as[o.like.name] for o in prog.outputs
                         if o.like is not None and o.like.name in self.read_as}
        self.shapes = _shapes(prog, buffers, scalars)
        self.scalars = {v.name: (scalars or {})[v.name] for v in prog.scalars}
        self.values = {name: v for name, (v, _) in buffers.items()}
        for o in prog.outputs:           # indexed as declared: a view of the bound value
            v, shape = buffers[o.name]
            if size_of(shape) != size_of(self.shapes[o.name]):
                raise ValueError(f"{prog.definition.name}: output {o.name} bound to {v}")
            if o.like is not None and v.dtype is not self.values[o.like.name].dtype \
                    and o.name not in self.declared:
                raise NativeUnsupported(f"{prog.definition.name}: {o.name} of {v.dtype}")
        self.scratch = {}
        if sum(size_of(self.shapes[s.name]) for s in prog.scratch):
            base, at = e.scratch(scratch_key, F64), 0
            for s in prog.scratch:
                p = self.b.gep(base, [const(at)]) if at else base
                ty = FLOAT[_scratch_dtype(s)].as_pointer()
                self.scratch[s.name] = p if ty == F64.as_pointer() else self.b.bitcast(p, ty)
                at += _scratch_words(s, self.shapes[s.name])
        else:                           # empty scratch buffers: their loops never run
            self.scratch = {s.name: L.Constant(FLOAT[_scratch_dtype(s)].as_pointer(), None)
                            for s in prog.scratch}
        self.slots: dict = {}           # variable name -> (stack slot, dtype)
        self.index: dict = {}           # loop index name -> i64 value

    # -- statements -------------------------------------------------------------------------------
    def block(self, body: list):
        for st in body:
            if isinstance(st, Loop):
                n = self._to(*self.value(st.extent), dt.int64)
                start = 0 if st.start is None else self._to(*self.value(st.start), dt.int64)
                with self.e.loop(n, start=start, step=st.step) as i:
                    self.index[st.index.name] = i
                    self.block(st.body)
                    del self.index[st.index.name]
            elif isinstance(st, Assign):
                held = self.slots.get(st.var.name)
                v, d = self.value(st.value)
                if held is None:
                    held = self.slots[st.var.name] = (self.e.alloca(v.type), d)
                if unify(held[1], d) is not held[1]:
                    raise NativeUnsupported(f"variable {st.var.name}: {held[1]} and {d}")
                self.b.store(self._to(v, d, held[1]), held[0])
            elif isinstance(st, When):
                with self.b.if_then(self.e.truth(self.value(st.cond)[0])):
                    self.block(st.body)
            elif isinstance(st, Store):
                v, vd = self.value(st.value)
                if st.buf.name in self.declared:
                    v, vd = self.e.convert(v, vd, self.declared[st.buf.name]), \
                        self.declared[st.buf.name]
                self._store(self.e.convert(v, vd, self._dtype(st.buf)), st.buf, st.index)
            elif isinstance(st, Fail):
                bad = self.e.truth(self.value(st.cond)[0])
                site = self.sites.get(st.site)
                if site is None:
                    raise ValueError(f"LLVM loop renderer: check site {st.site!r} is not bound")
                self.e.fail_index(bad, site, self._to(*self.value(st.value), dt.int64))
            else:
                raise TypeError(f"LLVM loop renderer: unknown statement {st!r}")

    def _dtype(self, buf):
        if buf.name in self.read_as:
            return self.read_as[buf.name]
        return _scratch_dtype(buf) if buf.role == "scratch" else self.values[buf.name].dtype

    def _flat(self, buf, index):
        """The row-major flat i64 index of `index` in buf's (static) shape."""
        shape, flat = self.shapes[buf.name], const(0)
        for k, i in enumerate(index):
            iv = self.e.convert(*self.value(i), dt.int64)
            stride = size_of(shape[k + 1:])
            term = iv if stride == 1 else self.b.mul(iv, const(stride))
            flat = term if k == 0 else self.b.add(flat, term)
        return flat

    def _load(self, buf, index):
        flat = self._flat(buf, index)
        if buf.role == "scratch":
            return self.b.load(self.b.gep(self.scratch[buf.name], [flat]))
        v = self.values[buf.name]
        if buf.name in self.read_as:
            return self.e.convert(self.e.load(v, flat), v.dtype, self.read_as[buf.name])
        return self.e.load(v, flat)

    def _store(self, val, buf, index):
        flat = self._flat(buf, index)
        if buf.role == "scratch":
            self.b.store(val, self.b.gep(self.scratch[buf.name], [flat]))
        else:
            self.e.store(val, self.values[buf.name], flat)

    # -- expressions: (llvm value, dtype) ---------------------------------------------------------
    def value(self, ex: E.Expr):
        """Render `ex`: (LLVM value, its dtype), typed as numba types the numba rendering."""
        b, op, a = self.b, ex.op, ex.args
        if op == "const":
            v = a[0]
            d = dt.bool_ if isinstance(v, bool) else dt.float64 if isinstance(v, float) else \
                dt.int64
            if d is dt.bool_:
                return const(int(bool(v)), L.IntType(1)), d
            return L.Constant(storage(d), float(v) if d.is_float else int(v)), d
        n = _static(ex, self.shapes) if op in ("dim", "add", "mul", "sub", "mod") else None
        if n is not None:
            return const(n), dt.int64
        if op == "index":
            return self.index[ex.name], dt.int64
        if op == "var":
            slot, d = self.slots[ex.name]
            return b.load(slot), d
        if op == "load":
            return self._load(a[0], a[1]), self._dtype(a[0])
        if op == "scalar":
            d = _CASTS[a[1]]
            v = self.scalars[a[0]]
            return L.Constant(storage(d) if d is not U64 else STORAGE[dt.int64],
                              float(v) if d.is_float else int(v) & 0xFFFFFFFFFFFFFFFF), d
        if op == "libm":
            x, d = self.value(a[1])
            if d not in FLOAT:
                raise NativeUnsupported(f"libm {a[0]} of {d}")
            fn = self.e.m.declare_intrinsic(f"llvm.{a[0]}", [FLOAT[d]])
            return b.call(fn, [x]), d
        if op == "within":
            (x, d), (n, _) = self.pair(a[0], a[1])
            if d.is_float or d is dt.bool_:
                raise NativeUnsupported(f"within of {d}")
            zero = L.Constant(x.type, 0)
            return b.and_(b.icmp_signed(">=", x, zero), b.icmp_signed("<", x, n)), dt.bool_
        if op == "like":
            x, d = self.value(a[0])
            to = self._dtype(a[1])
            return self._to(x, d, to), to
        if op == "cast":
            x, d = self.value(a[0])
            to = _CASTS[a[1]]
            return self._to(x, d, to), to
        if op in ("not", "isnan", "neg") or op in _MATH:
            x, d = self.value(a[0])
            if op == "not":
                return b.xor(self.e.truth(x), const(1, L.IntType(1))), dt.bool_
            if op == "neg":
                return (b.fneg(x) if d.is_float else b.neg(x)), d
            if d not in FLOAT:
                raise NativeUnsupported(f"'{op}' of {d}")
            if op == "isnan":
                return b.fcmp_unordered("uno", x, x), dt.bool_
            from ..llvm_math import math_fn
            return b.call(math_fn(self.e.m, op, FLOAT[d]), [x]), d
        if op == "template":
            return self._template(*a)
        if op == "where":
            c = self.e.truth(self.value(a[0])[0])
            (x, d), (y, _) = self.pair(a[1], a[2])
            return b.select(c, x, y), d
        if op in ("and", "or"):
            x, y = (self.e.truth(self.value(z)[0]) for z in a)
            return (b.and_(x, y) if op == "and" else b.or_(x, y)), dt.bool_
        (x, d), (y, _) = self.pair(a[0], a[1])
        fl = d.is_float
        if op in _CMP:
            if fl:
                cmp = b.fcmp_unordered if op == "ne" else b.fcmp_ordered
                return cmp(_CMP[op], x, y), dt.bool_
            return b.icmp_signed(_CMP[op], x, y), dt.bool_
        if op == "max":
            gt = b.fcmp_ordered(">", y, x) if fl else b.icmp_signed(">", y, x)
            return b.select(gt, y, x), d
        if d is U64 and op in ("bxor", "shr", "mod"):
            return (b.xor(x, y) if op == "bxor" else b.lshr(x, y) if op == "shr" else
                    b.urem(x, y)), d
        if op in _ARITH:
            name = _ARITH[op][0 if fl else 1]
            if name is None:
                raise NativeUnsupported(f"integer '{op}'")
            return getattr(b, name)(x, y), d
        raise NativeUnsupported(f"LLVM loop renderer: no rendering for {op!r}")

    def _template(self, tmpl: E.Expr, args: tuple, compute: str, dtype: str):
        """A scalar_expr template over builder values as the native elementwise lowering
        computes it (Emitter.scalar in the compute dtype, bools as i1), rounded to `dtype`."""
        cdt, to = dt.to_dtype(compute), dt.to_dtype(dtype)
        if cdt not in FLOAT or to not in FLOAT:
            raise NativeUnsupported(f"template computing in {cdt} into {to}")
        xs = []
        for x in args:
            v, d = self.value(x)
            xs.append(self.e.truth(v) if d is dt.bool_ else self.e.convert(v, d, cdt))
        y = self.e.scalar(tmpl, xs, FLOAT[cdt])
        return self.e.convert(y, cdt if y.type != L.IntType(1) else dt.bool_, to), to

    def pair(self, p: E.Expr, q: E.Expr):
        """Two operands converted to their unified dtype (see unify)."""
        (x, dx), (y, dy) = self.value(p), self.value(q)
        d = unify(dx, dy)
        return (self._to(x, dx, d), d), (self._to(y, dy, d), d)

    def _to(self, x, src: dt.DType, dst: dt.DType):
        """A computed value of dtype src as dtype dst (a bool stays an i1; a uint64 is an i64:
        to and from int64 it keeps its bits, to a float it converts unsigned)."""
        if U64 in (src, dst) and src is not dst:
            if dst is U64 and src in (dt.int64, dt.int32):
                return self.e.convert(x, src, dt.int64)
            if src is U64 and dst is dt.int64:
                return x
            if src is U64 and dst.is_float:
                return self._to(self.b.uitofp(x, F64), dt.float64, dst)
            raise NativeUnsupported(f"LLVM loop renderer: {src} as {dst}")
        return x if src is dst else self.e.convert(x, src, dst)


def unify(a: dt.DType, b: dt.DType) -> dt.DType:
    """numba's type of a binary operation's operands (constants are int64/float64 literals):
    one dtype is itself, a bool takes the other's, two floats the wider, two integers int64
    (numba computes integers narrower than intp in intp), an integer and a float float64."""
    if a is b:
        return a
    if U64 in (a, b):
        raise TypeError(f"loop definition: a uint64 with {b if a is U64 else a} (numba computes "
                        "it in float64): convert the other operand with u64()")
    if a is dt.bool_ or b is dt.bool_:
        return b if a is dt.bool_ else a
    if a.is_float and b.is_float:
        return dt.float64 if dt.float64 in (a, b) else dt.float32
    return dt.int64 if not (a.is_float or b.is_float) else dt.float64


def emit(e: Emitter, definition: Definition, params: dict, buffers: dict, scratch_key,
         scalars=None, sites=None, read_as=None) -> None:
    """Emit `definition` traced with `params` (see the module docstring), its scalar arguments
    bound by `scalars` (name -> number) and its check sites by `sites` (name -> IndexCheck: a
    Fail is Emitter.fail_index) and `read_as` maps input names to the dtype the definition
    reads them as (the eager kernel's converted copy); counted in definition.renders['llvm']."""
    prog = definition.trace(**params)
    for name, (v, _) in buffers.items():
        if v.dtype not in STORAGE:
            raise NativeUnsupported(f"{definition.name}: {name} of {v.dtype}")
    render = _Render(e, prog, buffers, scratch_key, scalars, read_as)
    render.sites = dict(sites or {})
    render.block(prog.body)
    definition.renders["llvm"] += 1
