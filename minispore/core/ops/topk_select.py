"""MindSpore's CPU TopK selection, step for step, so ties come out in MindSpore's order.

MindSpore 2.10's CPU kernel orders the positions of a row with `comp(i, j) = x[i] > x[j]`: with
sorted=True and k > n / 2 (n // 2) it stable-sorts the whole row; otherwise it runs libstdc++'s
std::nth_element (introselect: median-of-three pivots, Hoare partition, a heap select past the
depth limit, insertion sort below four elements) to put the k largest first, and with
sorted=True stable-sorts those k. The first k positions are its indices. Tied values therefore
come in the order those steps leave them, not by index (their values are the same either way),
and sorted=False gives nth_element's order. This module is that algorithm on numpy arrays,
written as plain loops over one row so that the CPU backend compiles the same source with numba
(backends/cpu/kernels_sorting.py); the op's numpy reference runs it as Python.

`v` is a row of values comparable with `>` (floats, or int64), `a` the int64 positions being
ordered, `tmp` int64 scratch of the row's length.
"""
from __future__ import annotations

import numpy as np

# the functions the CPU backend compiles (each calls the others by these global names)
JIT_FUNCTIONS = ("lg", "stable_sort", "median_to_first", "unguarded_partition",
                 "insertion_sort", "adjust_heap", "heap_select", "nth_element", "select_rows")


def lg(n):
    """floor(log2(n)) for n >= 1 (libstdc++'s std::__lg)."""
    r = 0
    while n > 1:
        n >>= 1
        r += 1
    return r


def stable_sort(v, a, tmp, lo, hi):
    """a[lo:hi] stably ordered by v descending (a bottom-up merge; a right element goes first
    only when strictly greater)."""
    width = 1
    n = hi - lo
    while width < n:
        start = lo
        while start < hi:
            mid = min(start + width, hi)
            end = min(start + 2 * width, hi)
            i, j, k = start, mid, start
            while k < end:
                if j < end and (i >= mid or v[a[j]] > v[a[i]]):
                    tmp[k] = a[j]
                    j += 1
                else:
                    tmp[k] = a[i]
                    i += 1
                k += 1
            start = end
        for k in range(lo, hi):
            a[k] = tmp[k]
        width *= 2


def median_to_first(v, a, res, x, y, z):
    """std::__move_median_to_first: the median of a[x], a[y], a[z] swapped into a[res]."""
    if v[a[x]] > v[a[y]]:
        if v[a[y]] > v[a[z]]:
            t = y
        elif v[a[x]] > v[a[z]]:
            t = z
        else:
            t = x
    elif v[a[x]] > v[a[z]]:
        t = x
    elif v[a[y]] > v[a[z]]:
        t = z
    else:
        t = y
    a[res], a[t] = a[t], a[res]


def unguarded_partition(v, a, first, last, pivot):
    """std::__unguarded_partition around a[pivot]: the cut position."""
    while True:
        while v[a[first]] > v[a[pivot]]:
            first += 1
        last -= 1
        while v[a[pivot]] > v[a[last]]:
            last -= 1
        if not first < last:
            return first
        a[first], a[last] = a[last], a[first]
        first += 1


def insertion_sort(v, a, first, last):
    """std::__insertion_sort of a[first:last]."""
    if first == last:
        return
    for i in range(first + 1, last):
        val = a[i]
        if v[val] > v[a[first]]:
            for j in range(i, first, -1):
                a[j] = a[j - 1]
            a[first] = val
        else:
            j = i
            while v[val] > v[a[j - 1]]:
                a[j] = a[j - 1]
                j -= 1
            a[j] = val


def adjust_heap(v, a, first, hole, length, val):
    """std::__adjust_heap then std::__push_heap (a max-heap under comp)."""
    top = hole
    second = hole
    while second < (length - 1) // 2:
        second = 2 * (second + 1)
        if v[a[first + second]] > v[a[first + second - 1]]:
            second -= 1
        a[first + hole] = a[first + second]
        hole = second
    if (length & 1) == 0 and second == (length - 2) // 2:
        second = 2 * (second + 1)
        a[first + hole] = a[first + second - 1]
        hole = second - 1
    parent = (hole - 1) // 2
    while hole > top and v[a[first + parent]] > v[val]:
        a[first + hole] = a[first + parent]
        hole = parent
        parent = (hole - 1) // 2
    a[first + hole] = val


def heap_select(v, a, first, middle, last):
    """std::__heap_select: make_heap of a[first:middle], then each later element that comes
    before the heap's top replaces it (std::__pop_heap)."""
    length = middle - first
    if length >= 2:
        parent = (length - 2) // 2
        while True:
            adjust_heap(v, a, first, parent, length, a[first + parent])
            if parent == 0:
                break
            parent -= 1
    for i in range(middle, last):
        if v[a[i]] > v[a[first]]:
            val = a[i]
            a[i] = a[first]
            adjust_heap(v, a, first, 0, length, val)


def nth_element(v, a, nth, last):
    """std::nth_element(a, a + nth, a + last) under comp (libstdc++'s __introselect)."""
    first = 0
    if first == last or nth == last:
        return
    depth = lg(last - first) * 2
    while last - first > 3:
        if depth == 0:
            heap_select(v, a, first, nth + 1, last)
            a[first], a[nth] = a[nth], a[first]
            return
        depth -= 1
        mid = first + (last - first) // 2
        median_to_first(v, a, first, first + 1, mid, last - 1)
        cut = unguarded_partition(v, a, first + 1, last, first)
        if cut <= nth:
            first = cut
        else:
            last = cut
    insertion_sort(v, a, first, last)


def select_rows(x, k, sorted_, out):
    """MindSpore's TopK positions of each row of the 2-D array x into out (m, k) int64."""
    m, n = x.shape
    a = np.empty(n, np.int64)
    tmp = np.empty(n, np.int64)
    kk = min(n, k)
    for r in range(m):
        v = x[r]
        for j in range(n):
            a[j] = j
        if sorted_ and kk > n // 2:
            stable_sort(v, a, tmp, 0, n)
        else:
            nth_element(v, a, kk, n)
            if sorted_:
                stable_sort(v, a, tmp, 0, kk)
        for j in range(kk):
            out[r, j] = a[j]


_UINT64_SIGN = np.uint64(1 << 63)


def compare_keys(x: np.ndarray) -> np.ndarray:
    """x's values as the dtype the selection compares in, in the same order: int64 for
    integers, float64 for floats (half types widen exactly), C-contiguous. uint64 values have
    their top bit flipped and are read as int64 (0 becomes -2**63, 2**64-1 becomes 2**63-1):
    a plain cast would wrap every value >= 2**63 to a negative one and order it last."""
    if x.dtype == np.uint64:
        return (np.ascontiguousarray(x) ^ _UINT64_SIGN).view(np.int64)
    kind = np.dtype(x.dtype).kind
    return np.ascontiguousarray(x, dtype=np.int64 if kind in "iub" else np.float64)
