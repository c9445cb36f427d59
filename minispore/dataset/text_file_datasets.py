"""mindspore.dataset's readers of rows stored in text files: TextFileDataset (one row per
line) and CSVDataset (one row per record, typed by `column_defaults`), with the `Shuffle` enum
of their `shuffle=` argument.

They are MindSpore's non-mappable sources, and their row order is MindSpore's:
- `dataset_files` (a path, a glob pattern or a list of them) is expanded and sorted;
- sharding splits the concatenated rows into `num_shards` runs of ceil(N / num_shards) rows,
  shard k reading rows k*per .. (k+1)*per - 1, wrapping past the end to the first rows;
- the files of a shard's run become blocks (file, first row, last row) handed round-robin to
  `num_parallel_workers` workers (default `config.get_num_parallel_workers()`), and the output
  takes one row from each worker in turn, skipping finished ones (so with 2 workers and files
  a, b the rows are a1 b1 a2 b2 ...); `num_samples` keeps the first rows of that stream;
- Shuffle.FILES permutes the file order every epoch (the same order on every shard);
  Shuffle.GLOBAL (also True and None) does that and shuffles the rows through a buffer of
  max(4 * rows per file, 10000) rows; Shuffle.INFILE, ADAPTIVE, PARTIAL and FALSE read in
  order, as MindSpore 2.10's TextFile/CSV readers do. Random orders come from
  `config.set_seed`, not MindSpore's generator.
"""
from __future__ import annotations

import glob
import math
import os
import re
from enum import Enum

import numpy as np

from . import Dataset, config
from .file_datasets import check_shards, check_workers, refuse_cache
from .samplers import _check_num_samples

_SALT_FILES, _SALT_ROWS = 11, 12             # config.rng salts of the file and row shuffles


class Shuffle(str, Enum):
    """The shuffle modes of MindSpore's file readers (`shuffle=` of CSVDataset/TextFileDataset)."""
    FALSE: str = "false"
    ADAPTIVE: str = "adaptive"
    GLOBAL: str = "global"
    PARTIAL: str = "partial"
    FILES: str = "files"
    INFILE: str = "infile"


# MindSpore's shuffle flag of each value (SourceDataset): is_shuffled() is flag > 0
_FLAGS = {Shuffle.GLOBAL: 2, Shuffle.FILES: 1, Shuffle.INFILE: 3, Shuffle.ADAPTIVE: 5,
          Shuffle.PARTIAL: 4, Shuffle.FALSE: 5}


def _shuffle_flag(who: str, shuffle) -> int:
    if shuffle is not None and not isinstance(shuffle, (bool, Shuffle)):
        raise TypeError(f"{who}: shuffle must be a bool or a mindspore.dataset.Shuffle value "
                        f"(Shuffle.GLOBAL, Shuffle.FILES, ...), got {shuffle!r} "
                        f"({type(shuffle).__name__})")
    if isinstance(shuffle, Shuffle):
        return _FLAGS[shuffle]
    return 2 if shuffle is None or shuffle else 0


def find_files(who: str, dataset_files) -> list:
    """MindSpore's expansion: each pattern through glob (recursive), regular files only, every
    pattern must match; the result sorted (duplicates kept)."""
    if not isinstance(dataset_files, (str, list)):
        raise TypeError(f"{who}: dataset_files must be a str or a list of str, got "
                        f"{type(dataset_files).__name__}")
    if not dataset_files:
        raise ValueError(f"{who}: dataset_files is empty; give a file path or a glob pattern")
    patterns = [dataset_files] if isinstance(dataset_files, str) else dataset_files
    files, unmatched = [], []
    for pattern in patterns:
        if not isinstance(pattern, str):
            raise TypeError(f"{who}: dataset_files must hold str paths, got {pattern!r}")
        found = [m for m in glob.glob(pattern, recursive=True) if os.path.isfile(m)]
        files.extend(found)
        if not found:
            unmatched.append(pattern)
    if unmatched:
        raise ValueError(f"{who}: these dataset_files patterns match no file: {unmatched}")
    return sorted(files)


def shard_blocks(counts: list, num_shards: int, shard_id: int) -> list:
    """The (file index, first row, end row) blocks of one shard, in reading order: files are
    walked cyclically until the shard's run of ceil(N / num_shards) rows is covered (MindSpore's
    NeedPushFileToBlockQueue; an empty file inside the run is an empty block)."""
    total = sum(counts)
    per_shard = -(-total // num_shards)
    start, end = shard_id * per_shard, (shard_id + 1) * per_shard
    blocks, pre = [], 0
    while pre < end:
        for k, n in enumerate(counts):
            if pre <= start < pre + n:
                blocks.append((k, start - pre, min(n, end - pre)))
            elif start < pre < end:
                blocks.append((k, 0, min(n, end - pre)))
            pre += n
            if pre >= end:
                break
    return blocks


class _LineFileReader(Dataset):
    """The sharding, worker interleaving, num_samples and shuffles of a text-file reader;
    subclasses give `_count(path)` (rows of a file) and `_read(path)` (its rows in order)."""

    def __init__(self, dataset_files, num_samples, num_parallel_workers, shuffle, num_shards,
                 shard_id, cache):
        super().__init__()
        who = type(self).__name__
        refuse_cache(who, cache)
        self.dataset_files = find_files(who, dataset_files)
        self.num_samples = _check_num_samples(num_samples, who)
        self.num_parallel_workers = check_workers(who, num_parallel_workers)
        self.shuffle_flag = _shuffle_flag(who, shuffle)
        check_shards(who, num_shards, shard_id)
        self.num_shards, self.shard_id = num_shards, shard_id
        self._counts = None

    def counts(self) -> list:
        if self._counts is None:
            self._counts = [self._count(p) for p in self.dataset_files]
        return self._counts

    def is_shuffled(self) -> bool:
        return self.shuffle_flag > 0

    def is_sharded(self) -> bool:
        return (self.num_shards or 1) > 1

    def _size(self):
        total = sum(self.counts())
        n = -(-total // (self.num_shards or 1))
        return min(n, self.num_samples) if self.num_samples else n

    def _rows(self, epoch):
        counts = self.counts()
        if sum(counts) == 0:
            return
        order = list(range(len(counts)))
        if self.shuffle_flag in (1, 2):           # FILES or GLOBAL: a new file order per epoch
            order = [int(k) for k in config.rng(epoch, salt=_SALT_FILES).permutation(order)]
        blocks = shard_blocks([counts[k] for k in order], self.num_shards or 1,
                              self.shard_id or 0)
        workers = self.num_parallel_workers or _default_workers()
        queues = [[] for _ in range(workers)]
        for j, (k, lo, hi) in enumerate(blocks):
            queues[j % workers].append((self.dataset_files[order[k]], lo, hi))
        rows = self._interleave([self._stream(q) for q in queues if q])
        if self.num_samples:
            rows = _first(rows, self.num_samples)
        if self.shuffle_flag == 2:
            rows = self._buffer_shuffle(rows, epoch, counts)
        yield from rows

    def _stream(self, blocks):
        for path, lo, hi in blocks:
            for i, row in enumerate(self._read(path)):
                if i >= hi:
                    break
                if i >= lo:
                    yield row

    @staticmethod
    def _interleave(streams):
        live = list(streams)
        while live:
            still = []
            for s in live:
                row = next(s, None)
                if row is not None:
                    yield row
                    still.append(s)
            live = still

    def _buffer_shuffle(self, rows, epoch, counts):
        """MindSpore's shuffle after a GLOBAL-shuffled file reader: a buffer of
        max(4 * rows per file of one shard, 10000) rows (DatasetNode::ComputeShuffleSize)."""
        per_shard = -(-sum(counts) // (self.num_shards or 1))
        if self.num_samples:
            per_shard = min(per_shard, self.num_samples)
        size = max(per_shard // len(counts) * 4, 10000)
        rng, buf = config.rng(epoch, salt=_SALT_ROWS), []
        for row in rows:
            buf.append(row)
            if len(buf) >= size:
                yield buf.pop(int(rng.integers(len(buf))))
        while buf:
            yield buf.pop(int(rng.integers(len(buf))))


def _default_workers() -> int:
    """config.get_num_parallel_workers(): MindSpore's default, min(8, CPU count)."""
    getter = getattr(config, "get_num_parallel_workers", None)
    return getter() if getter is not None else max(1, min(8, os.cpu_count() or 1))


def _first(rows, n):
    for k, row in enumerate(rows):
        if k >= n:
            return
        yield row


def _lines(who: str, path: str):
    """The non-empty lines of a file (split at '\\n' only: a '\\r' stays), decoded as UTF-8."""
    with open(path, "rb") as f:
        for k, line in enumerate(f):
            if line.endswith(b"\n"):
                line = line[:-1]
            if not line:
                continue
            try:
                yield line.decode("utf-8")
            except UnicodeDecodeError as e:
                raise ValueError(f"{who}: line {k + 1} of {path} is not UTF-8 text ({e})") \
                    from None


class TextFileDataset(_LineFileReader):
    """One row per non-empty line of the files (column text, a numpy str scalar; the line
    without its '\\n', a '\\r' of CRLF files kept, as in MindSpore)."""

    def __init__(self, dataset_files, num_samples=None, num_parallel_workers=None,
                 shuffle=Shuffle.GLOBAL, num_shards=None, shard_id=None, cache=None):
        super().__init__(dataset_files, num_samples, num_parallel_workers, shuffle, num_shards,
                         shard_id, cache)
        self.column_names = ["text"]

    def _count(self, path):
        return sum(1 for _ in _lines("TextFileDataset", path))

    def _read(self, path):
        for line in _lines("TextFileDataset", path):
            yield (np.array(line),)


# -------------------------------------------------------------------------------- CSV -------
_INT = re.compile(r"[ \t\n\v\f\r]*([+-]?[0-9]+)")
_FLOAT = re.compile(r"[ \t\n\v\f\r]*([+-]?(?:0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)"
                    r"(?:[pP][+-]?[0-9]+)?|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|"
                    r"inf(?:inity)?|nan))", re.IGNORECASE)
_F32_TINY = float(np.finfo(np.float32).tiny)


def _c_int(text: str):
    """C++ std::stoi: leading blanks, the longest integer prefix, int32 range; else None."""
    m = _INT.match(text)
    if m is None:
        return None
    v = int(m.group(1))
    return v if -2**31 <= v < 2**31 else None


def _c_float(text: str):
    """C++ std::stof: the longest float prefix (decimal, hex, inf, nan); None when there is none
    or it is out of float32's range (overflow or underflow, std::stof's out_of_range)."""
    m = _FLOAT.match(text)
    if m is None:
        return None
    s = m.group(1)
    body = s.lstrip("+-").lower()
    if body.startswith("0x"):
        v = float.fromhex(s if "p" in body else s + "p0")
    else:
        v = float(s)
    with np.errstate(over="ignore"):
        f = np.float32(v)
    if (np.isinf(f) and not math.isinf(v)) or (v != 0 and abs(float(f)) < _F32_TINY):
        return None
    return f


def _records(who: str, path: str, delim: str, skip_header: bool):
    """The records of a CSV file as lists of str: fields split at `delim`; a field that starts
    with '"' is quoted ('""' inside is one '"', delimiters and line ends inside are kept);
    a '"' inside an unquoted field is an error; '\\r' and '\\n' end a record; empty lines are
    skipped. With skip_header the first line is not a record."""
    with open(path, "rb") as f:
        text = f.read().decode("utf-8")
    i, n = 0, len(text)
    if skip_header:
        nl = text.find("\n")
        i = n if nl < 0 else nl + 1
    line = 1 + skip_header
    while i < n:
        if text[i] in "\r\n":
            line += text[i] == "\n"
            i += 1
            continue
        fields, field_start_line = [], line
        while True:
            if i < n and text[i] == '"':
                j, buf = i + 1, []
                while True:
                    q = text.find('"', j)
                    if q < 0:
                        raise ValueError(f"{who}: {path} line {field_start_line}: a quoted field "
                                         f"is not closed")
                    buf.append(text[j:q])
                    if q + 1 < n and text[q + 1] == '"':
                        buf.append('"')
                        j = q + 2
                        continue
                    break
                value = "".join(buf)
                line += value.count("\n")
                i = q + 1
                if i < n and text[i] not in delim + "\r\n":
                    raise ValueError(f"{who}: {path} line {line}: unexpected {text[i]!r} after "
                                     f"a closing quote; quote the whole field")
            else:
                j = i
                while j < n and text[j] not in delim + "\r\n":
                    if text[j] == '"':
                        raise ValueError(f"{who}: {path} line {line}: a quote inside an "
                                         f"unquoted field; quote the whole field and double "
                                         f"the inner quotes")
                    j += 1
                value, i = text[i:j], j
            fields.append(value)
            if i < n and text[i] == delim:
                i += 1
                continue
            break
        yield field_start_line, fields


def _header(who: str, path: str, delim: str) -> list:
    """The column names of a CSV file's first line, split at `delim` as they are (MindSpore
    does not unquote them)."""
    with open(path, "rb") as f:
        first = f.readline().decode("utf-8").rstrip("\n").rstrip("\r")
    if not first:
        raise ValueError(f"{who}: the first line of {path} is empty; it should name the "
                         f"columns, or pass column_names")
    return first.split(delim)


class CSVDataset(_LineFileReader):
    """The records of CSV files, one column per field. Without `column_names` the first line of
    every file is a header and the first file's names the columns. `column_defaults` gives each
    column's type by the type of its value: int -> int32 (parsed as C's stoi: the integer
    prefix, '2.5' -> 2), float -> float32 (stof: '1e3', 'inf', '2.5abc' -> 2.5), str -> str;
    columns past the list are str. As in MindSpore the default values themselves are never
    used: an empty field of a numeric column is an error, of a str column ''."""

    def __init__(self, dataset_files, field_delim=',', column_defaults=None, column_names=None,
                 num_samples=None, num_parallel_workers=None, shuffle=Shuffle.GLOBAL,
                 num_shards=None, shard_id=None, cache=None):
        who = "CSVDataset"
        super().__init__(dataset_files, num_samples, num_parallel_workers, shuffle, num_shards,
                         shard_id, cache)
        if field_delim is None:
            field_delim = ","
        if not isinstance(field_delim, str) or len(field_delim) != 1 or \
                field_delim in ('"', "\r", "\n"):
            raise ValueError(f"CSVDataset: field_delim must be one character other than '\"', "
                             f"'\\r' and '\\n', got {field_delim!r}")
        self.field_delim = field_delim
        if column_defaults is not None:
            if not isinstance(column_defaults, list):
                raise TypeError(f"{who}: column_defaults must be a list of int, float or str "
                                f"values (one per column), got {type(column_defaults).__name__}")
            for k, v in enumerate(column_defaults):
                if not isinstance(v, (str, int, float)):
                    raise TypeError(f"{who}: column_defaults[{k}] must be an int, float or str, "
                                    f"got {v!r} ({type(v).__name__})")
        if column_names is not None and (not isinstance(column_names, list) or
                                         not all(isinstance(c, str) for c in column_names)):
            raise TypeError(f"{who}: column_names must be a list of str, got {column_names!r}")
        self._has_header = not column_names
        names = list(column_names) if column_names else \
            _header(who, self.dataset_files[0], field_delim)
        if len(set(names)) != len(names):
            raise ValueError(f"{who}: the column names {names} repeat a name; pass distinct "
                             f"column_names")
        defaults = list(column_defaults or [])
        if len(defaults) > len(names):
            raise ValueError(f"{who}: {len(defaults)} column_defaults for {len(names)} "
                             f"column(s) {names}")
        self.column_defaults = defaults
        self.column_names = names
        self._kinds = [str if isinstance(v, str) else float if isinstance(v, float) else int
                       for v in defaults] + [str] * (len(names) - len(defaults))

    def _count(self, path):
        return sum(1 for _ in _records("CSVDataset", path, self.field_delim, self._has_header))

    def _read(self, path):
        names = self.column_names
        for line, fields in _records("CSVDataset", path, self.field_delim, self._has_header):
            if len(fields) != len(names):
                raise ValueError(f"CSVDataset: {path} line {line} has {len(fields)} field(s) "
                                 f"but there are {len(names)} columns {names}")
            row = []
            for value, kind, name in zip(fields, self._kinds, names):
                if kind is str:
                    row.append(np.array(value))
                    continue
                parsed = _c_int(value) if kind is int else _c_float(value)
                if parsed is None:
                    wanted = "an int32" if kind is int else "a float32"
                    raise ValueError(f"CSVDataset: {path} line {line}: column {name!r} holds "
                                     f"{value!r}, which is not {wanted} (the column's type "
                                     f"from column_defaults)")
                row.append(np.array(parsed, dtype=np.int32 if kind is int else np.float32))
            yield tuple(row)


__all__ = ["Shuffle", "CSVDataset", "TextFileDataset"]
