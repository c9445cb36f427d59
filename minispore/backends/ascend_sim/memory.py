"""Simulated HBM: an address-space allocator with real accounting, and the device buffer type.

The pool hands out aligned address ranges of a fixed capacity (the profile's HBM, or the
context's `max_device_memory`). Freed blocks are cached by size and reused by same-size requests
in O(1) (what MindSpore's and PyTorch's caching pools do); when the bump pointer reaches the
capacity, the slow path coalesces adjacent free blocks, lowers the bump pointer over a free tail,
and places the request first-fit, splitting a larger block. A request that still does not fit
raises RuntimeError naming the request, the free bytes, the largest free block and the peak, and
changes nothing, so the device stays usable. A reconfigured device (new capacity or profile)
adopts the pool, so live buffers stay valid and counted (`adopt`, which moves them down when
they would lie beyond a smaller capacity or free blocks lie between them: the adopted pool
is packed from address 0, so what ran before cannot change where the next allocations land).

`DeviceArray` is a buffer on the device: the bytes (a numpy array, in ND or FRACTAL_NZ layout),
its address and size in the pool; dropping the last reference returns the block (buffers are
immutable, so that is the whole of freeing, as on the CPU backend). A buffer in a reference
cycle is freed when the garbage collector runs, which can be inside any allocation, so the paths
that read and rebuild the free lists as a whole (`_slow_alloc`, `adopt`, `stats`) hold the
collector off while they do (`_collector_held`): a block freed between reading the free lists
and rebuilding them would otherwise be lost.
"""
from __future__ import annotations

import functools
import gc

from ...core.errors import DeviceError


def _collector_held(method):
    """Run `method` with the garbage collector held off (no DeviceArray.__del__ from a cycle
    can run inside it), restoring the collector's previous state."""
    @functools.wraps(method)
    def held(*args, **kwargs):
        was = gc.isenabled()
        gc.disable()
        try:
            return method(*args, **kwargs)
        finally:
            if was:
                gc.enable()
    return held


class DeviceArray:
    """A device buffer. `data` holds the bytes; `fmt` is "ND" or "NZ" (then `data` has the
    padded fractal shape, see formats.py); the tensor keeps the logical shape."""
    __slots__ = ("data", "addr", "size", "fmt", "pool", "base")

    def __init__(self, data, addr: int, size: int, pool: "MemoryPool", fmt: str = "ND",
                 base: "DeviceArray | None" = None):
        self.data, self.addr, self.size, self.pool, self.fmt = data, addr, size, pool, fmt
        self.base = base           # a view (size 0) keeps the buffer it shares alive

    def __del__(self):
        if self.size:
            try:
                self.pool.free(self.addr, self.size)
            except Exception:      # interpreter shutdown: the pool may be gone already
                pass

    def __array__(self, dtype=None, copy=None):
        """The bytes without a modelled copy: for the executor's own reads (a loop condition
        the device evaluates itself); user reads go through `to_host`."""
        return self.data if dtype is None else self.data.astype(dtype)

    device_name = "Ascend (simulated)"

    def to_host(self):
        """The value as a host numpy array: synchronises the device and pays the D2H copy."""
        return self.pool.device.download(self)

    @property
    def shape(self):
        return self.data.shape

    @property
    def dtype(self):
        return self.data.dtype

    def __repr__(self) -> str:
        return f"DeviceArray({self.fmt} {self.data.dtype}{list(self.data.shape)} @0x{self.addr:x})"


class OutOfDeviceMemory(DeviceError):
    """The simulated HBM cannot hold a request (a RuntimeError)."""
    pass


class MemoryPool:
    def __init__(self, capacity: int, align: int, device=None):
        self.capacity, self.align, self.device = int(capacity), int(align), device
        self.top = 0                        # bump pointer: [top, capacity) was never carved
        self.cached: dict[int, list[int]] = {}   # size -> addresses of free blocks
        self.cached_bytes = 0
        self.allocated = 0                  # bytes in live blocks
        self.peak = 0
        self.n_allocs = 0

    def block_size(self, nbytes: int) -> int:
        a = self.align
        return max(a, (int(nbytes) + a - 1) // a * a)

    def alloc(self, nbytes: int, what: str = "a tensor") -> tuple[int, int]:
        """(address, block size) for `nbytes`; OutOfDeviceMemory if it cannot be placed."""
        size = self.block_size(nbytes)
        return self.take(size, what, nbytes), size

    def take(self, size: int, what: str = "a tensor", nbytes: int | None = None) -> int:
        """The address of a block of `size`, already rounded by block_size (kernels round
        theirs once)."""
        lst = self.cached.get(size)
        if lst:
            addr = lst.pop()
            self.cached_bytes -= size
        elif self.top + size <= self.capacity:
            addr = self.top
            self.top += size
        else:
            addr = self._slow_alloc_collecting(size, size if nbytes is None else nbytes, what)
        self.allocated += size
        if self.allocated > self.peak:
            self.peak = self.allocated
        self.n_allocs += 1
        return addr

    def free(self, addr: int, size: int) -> None:
        lst = self.cached.get(size)
        if lst is None:
            self.cached[size] = [addr]
        else:
            lst.append(addr)
        self.cached_bytes += size
        self.allocated -= size

    # -- the slow path: coalesce, first fit --------------------------------------------------
    def _free_blocks(self) -> list[tuple[int, int]]:
        """Free blocks (address, size), adjacent ones merged, address order."""
        blocks = sorted((a, s) for s, lst in self.cached.items() for a in lst)
        merged: list[list[int]] = []
        for a, s in blocks:
            if merged and merged[-1][0] + merged[-1][1] == a:
                merged[-1][1] += s
            else:
                merged.append([a, s])
        return [(a, s) for a, s in merged]

    def _slow_alloc_collecting(self, size: int, nbytes: int, what: str) -> int:
        """_slow_alloc, and once more after a garbage collection when it finds no room: blocks
        that only unreachable reference cycles still hold (a dropped Cell's Parameters) are
        freed then, as CPython would free them at some later point (PyTorch's and CuPy's pools
        likewise release what they can and retry before reporting out of memory)."""
        try:
            return self._slow_alloc(size, nbytes, what)
        except OutOfDeviceMemory:
            before = self.allocated
            gc.collect()
            if self.allocated == before:
                raise
            return self._slow_alloc(size, nbytes, what)

    @_collector_held
    def _slow_alloc(self, size: int, nbytes: int, what: str) -> int:
        blocks = self._free_blocks()
        top = self.top
        if blocks and blocks[-1][0] + blocks[-1][1] == top:     # a free tail: give it back
            top = blocks.pop()[0]
        chosen = None
        if top + size <= self.capacity:
            chosen, blocks_left, top = top, blocks, top + size
        else:
            for i, (a, s) in enumerate(blocks):
                if s >= size:
                    chosen = a
                    rest = [(a + size, s - size)] if s > size else []
                    blocks_left = blocks[:i] + rest + blocks[i + 1:]
                    break
        if chosen is None:                  # nothing was changed: the device stays usable
            free = self.capacity - self.allocated
            largest = max([s for _, s in blocks] + [self.capacity - top])
            raise OutOfDeviceMemory(
                f"Ascend (simulated) device out of memory: {what} needs {nbytes} bytes "
                f"({size} aligned); free {free} bytes, largest free block {largest}, in use "
                f"{self.allocated}, peak {self.peak}, capacity {self.capacity}. Use a smaller "
                f"batch, free tensors you no longer need, or raise the capacity with "
                f"ms.set_context(max_device_memory=...)")
        self.top = top
        self.cached.clear()
        self.cached_bytes = 0
        for a, s in blocks_left:
            self.cached.setdefault(s, []).append(a)
            self.cached_bytes += s
        return chosen

    def adopt(self, capacity: int, align: int, device) -> None:
        """_adopt, after a garbage collection when the live bytes exceed the new capacity (the
        blocks only unreachable cycles hold do not count, as in an allocation)."""
        if self.allocated > int(capacity):
            gc.collect()
        self._adopt(capacity, align, device)

    @_collector_held
    def _adopt(self, capacity: int, align: int, device) -> None:
        """Serve a reconfigured device (set_context changed max_device_memory or the device
        profile) keeping every live buffer, so the tensors that hold them stay valid and are
        counted against the new capacity. Live blocks that would lie beyond the new capacity
        (or a new alignment) are moved down, as a compacting allocator would; live bytes that
        exceed the new capacity raise OutOfDeviceMemory and change nothing."""
        capacity, align = int(capacity), int(align)
        if self.allocated > capacity:
            raise OutOfDeviceMemory(
                f"Ascend (simulated): cannot set the device memory to {capacity} bytes: live "
                f"tensors hold {self.allocated} bytes. Delete the tensors you no longer need "
                f"(or copy them to the host with asnumpy() and delete them) first, or choose "
                f"a capacity of at least {self.allocated} bytes")
        blocks = self._free_blocks()
        top = self.top
        if blocks and blocks[-1][0] + blocks[-1][1] == top:     # a free tail: give it back
            top = blocks.pop()[0]
        if not self.allocated:          # nothing live: the new capacity starts unfragmented
            top, blocks = 0, []
        elif top > capacity or align != self.align or blocks:
            top, blocks = self._compact(align, capacity)      # live buffers packed from 0
        self.top, self.capacity, self.align, self.device = top, capacity, align, device
        self.cached.clear()
        self.cached_bytes = 0
        for a, s in blocks:
            self.cached.setdefault(s, []).append(a)
            self.cached_bytes += s

    def _compact(self, align: int, capacity: int) -> tuple[int, list]:
        """Move every live buffer down to consecutive `align`ed addresses from 0 (raising,
        with nothing moved, if they do not fit `capacity`); returns the new bump pointer and
        no free blocks. The buffers are found among the objects the
        garbage collector tracks (this runs only on a reconfiguration, never per op)."""
        arrays = [o for o in gc.get_objects() if type(o) is DeviceArray and o.pool is self]
        owners = sorted((a for a in arrays if a.size), key=lambda a: a.addr)
        if sum(a.size for a in owners) != self.allocated:
            raise DeviceError(
                f"Ascend (simulated): cannot move the device memory: {self.allocated} bytes "
                f"are in use but tensors own {sum(a.size for a in owners)}; keep the current "
                f"max_device_memory or restart the process")
        moved, top = {}, 0
        for a in owners:
            moved[id(a)] = top
            top += (a.size + align - 1) // align * align
        if top > capacity:
            raise OutOfDeviceMemory(
                f"Ascend (simulated): cannot set the device memory to {capacity} bytes: live "
                f"tensors need {top} bytes at an alignment of {align}; delete the tensors you "
                f"no longer need first, or choose a capacity of at least {top} bytes")
        for a in owners:
            a.addr = moved[id(a)]
        for v in arrays:                    # views follow the buffer they share
            if not v.size and v.base is not None and id(v.base) in moved:
                v.addr = moved[id(v.base)]
        return top, []

    @_collector_held
    def stats(self) -> dict:
        """allocated/peak/reserved bytes and fragmentation = 1 - largest free block / free
        bytes (0: all free memory is one block)."""
        blocks = self._free_blocks()
        tail = self.capacity - self.top
        if blocks and blocks[-1][0] + blocks[-1][1] == self.top:
            tail += blocks.pop()[1]
        free = self.capacity - self.allocated
        largest = max([s for _, s in blocks] + [tail])
        return {"capacity": self.capacity, "allocated": self.allocated, "peak": self.peak,
                "reserved": self.top, "cached": self.cached_bytes, "free": free,
                "largest_free_block": largest,
                "fragmentation": 0.0 if free == 0 else 1.0 - largest / free,
                "allocations": self.n_allocs}

    def reset_peak(self) -> None:
        self.peak = self.allocated
