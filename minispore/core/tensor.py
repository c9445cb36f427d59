"""Tensor and Parameter: a buffer on a device plus its shape and dtype, and a tape link.

Invariant: a Tensor's buffer is C-contiguous and never written after creation; `__setitem__`
builds a new buffer and rebinds the tensor to it (so tape records made earlier keep the old
value, and views are never surprised). Operators and methods are attached in tensor_methods.py.
"""
from __future__ import annotations

import itertools

import numpy as np

from .arg_checks import check_bool
from . import dtype as dt

# `init=` of Tensor and Parameter.clone: the factory `initializer(init, shape, dtype) -> Tensor`
# that minispore.common.initializer registers (core sits below it and never imports it).
_initializer_factory = None


def register_initializer(factory) -> None:
    """Install `factory(init, shape, dtype) -> Tensor`, used for `init=` (a name or an
    Initializer) by Tensor(shape=..., init=...) and Parameter.clone(init)."""
    global _initializer_factory
    _initializer_factory = factory


def _initialize(init, shape, dtype) -> "Tensor":
    if _initializer_factory is None:
        raise RuntimeError(f"Tensor: init={init!r} needs the initializers of "
                           f"minispore.common.initializer; import minispore (or that module) "
                           f"first")
    return _initializer_factory(init, shape, dtype)


class Tensor:
    """MindSpore's Tensor: `Tensor(input_data=None, dtype=None, shape=None, init=None)`.

    Attributes: `_buf` the device buffer (a numpy array on the CPU), `shape`, `dtype`, and `_node`:
    None, or the autodiff record (a Leaf or a (TapeNode, index)) while a gradient is taken."""

    __slots__ = ("_buf", "shape", "dtype", "_node", "__weakref__")

    def __init__(self, input_data=None, dtype=None, shape=None, init=None, const_arg=False,
                 device=None):
        """`const_arg` (MindSpore: a graph compiles the value in as a constant) gives the same
        results as a graph input, which is what minispore compiles it as. `device` may be
        None or "CPU": a new tensor's buffer is host memory, copied to the device target by
        the first op that reads it."""
        _check_placement("Tensor", const_arg, device)
        if getattr(type(input_data), "_ms_runtime_value", False):
            # a value computed by Python at run time in a graph (graph/fallback.py)
            t = input_data.to_tensor(dtype)
            self._buf, self.shape, self.dtype, self._node = t._buf, t.shape, t.dtype, t._node
            return
        if input_data is not None and (shape is not None or init is not None):
            raise ValueError(f"Tensor: with input_data, shape and init must be None (got "
                             f"shape={shape!r}, init={init!r}); give either input_data, or "
                             f"shape and dtype (and init)")
        if input_data is None:
            if shape is None:
                raise ValueError("Tensor: give input_data, or shape together with dtype")
            shape = (shape,) if isinstance(shape, int) else tuple(shape)
            if init is not None:        # MindSpore defers this to init_data(); done at once here
                arr = _initialize(init, shape, dtype if dtype is not None else dt.float32)._buf
            else:
                arr = np.zeros(shape, (dt.to_dtype(dtype) if dtype is not None else dt.float32).np)
        else:
            arr = to_numpy(input_data, dtype)
        self._buf = arr
        self.shape = arr.shape
        self.dtype = dt.to_dtype(arr.dtype)
        self._node = None

    # -- conversion ---------------------------------------------------------------------------
    @staticmethod
    def from_numpy(array: np.ndarray) -> "Tensor":
        """MindSpore's Tensor.from_numpy: shares `array`'s memory (see `from_numpy`)."""
        return from_numpy(array)

    def init_data(self, slice_index=None, shape=None, opt_shard_group=None) -> "Tensor":
        """MindSpore materialises a Tensor(init=...) here; minispore already has: self."""
        return self

    def asnumpy(self) -> np.ndarray:
        """A numpy copy of the value (synchronises the device)."""
        return np.array(self._concrete(), copy=True)

    def _concrete(self):
        """The buffer; a clear error for a symbolic tensor (graph mode, while compiling)."""
        b = self._buf
        if isinstance(b, np.ndarray):
            return b
        if hasattr(b, "to_host"):              # a device buffer: synchronise and copy back
            return b.to_host()
        from .errors import GraphSyntaxError
        raise GraphSyntaxError(
            f"the value of this {self.dtype} tensor of shape {self.shape} is not known while the "
            f"graph is compiled; it cannot be read, converted to a Python value or used as a "
            f"Python condition here. Use tensor ops (e.g. ops.where), a tensor `if`/`while` "
            f"directly in construct, or PyNative mode")

    numpy = asnumpy

    def __array__(self, dtype=None, copy=None):
        a = self._concrete()
        return a.astype(dtype) if dtype is not None else a

    def item(self):
        if self.size != 1:
            raise ValueError(f"Tensor.item: only a tensor with one element can be converted to a "
                             f"Python scalar, got shape {self.shape}")
        return self._concrete().reshape(()).item()

    def tolist(self):
        return self._concrete().tolist()

    def __bool__(self) -> bool:
        if self.size != 1:
            raise ValueError(f"The truth value of a Tensor with shape {self.shape} is ambiguous; "
                             f"use .any() or .all() style reductions")
        return bool(self._concrete().reshape(()))

    def __int__(self) -> int:
        return int(self.item())

    def __float__(self) -> float:
        return float(self.item())

    def __index__(self) -> int:
        if self.dtype.kind not in "iu" or self.size != 1:
            raise TypeError(f"only integer Tensors of one element can be used as an index, got "
                            f"{self.dtype} {self.shape}")
        return int(self.item())

    # -- metadata -----------------------------------------------------------------------------
    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d Tensor")
        return self.shape[0]

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    __hash__ = object.__hash__

    def _symbolic(self) -> bool:
        b = self._buf
        return not isinstance(b, np.ndarray) and not hasattr(b, "to_host")

    def __repr__(self) -> str:
        if self._symbolic():
            return f"Tensor(shape={list(self.shape)}, dtype={self.dtype}, value=<symbolic {self._buf}>)"
        return (f"Tensor(shape={list(self.shape)}, dtype={self.dtype}, value="
                f"{format_value(self._concrete())})")

    def __str__(self) -> str:
        if self._symbolic():
            return repr(self)
        return str(self._concrete())


def format_value(a: np.ndarray) -> str:
    """MindSpore's repr of a tensor's value (tensor_format.py): ' 1.00000000e+00' floats, 0-d
    as a plain number."""
    from .tensor_format import repr_value
    return repr_value(a)


def format_printed(buf) -> str:
    """How ops.Print and print in a graph show a tensor's value, in every backend (MindSpore's
    graph-mode print, tensor_format.py): Tensor(shape=[...], dtype=..., value=[...])."""
    from .tensor_format import printed
    a = np.asarray(buf)
    return printed(a, str(dt.to_dtype(a.dtype)))


def _check_placement(who: str, const_arg, device) -> None:
    check_bool(who, "const_arg", const_arg)
    if device == "meta":
        raise NotImplementedError(f"{who}: device='meta' (a tensor without data) is not "
                                  f"supported by minispore")
    if device not in (None, "CPU"):
        raise ValueError(f"{who}: device={device!r} is not valid; only None and 'CPU' are "
                         f"supported (as in MindSpore); ops move data to the device target")


def to_numpy(data, dtype=None) -> np.ndarray:
    """A fresh C-contiguous, native-byte-order numpy array for `data` with MindSpore's default
    dtypes: Python floats give float32, Python ints int64, bools bool; numpy arrays keep their
    dtype (a big-endian array is converted to native order). Values that cannot become the
    dtype raise instead of wrapping: Python ints outside int64 (or outside an integer `dtype`),
    and NaN, inf or out-of-range floats cast to an integer dtype."""
    target = dt.to_dtype(dtype).np if dtype is not None else None
    if isinstance(data, Tensor):
        arr = data._concrete()
    elif isinstance(data, np.ndarray):
        arr = data
    elif isinstance(data, np.generic):
        arr = np.asarray(data)
    else:
        if isinstance(data, (list, tuple)):
            data = _unwrap_nested(data)
        arr = _python_data(data, target)
        if target is None and arr.dtype == np.float64:
            arr = arr.astype(np.float32)
    if not arr.dtype.isnative:
        arr = arr.astype(arr.dtype.newbyteorder("="))
    if target is not None and arr.dtype != target:
        _check_cast(arr, target)
        arr = arr.astype(target)
    elif target is None:
        dt.to_dtype(arr.dtype)                        # rejects unsupported dtypes clearly
    return np.array(arr, order="C", copy=True)


def _python_data(data, target) -> np.ndarray:
    """numpy's conversion of Python data, with its integers checked against the integer target
    dtype, or int64 without one (numpy makes objects, uint64 or float64 of larger ones, and
    float64 loses their low digits). Ints up to 2**64-1 are exact with a UInt64 target, and a
    lone int in [2**63, 2**64) with no dtype is UInt64, as MindSpore 2.10's Tensor(2**63)."""
    if target is not None and target.kind == "f":
        return np.asarray(data, dtype=np.float64 if target.itemsize < 8 else target)
    try:
        arr = np.asarray(data)
    except ValueError:
        arr = np.asarray(None, dtype=object)          # ragged: reported below
    if arr.dtype == object or arr.dtype == np.uint64 or \
            (arr.dtype == np.float64 and bool(np.any(np.abs(arr) >= 2.0**63))):
        if target is not None and target.kind in "iu":
            bound = target
        elif target is None and arr.ndim == 0 and arr.dtype == np.uint64:
            bound = np.dtype(np.uint64)
        else:
            bound = np.dtype(np.int64)
        info = np.iinfo(bound)
        big = next((v for v in _leaves(data) if isinstance(v, int) and not isinstance(v, bool)
                    and not info.min <= v <= info.max), None)
        if big is not None:
            _out_of_range(big, bound)
        if bound == np.uint64 and arr.dtype != np.uint64:
            arr = np.asarray(data, dtype=np.uint64)   # exact: no float64 on the way
    if arr.dtype == object:
        raise TypeError(f"Tensor: cannot convert {type(data).__name__} with ragged or "
                        f"non-numeric elements to a tensor")
    if target is not None and target.kind in "iu" and arr.dtype.kind in "iu" and arr.size:
        info = np.iinfo(target)
        lo, hi = int(arr.min()), int(arr.max())
        if lo < info.min or hi > info.max:
            _out_of_range(lo if lo < info.min else hi, target)
    return arr


def _out_of_range(value: int, dtype: np.dtype):
    from .errors import OutOfRangeError
    info = np.iinfo(dtype)
    raise OutOfRangeError(f"Tensor: the Python int {value} does not fit {dtype.name} "
                          f"[{info.min}, {info.max}]; use a dtype that holds it, or a float "
                          f"(dtype=ms.float32) if an approximate value is meant")


def _leaves(data):
    if isinstance(data, (list, tuple)):
        for x in data:
            yield from _leaves(x)
    else:
        yield data


def _check_cast(arr: np.ndarray, target: np.dtype) -> None:
    """A float array cast to an integer dtype must hold finite values that fit it (numpy's cast
    of NaN, inf or too-large floats gives arbitrary integers)."""
    if arr.dtype.kind != "f" or target.kind not in "iu" or arr.size == 0:
        return
    from .errors import OutOfRangeError
    a = arr.astype(np.float64)
    info = np.iinfo(target)
    ok = np.isfinite(a) & (a >= info.min) & (a < float(info.max) + 1)
    if not ok.all():
        v = a[~ok].flat[0]
        raise OutOfRangeError(f"Tensor: the float value {v} cannot become {target.name} (NaN, "
                              f"inf and values outside [{info.min}, {info.max}] have no "
                              f"integer value); clean or clip the data first")


def _unwrap_nested(seq):
    return [_unwrap_nested(x) if isinstance(x, (list, tuple)) else
            (x.asnumpy() if isinstance(x, Tensor) else x) for x in seq]


def tensor(input_data=None, dtype=None, shape=None, init=None, const_arg=False, device=None):
    """MindSpore's lowercase `ms.tensor`."""
    return Tensor(input_data, dtype, shape, init, const_arg, device)


def from_numpy(array: np.ndarray) -> Tensor:
    """A Tensor sharing `array`'s memory when it is C-contiguous, aligned, writeable and in
    native byte order (copied otherwise, a big-endian array into native order). Writing to
    `array` afterwards changes the tensor, as in MindSpore."""
    t = Tensor.__new__(Tensor)
    a = np.asarray(array, order="C")            # (ascontiguousarray makes a 0-d array 1-d)
    if not a.dtype.isnative:
        a = a.astype(a.dtype.newbyteorder("="))
    if not a.flags.writeable or not a.flags.aligned:      # kernels assume plain arrays
        a = a.copy()
    t._buf, t.shape, t.dtype, t._node = a, a.shape, dt.to_dtype(a.dtype), None
    return t


def wrap(buf: np.ndarray, dtype: dt.DType | None = None) -> Tensor:
    """A Tensor around an existing contiguous buffer (no copy): used by executors."""
    t = Tensor.__new__(Tensor)
    t._buf = buf
    t.shape = buf.shape
    t.dtype = dtype if dtype is not None else dt.to_dtype(buf.dtype)
    t._node = None
    return t


_param_ids = itertools.count(1)


class Parameter(Tensor):
    """A trainable Tensor with a name: `Parameter(default_input, name=None, requires_grad=True)`."""

    __slots__ = ("name", "requires_grad", "_user_named", "layerwise_parallel")

    def __init__(self, default_input, name=None, requires_grad=True, layerwise_parallel=False,
                 parallel_optimizer=True, storage_format="", device=None):
        """`layerwise_parallel`: in data parallel, the parameter is each rank's own (its
        gradient is not all-reduced nor is it broadcast), as in MindSpore. `parallel_optimizer`
        only shards optimizer state across devices; each process holds it whole."""
        for k, v in (("layerwise_parallel", layerwise_parallel),
                     ("parallel_optimizer", parallel_optimizer)):
            check_bool("Parameter", k, v)
        if storage_format != "":
            raise NotImplementedError(f"Parameter: storage_format={storage_format!r} is not "
                                      f"supported by minispore; leave it ''")
        _check_placement("Parameter", False, device)
        Tensor.__init__(self, default_input)
        self._user_named = name is not None
        self.name = name if name is not None else f"Parameter#{next(_param_ids)}"
        self.requires_grad = bool(requires_grad)
        self.layerwise_parallel = layerwise_parallel

    def set_data(self, data, slice_shape=False) -> "Parameter":
        """Replace the value; the shape may change only when `slice_shape` is True."""
        arr = to_numpy(data, None if isinstance(data, (np.ndarray, Tensor)) else self.dtype)
        if arr.shape != self.shape and not slice_shape:
            raise ValueError(f"Parameter.set_data: {self.name} has shape {self.shape}, new data "
                             f"has shape {arr.shape}; pass data of the same shape")
        self._buf, self.shape, self.dtype = arr, arr.shape, dt.to_dtype(arr.dtype)
        return self

    def clone(self, init="same") -> "Parameter":
        """A new Parameter of the same name; `init` other than "same" initialises its value
        with that initializer (a name or an Initializer) at this shape and dtype."""
        if isinstance(init, str) and init == "same":
            value = self._concrete()
        else:
            value = _initialize(init, self.shape, self.dtype)
        return Parameter(value, name=self.name, requires_grad=self.requires_grad,
                         layerwise_parallel=self.layerwise_parallel)

    @property
    def data(self) -> "Parameter":
        return self

    def __repr__(self) -> str:
        return (f"Parameter (name={self.name}, shape={self.shape}, dtype={self.dtype}, "
                f"requires_grad={self.requires_grad})")

    __str__ = __repr__          # print(param) shows this line in MindSpore too

    def __reduce__(self):
        return (Parameter, (self.asnumpy(), self.name, self.requires_grad,
                            self.layerwise_parallel))


class ParameterTuple(tuple):
    """A tuple of Parameters (MindSpore's); anything else in it is a TypeError."""

    def __new__(cls, iterable=()):
        items = tuple(iterable)
        for i, p in enumerate(items):
            if not isinstance(p, Parameter):
                raise TypeError(f"ParameterTuple: item {i} is a {type(p).__name__}, not a "
                                f"Parameter")
        return super().__new__(cls, items)

    def clone(self, prefix, init="same") -> "ParameterTuple":
        """Each Parameter cloned (`Parameter.clone(init)`) and renamed `prefix.name`, as
        MindSpore's optimizers make their moments: `self.params.clone("moments", "zeros")`."""
        import re
        if not isinstance(prefix, str) or not re.fullmatch(r"\w+[0-9a-zA-Z_.]*", prefix,
                                                             re.ASCII):
            raise ValueError(f"ParameterTuple.clone: the prefix {prefix!r} is illegal, it must "
                             f"match the regular expression '^\\w+[0-9a-zA-Z\\_\\.]*$'")
        out = []
        for p in self:
            c = p.clone(init)
            c.name = f"{prefix}.{p.name}"
            out.append(c)
        return ParameterTuple(out)
