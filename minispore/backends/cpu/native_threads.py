"""The native sink's thread pool in LLVM IR: the start routine of the pthreads that
Emitter.parallel creates, taking chunks of a loop from a shared atomic counter.
"""
from __future__ import annotations

from llvmlite import ir as L

I8, I32, I64 = L.IntType(8), L.IntType(32), L.IntType(64)


def _const(v, ty=I64):
    return L.Constant(ty, v)


TASK = L.LiteralStructType([I8.as_pointer(), I8.as_pointer().as_pointer(), I64.as_pointer(),
                            I64, I64])


def worker(m: L.Module) -> L.Function:
    """`i8* minispore_worker(i8* task)`: a pthread's start routine (the calling thread runs it
    too); task = {chunk function, bufs, counter, n, chunk size}: it takes chunk c = counter++
    (atomically) and runs [c * size, min(n, (c + 1) * size)) until c * size >= n."""
    fn = m.globals.get("minispore_worker")
    if fn is not None:
        return fn
    PP = I8.as_pointer().as_pointer()
    cty = L.FunctionType(L.VoidType(), [PP, I64, I64])
    fn = L.Function(m, L.FunctionType(I8.as_pointer(), [I8.as_pointer()]), "minispore_worker")
    fn.linkage = "internal"
    b = L.IRBuilder(fn.append_basic_block())
    task = b.bitcast(fn.args[0], TASK.as_pointer())

    def field(k):
        return b.load(b.gep(task, [_const(0, I32), _const(k, I32)]))
    body, loop, done = (fn.append_basic_block(s) for s in ("take", "run", "done"))
    b.branch(body)
    b.position_at_end(body)
    n, size = field(3), field(4)
    lo = b.mul(b.atomic_rmw("add", field(2), _const(1), "monotonic"), size)
    b.cbranch(b.icmp_signed("<", lo, n), loop, done)
    b.position_at_end(loop)
    hi = b.add(lo, size)
    hi = b.select(b.icmp_signed("<", hi, n), hi, n)
    b.call(b.bitcast(field(0), cty.as_pointer()), [field(1), lo, hi])
    b.branch(body)
    b.position_at_end(done)
    b.ret(L.Constant(I8.as_pointer(), None))
    return fn
