"""core/ops/topk_select.py (MindSpore's CPU TopK selection) against a second transcription of it,
written over Python lists with closures (the one that was checked against MindSpore 2.10: equal
on 1200 random tie-heavy rows, n from 1 to 1000, k from 1 to n, sorted and not, and on 1536
interleaved rows that reach the heap select), MindSpore's own output on two of the latter, and
the numba-compiled copy the CPU kernels run against the Python one."""
from __future__ import annotations

import numpy as np
import pytest

from minispore.core.ops.topk_select import select_rows


def _model_topk(v, k, sorted_):
    n = len(v)
    idx = list(range(n))

    def comp(i, j):
        return v[i] > v[j]
    kk = min(n, k)
    if sorted_ and kk > int(n * 0.5):
        return _stable(idx, comp)[:kk]
    _nth_element(idx, 0, kk, n, comp)
    if sorted_:
        idx[:kk] = _stable(idx[:kk], comp)
    return idx[:kk]


def _lg(n):
    return n.bit_length() - 1


def _stable(a, comp):
    if len(a) <= 1:
        return list(a)
    m = len(a) // 2
    left, right = _stable(a[:m], comp), _stable(a[m:], comp)
    out, i, j = [], 0, 0
    while i < len(left) and j < len(right):
        if comp(right[j], left[i]):
            out.append(right[j])
            j += 1
        else:
            out.append(left[i])
            i += 1
    return out + left[i:] + right[j:]


def _nth_element(a, first, nth, last, comp):
    if first == last or nth == last: return
    depth = _lg(last - first) * 2
    while last - first > 3:
        if depth == 0:
            _heap_select(a, first, nth + 1, last, comp)
            a[first], a[nth] = a[nth], a[first]
            return
        depth -= 1
        cut = _partition_pivot(a, first, last, comp)
        if cut <= nth: first = cut
        else: last = cut
    _insertion_sort(a, first, last, comp)


def _partition_pivot(a, first, last, comp):
    mid = first + (last - first) // 2
    _median_to_first(a, first, first + 1, mid, last - 1, comp)
    return _unguarded_partition(a, first + 1, last, first, comp)


def _median_to_first(a, res, x, y, z, comp):
    if comp(a[x], a[y]):
        if comp(a[y], a[z]): t = y
        elif comp(a[x], a[z]): t = z
        else: t = x
    elif comp(a[x], a[z]): t = x
    elif comp(a[y], a[z]): t = z
    else: t = y
    a[res], a[t] = a[t], a[res]


def _unguarded_partition(a, first, last, pivot, comp):
    while True:
        while comp(a[first], a[pivot]): first += 1
        last -= 1
        while comp(a[pivot], a[last]): last -= 1
        if not first < last: return first
        a[first], a[last] = a[last], a[first]
        first += 1


def _insertion_sort(a, first, last, comp):
    if first == last: return
    for i in range(first + 1, last):
        val = a[i]
        if comp(val, a[first]):
            a[first + 1:i + 1] = a[first:i]
            a[first] = val
        else:
            j = i; nx = j - 1
            while comp(val, a[nx]):
                a[j] = a[nx]; j = nx; nx -= 1
            a[j] = val


def _heap_select(a, first, middle, last, comp):
    _make_heap(a, first, middle, comp)
    for i in range(middle, last):
        if comp(a[i], a[first]):
            val = a[i]; a[i] = a[first]
            _adjust_heap(a, first, 0, middle - first, val, comp)


def _make_heap(a, first, last, comp):
    ln = last - first
    if ln < 2: return
    parent = (ln - 2) // 2
    while True:
        val = a[first + parent]
        _adjust_heap(a, first, parent, ln, val, comp)
        if parent == 0: return
        parent -= 1


def _adjust_heap(a, first, hole, ln, val, comp):
    top = hole; second = hole
    while second < (ln - 1) // 2:
        second = 2 * (second + 1)
        if comp(a[first + second], a[first + second - 1]): second -= 1
        a[first + hole] = a[first + second]; hole = second
    if (ln & 1) == 0 and second == (ln - 2) // 2:
        second = 2 * (second + 1)
        a[first + hole] = a[first + second - 1]; hole = second - 1
    parent = (hole - 1) // 2
    while hole > top and comp(a[first + parent], val):
        a[first + hole] = a[first + parent]; hole = parent; parent = (hole - 1) // 2
    a[first + hole] = val


@pytest.mark.parametrize("n,k,srt", [(1, 1, True), (4, 2, False), (17, 8, True), (100, 30, False),
                                     (257, 5, True), (1000, 500, True), (1000, 501, True),
                                     (1000, 3, False)])
@pytest.mark.parametrize("values", [2, 3, 1000])
def test_selection_matches_the_list_model(n, k, srt, values):
    rng = np.random.default_rng(n * 31 + k)
    x = rng.integers(0, values, (3, n)).astype(np.float64)
    out = np.zeros((3, k), np.int64)
    select_rows(x, k, srt, out)
    for r in range(3):
        assert list(out[r]) == _model_topk(list(x[r]), k, srt)


def test_structured_rows():
    """Ascending, descending, periodic and permuted rows (the orders that stress the pivot
    choice) against the model."""
    for n in range(4, 120, 7):
        for pattern in (np.arange(n), np.arange(n)[::-1], np.arange(n) % 7,
                        (np.arange(n) * 37) % n):
            x = pattern.astype(np.float64)[None]
            for k in (1, 3, n // 2):
                out = np.zeros((1, k), np.int64)
                select_rows(x, k, False, out)
                assert list(out[0]) == _model_topk(list(x[0]), k, False), (n, k)


def test_the_compiled_selection_is_the_python_one():
    from minispore.backends.cpu.kernels_sorting import select_module
    jit_rows = select_module().select_rows
    rng = np.random.default_rng(7)
    for n, k, srt in ((9, 4, True), (64, 10, False), (33, 30, True)):
        for dtype in (np.float64, np.int64):
            x = rng.integers(-3, 3, (4, n)).astype(dtype)
            a, b = np.zeros((4, k), np.int64), np.zeros((4, k), np.int64)
            select_rows(x, k, srt, a)
            jit_rows(x, k, srt, b)
            assert np.array_equal(a, b)


@pytest.mark.parametrize("n,k,want", [
    (15, 7, [13, 0, 11, 2, 9, 4, 6]),
    (29, 9, [27, 0, 25, 2, 23, 4, 21, 6, 8]),
])
def test_rows_past_the_depth_limit_give_mindspores_heap_order(n, k, want):
    """An interleaved row (n - i at even i, i at odd i) exhausts introselect's depth limit, so
    the heap select orders the result; the expected positions are MindSpore 2.10's
    TopK(sorted=False) on the CPU."""
    from minispore.core.ops import topk_select as T
    calls = []
    heap_select = T.heap_select

    def counted(*args):
        calls.append(1)
        return heap_select(*args)
    x = np.where(np.arange(n) % 2, np.arange(n), n - np.arange(n)).astype(np.float64)[None]
    out = np.zeros((1, k), np.int64)
    T.heap_select = counted
    try:
        select_rows(x, k, False, out)
    finally:
        T.heap_select = heap_select
    assert calls and list(out[0]) == want
