"""MindSpore's own ".ckpt" checkpoint format: its protobuf schema, and bytes <-> named arrays.

A MindSpore 2.x `.ckpt` file is the proto2 message `Checkpoint` of MindSpore's checkpoint.proto:

    message Checkpoint { message Value { required string tag = 1;
                                         oneof value { TensorProto tensor = 2;
                                                       MapTensorProto maptensor = 3; } }
                         repeated Value value = 1; }
    message TensorProto { repeated int64 dims = 1; required string tensor_type = 2;
                          required bytes tensor_content = 3; }
    message MapTensorProto { repeated TensorProto tensor = 1; }

MindSpore writes one serialized one-Value `Checkpoint` per tensor back to back (protobuf merges
concatenated messages into one). `tensor_type` is the MindSpore dtype name ("Float32",
"BFloat16", "Bool"), `tensor_content` the raw little-endian C-order bytes and `dims` the shape
(empty for a 0-d tensor). A tensor of more than 512 MiB is written as several consecutive Values
with the same tag, each holding the next slice of its bytes; a reader joins them. A str (from
append_dict) has tensor_type "str", dims [0] and numpy's UTF-32 bytes; dims [0] reads back as a
0-d shape, as MindSpore does. MindSpore writes no Value for a tensor with no elements. With
crc_check the file ends with b"crc_num" and the CRC32 of everything before it as 10 big-endian
bytes.

The message classes are built at run time from a `FileDescriptorProto` in a private descriptor
pool, with the protobuf library imported only here (a core dependency, imported lazily so that
`import minispore` stays light). Nothing is unpickled: a file can only yield arrays and strings.
"""
from __future__ import annotations

import binascii
import functools
import warnings

import numpy as np

from ..core import dtype as dt

CRC_MARK = b"crc_num"
_CRC_BYTES = 10
SLICE_BYTES = 512 * 1024 * 1024          # MindSpore's slice of a large tensor's bytes
_TYPES = {d.name: d for d in dt.ALL}     # "Float32" -> float32 ...
# MindSpore dtypes a checkpoint may hold that minispore has no dtype for
_NO_MINISPORE_DTYPE = ("UInt16", "UInt32", "UInt64", "Int4", "Complex64", "Complex128")


@functools.lru_cache(maxsize=1)
def message_classes():
    """(Checkpoint, TensorProto) message classes of MindSpore's checkpoint.proto, built from
    its descriptor (field numbers, labels and types as MindSpore 2.10's checkpoint_pb2)."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    F = descriptor_pb2.FieldDescriptorProto
    proto = descriptor_pb2.FileDescriptorProto(name="checkpoint.proto", syntax="proto2")
    ckpt = proto.message_type.add(name="Checkpoint")
    ckpt.field.add(name="value", number=1, label=F.LABEL_REPEATED, type=F.TYPE_MESSAGE,
                   type_name=".Checkpoint.Value")
    value = ckpt.nested_type.add(name="Value")
    value.field.add(name="tag", number=1, label=F.LABEL_REQUIRED, type=F.TYPE_STRING)
    value.field.add(name="tensor", number=2, label=F.LABEL_OPTIONAL, type=F.TYPE_MESSAGE,
                    type_name=".TensorProto", oneof_index=0)
    value.field.add(name="maptensor", number=3, label=F.LABEL_OPTIONAL, type=F.TYPE_MESSAGE,
                    type_name=".MapTensorProto", oneof_index=0)
    value.oneof_decl.add(name="value")
    tensor = proto.message_type.add(name="TensorProto")
    tensor.field.add(name="dims", number=1, label=F.LABEL_REPEATED, type=F.TYPE_INT64)
    tensor.field.add(name="tensor_type", number=2, label=F.LABEL_REQUIRED, type=F.TYPE_STRING)
    tensor.field.add(name="tensor_content", number=3, label=F.LABEL_REQUIRED, type=F.TYPE_BYTES)
    maptensor = proto.message_type.add(name="MapTensorProto")
    maptensor.field.add(name="tensor", number=1, label=F.LABEL_REPEATED, type=F.TYPE_MESSAGE,
                        type_name=".TensorProto")
    pool = descriptor_pool.DescriptorPool()
    pool.AddSerializedFile(proto.SerializeToString())      # in every protobuf >= 3
    get_class = getattr(message_factory, "GetMessageClass", None)
    if get_class is None:                                   # protobuf < 4.22
        get_class = message_factory.MessageFactory(pool).GetPrototype
    return (get_class(pool.FindMessageTypeByName("Checkpoint")),
            get_class(pool.FindMessageTypeByName("TensorProto")))


def _value_messages(name: str, value):
    """The serialized one-Value Checkpoint messages of one entry (several for a large one)."""
    Checkpoint, _ = message_classes()
    if isinstance(value, str):
        dims, type_name, content = [0], "str", np.array(value).tobytes()
        pieces = [content]
    else:
        a = np.asarray(value)
        a = a if a.flags.c_contiguous else a.copy(order="C")   # 0-d stays 0-d
        dims, type_name, content = list(a.shape), str(dt.to_dtype(a.dtype)), a.tobytes()
        pieces = [content[i:i + SLICE_BYTES] for i in range(0, len(content), SLICE_BYTES)]
    for piece in pieces:                                # no element: no Value, as MindSpore
        msg = Checkpoint()
        entry = msg.value.add()
        entry.tag = name
        entry.tensor.dims.extend(dims)
        entry.tensor.tensor_type = type_name
        entry.tensor.tensor_content = piece
        yield msg.SerializeToString()


def write(f, entries: dict, crc_check: bool) -> None:
    """Write {name: ndarray or str} to the binary file object `f` as MindSpore does, with the
    CRC32 trailer when `crc_check`."""
    crc = 0
    for name, value in entries.items():
        for data in _value_messages(name, value):
            if crc_check:
                crc = binascii.crc32(data, crc)
            f.write(data)
    if crc_check:
        f.write(CRC_MARK + crc.to_bytes(_CRC_BYTES, byteorder="big"))


def looks_like_safetensors(raw: bytes) -> bool:
    """Whether `raw` starts like a safetensors file: an 8-byte little-endian header length
    followed by that many bytes of a JSON object."""
    if len(raw) < 10:
        return False
    n = int.from_bytes(raw[:8], "little")
    return 2 <= n <= len(raw) - 8 and raw[8:9] == b"{"


def _not_a_checkpoint(path: str, raw: bytes, why: str) -> ValueError:
    if looks_like_safetensors(raw):
        return ValueError(
            f"load_checkpoint: {path!r} is a safetensors file, not MindSpore's protobuf .ckpt "
            f"format (format='ckpt'); load it as load_checkpoint('<name>.safetensors', "
            f"format='safetensors') after giving it a .safetensors name (earlier minispore "
            f"versions wrote safetensors under any name)")
    return ValueError(f"load_checkpoint: {path!r} is not a readable MindSpore .ckpt checkpoint "
                      f"({why}): the file is truncated, damaged, encrypted (dec_key is not "
                      f"supported by minispore) or not a checkpoint")


def _split_crc(path: str, raw: bytes, crc_check: bool) -> bytes:
    """The protobuf part of `raw`; checks MindSpore's CRC32 trailer when `crc_check`."""
    tail = len(CRC_MARK) + _CRC_BYTES
    if raw[-tail:-_CRC_BYTES] != CRC_MARK:
        if crc_check:
            warnings.warn(f"load_checkpoint: crc_check=True but {path!r} holds no CRC32 (it was "
                          f"saved with crc_check=False), so it is loaded unchecked",
                          RuntimeWarning, stacklevel=4)
        return raw
    body = raw[:-tail]
    if crc_check and binascii.crc32(body) != int.from_bytes(raw[-_CRC_BYTES:], "big"):
        raise ValueError(f"load_checkpoint: the CRC32 check of {path!r} failed: the file is "
                         f"damaged (its content does not match the CRC32 saved with it)")
    return body


def _array(path: str, tag: str, dims, type_name: str, content: bytes):
    """The ndarray (or str) of one joined entry, checked against its dims and type."""
    if type_name == "str":
        return str(np.frombuffer(content, f"U{len(content) // 4}")[0]) if content else ""
    d = _TYPES.get(type_name)
    if d is None:
        if type_name in _NO_MINISPORE_DTYPE:
            raise ValueError(f"load_checkpoint: entry {tag!r} of {path!r} has tensor_type "
                             f"{type_name!r}, which minispore has no dtype for; convert it in "
                             f"MindSpore (e.g. to Int32/Int64) before saving")
        raise ValueError(f"load_checkpoint: entry {tag!r} of {path!r} has the unknown "
                         f"tensor_type {type_name!r}; known: {', '.join(_TYPES)}")
    shape = () if list(dims) == [0] else tuple(int(n) for n in dims)
    if any(n < 0 for n in shape):
        raise ValueError(f"load_checkpoint: entry {tag!r} of {path!r} has negative dims "
                         f"{list(dims)}: the file is damaged")
    want = int(np.prod(shape, dtype=np.int64)) * d.itemsize
    if want != len(content):
        raise ValueError(f"load_checkpoint: entry {tag!r} of {path!r} holds {len(content)} "
                         f"bytes but its dims {list(dims)} and tensor_type {type_name} need "
                         f"{want}: the file is damaged")
    return np.frombuffer(content, d.np).reshape(shape).copy()


def read(path: str, raw: bytes, crc_check: bool, keep=None) -> dict:
    """{tag: ndarray or str} of a .ckpt file's bytes `raw`, in file order, consecutive slices
    of one tag joined; only tags for which `keep(tag)` is true when `keep` is given. Errors
    name `path` and what is wrong."""
    from google.protobuf.message import DecodeError
    Checkpoint, _ = message_classes()
    if not raw:
        raise ValueError(f"load_checkpoint: {path!r} is empty (0 bytes), not a checkpoint")
    if looks_like_safetensors(raw):
        raise _not_a_checkpoint(path, raw, "")
    body = _split_crc(path, raw, crc_check)
    msg = Checkpoint()
    try:
        msg.ParseFromString(body)
    except (DecodeError, ValueError, RuntimeError) as e:
        raise _not_a_checkpoint(path, raw, f"protobuf: {e}") from None
    if not msg.value:                   # bytes protobuf reads as unknown fields only
        raise _not_a_checkpoint(path, raw, "no Checkpoint value in it")
    out, values = {}, msg.value
    pieces = []
    for i, v in enumerate(values):
        if keep is not None and not keep(v.tag):
            continue
        if not v.HasField("tensor"):
            raise NotImplementedError(
                f"load_checkpoint: entry {v.tag!r} of {path!r} is a MapParameter (maptensor), "
                f"which minispore does not support; leave it out with "
                f"filter_prefix={v.tag!r} or choice_func")
        pieces.append(v.tensor.tensor_content)
        if i + 1 < len(values) and values[i + 1].tag == v.tag:
            continue
        out[v.tag] = _array(path, v.tag, v.tensor.dims, v.tensor.tensor_type, b"".join(pieces))
        pieces = []
    return out


__all__: list = []          # internal: the .ckpt codec of serialization.py
