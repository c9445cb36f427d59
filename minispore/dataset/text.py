"""`mindspore.dataset.text`: Vocab and the text ops on numpy string arrays (Lookup, the
Whitespace/Regex/UnicodeChar/Python tokenizers, AddToken, Truncate, ToNumber, SlidingWindow,
to_str/to_bytes; CaseFold, NormalizeUTF8, RegexReplace and Ngram from text_normalize), with
MindSpore's ids, orders, offsets (UTF-8 bytes) and dtypes."""
from __future__ import annotations

import collections
import numbers
import re

import numpy as np

from ..core import dtype as mstype
from .text_normalize import (CaseFold, Ngram, NormalizeForm, NormalizeUTF8, RegexReplace,
                             _strings)
from .transforms import np_dtype


def _is_int(v) -> bool:
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def _unique(what: str, words) -> None:
    seen = set()
    for w in words:
        if w in seen:
            raise ValueError(f"Vocab: {what} contains the duplicate word {w!r}")
        seen.add(w)


class Vocab:
    """Words and their ids; build one with from_list / from_dict / from_dataset / from_file."""

    def __init__(self):
        self._ids = None

    @classmethod
    def _built(cls, ids: dict) -> "Vocab":
        v = cls()
        v._ids = dict(ids)
        v._words = {i: w for w, i in reversed(list(v._ids.items()))}
        return v

    @classmethod
    def _with_specials(cls, words, special_tokens, special_first) -> "Vocab":
        specials = list(special_tokens or [])
        if not isinstance(special_first, bool):
            raise TypeError(f"Vocab: special_first must be a bool, got {special_first!r}")
        _unique("special_tokens", specials)
        both = set(words) & set(specials)
        if both:
            raise ValueError(f"Vocab: special_tokens and the words share {sorted(both)}")
        order = specials + list(words) if special_first else list(words) + specials
        return cls._built({w: i for i, w in enumerate(order)})

    @classmethod
    def from_list(cls, word_list, special_tokens=None, special_first=True) -> "Vocab":
        """Ids in list order; special_tokens go first (ids 0..) or after the words."""
        if not isinstance(word_list, (list, tuple)) or not all(isinstance(w, str)
                                                               for w in word_list):
            raise TypeError(f"Vocab.from_list: word_list must be a list of str, got "
                            f"{word_list!r}")
        _unique("word_list", word_list)
        return cls._with_specials(word_list, special_tokens, special_first)

    @classmethod
    def from_dict(cls, word_dict) -> "Vocab":
        """The given word -> id mapping (ids >= 0)."""
        if not isinstance(word_dict, dict) or not all(
                isinstance(w, str) and _is_int(i) for w, i in word_dict.items()):
            raise TypeError(f"Vocab.from_dict: word_dict must map str to int, got "
                            f"{word_dict!r}")
        if any(i < 0 for i in word_dict.values()):
            raise ValueError("Vocab.from_dict: every id must be >= 0")
        return cls._built(word_dict)

    @classmethod
    def from_file(cls, file_path, delimiter="", vocab_size=None, special_tokens=None,
                  special_first=True) -> "Vocab":
        """One word per line (the text before `delimiter` when given), the first vocab_size
        lines."""
        words = []
        with open(file_path, encoding="utf-8") as f:
            for line in f:
                line = line.rstrip("\r\n")
                word = line.split(delimiter, 1)[0] if delimiter else line
                if vocab_size is not None and len(words) >= vocab_size:
                    break
                words.append(word)
        _unique(f"the file {file_path}", words)
        return cls._with_specials(words, special_tokens, special_first)

    @classmethod
    def from_dataset(cls, dataset, columns=None, freq_range=None, top_k=None,
                     special_tokens=None, special_first=True) -> "Vocab":
        """Count the words of `columns` (all by default) of one pass over `dataset`; keep those
        with a count in freq_range (min, max inclusive), order by count (most first, ties
        alphabetically, as MindSpore does), keep the top_k, then add special_tokens."""
        cols = [columns] if isinstance(columns, str) else columns
        counts = collections.Counter()
        for row in dataset.create_dict_iterator(num_epochs=1, output_numpy=True):
            for name in (cols if cols is not None else list(row)):
                if name not in row:
                    raise ValueError(f"Vocab.from_dataset: column {name!r} is not in the "
                                     f"dataset's columns {list(row)}")
                value = np.asarray(row[name])
                counts.update(_as_str(v) for v in value.reshape(-1))
        lo, hi = (0, None) if freq_range is None else freq_range
        words = [w for w, n in counts.items() if n >= (lo or 0) and (hi is None or n <= hi)]
        words.sort(key=lambda w: (-counts[w], w))
        if top_k is not None:
            if not _is_int(top_k) or top_k < 1:
                raise ValueError(f"Vocab.from_dataset: top_k must be an int >= 1, got {top_k!r}")
            words = words[:top_k]
        words = [w for w in words if w not in set(special_tokens or [])]
        return cls._with_specials(words, special_tokens, special_first)

    def _check_built(self):
        if self._ids is None:
            raise RuntimeError("Vocab: the Vocab is not built yet; use Vocab.from_dataset(), "
                               "from_list(), from_file() or from_dict()")

    def vocab(self) -> dict:
        """The word -> id dict."""
        self._check_built()
        return dict(self._ids)

    def tokens_to_ids(self, tokens):
        """Id of each token (-1 for a word not in the vocab); a str gives an int."""
        self._check_built()
        if isinstance(tokens, str):
            return self._ids.get(tokens, -1)
        if isinstance(tokens, np.ndarray):
            tokens = [_as_str(t) for t in tokens.reshape(-1)]
        if not isinstance(tokens, (list, tuple)):
            raise TypeError(f"Vocab.tokens_to_ids: tokens must be a str, a list of str or a "
                            f"numpy array, got {type(tokens).__name__}")
        return [self._ids.get(t, -1) for t in tokens]

    def ids_to_tokens(self, ids):
        """Word of each id ('' for an id not in the vocab); an int gives a str."""
        self._check_built()
        one = _is_int(ids)
        if isinstance(ids, np.ndarray):
            ids = ids.reshape(-1).tolist()
        if not one and not (isinstance(ids, (list, tuple)) and all(map(_is_int, ids))):
            raise TypeError(f"Vocab.ids_to_tokens: ids must be an int, a list of int or a numpy"
                            f" array, got {ids!r}")
        vals = [ids] if one else list(ids)
        if any(i < 0 for i in vals):
            raise ValueError(f"Vocab.ids_to_tokens: ids must be >= 0, got {ids!r}")
        out = [self._words.get(int(i), "") for i in vals]
        return out[0] if one else out


def _as_str(v) -> str:
    if isinstance(v, (bytes, np.bytes_)):
        return bytes(v).decode("utf-8")
    return str(v)


class Lookup:
    """Words -> ids of `vocab` as data_type; a word not in it becomes unknown_token's id
    (without unknown_token it is an error)."""

    def __init__(self, vocab, unknown_token=None, data_type=mstype.int32):
        if not isinstance(vocab, Vocab):
            raise TypeError(f"Lookup: vocab must be a text.Vocab, got {type(vocab).__name__}")
        vocab._check_built()
        if unknown_token is not None and not isinstance(unknown_token, str):
            raise TypeError(f"Lookup: unknown_token must be a str, got {unknown_token!r}")
        self.vocab, self.unknown_token = vocab, unknown_token
        self.np_dtype = np_dtype("Lookup", data_type)
        if self.np_dtype.kind not in "biuf":
            raise TypeError(f"Lookup: data_type must be numeric (or bool), got {data_type!r}")

    def __call__(self, words):
        x = _strings("Lookup", words)
        ids = self.vocab._ids
        unk = None
        if self.unknown_token is not None:
            if self.unknown_token not in ids:
                raise RuntimeError(f"Lookup: unknown_token {self.unknown_token!r} is not in the "
                                   f"vocab")
            unk = ids[self.unknown_token]
        out = []
        for w in x.reshape(-1).tolist():
            i = ids.get(w, unk)
            if i is None:
                raise RuntimeError(f"Lookup: {w!r} is not in the vocab and no unknown_token "
                                   f"was given; pass unknown_token=<a word of the vocab>")
            out.append(i)
        return np.asarray(out, np.int64).astype(self.np_dtype).reshape(x.shape)


def _utf8_offsets(text: str, spans):
    """Character spans -> UTF-8 byte (start, limit) arrays, as MindSpore reports offsets."""
    starts, limits = [], []
    for a, b in spans:
        starts.append(len(text[:a].encode("utf-8")))
        limits.append(len(text[:b].encode("utf-8")))
    return np.asarray(starts, np.uint32), np.asarray(limits, np.uint32)


def _tokens(text: str, spans, with_offsets: bool):
    if not spans:                                    # MindSpore returns one empty token
        spans = [(0, 0)]
    tokens = np.asarray([text[a:b] for a, b in spans])
    if not with_offsets:
        return tokens
    return (tokens,) + _utf8_offsets(text, spans)


def _one_string(op: str, text) -> str:
    x = _strings(op, text)
    if x.ndim != 0:
        raise ValueError(f"{op}: the input must be one string (a 0-D array), got shape "
                         f"{x.shape}")
    return str(x)


class WhitespaceTokenizer:
    """Split one string on (Unicode) whitespace; with_offsets also returns the UTF-8 byte
    offsets (start, limit) of each token."""

    def __init__(self, with_offsets=False):
        if not isinstance(with_offsets, bool):
            raise TypeError(f"WhitespaceTokenizer: with_offsets must be a bool, got "
                            f"{with_offsets!r}")
        self.with_offsets = with_offsets

    def __call__(self, text):
        s = _one_string("WhitespaceTokenizer", text)
        spans = [m.span() for m in re.finditer(r"\S+", s)]
        return _tokens(s, spans, self.with_offsets)


class RegexTokenizer:
    """Split one string at matches of delim_pattern; delimiters that match keep_delim_pattern
    are kept as tokens; empty pieces are dropped."""

    def __init__(self, delim_pattern, keep_delim_pattern="", with_offsets=False):
        if not isinstance(delim_pattern, str) or not isinstance(keep_delim_pattern, str):
            raise TypeError("RegexTokenizer: delim_pattern and keep_delim_pattern must be str")
        if not isinstance(with_offsets, bool):
            raise TypeError(f"RegexTokenizer: with_offsets must be a bool, got "
                            f"{with_offsets!r}")
        self.delim = re.compile(delim_pattern)
        self.keep = re.compile(keep_delim_pattern) if keep_delim_pattern else None
        self.with_offsets = with_offsets

    def __call__(self, text):
        s = _one_string("RegexTokenizer", text)
        spans, pos = [], 0
        for m in self.delim.finditer(s):
            if m.start() == m.end():
                continue
            if m.start() > pos:
                spans.append((pos, m.start()))
            if self.keep is not None and self.keep.fullmatch(m.group()):
                spans.append(m.span())
            pos = m.end()
        if pos < len(s):
            spans.append((pos, len(s)))
        return _tokens(s, spans, self.with_offsets)


class UnicodeCharTokenizer:
    """Split one string into its characters; with_offsets also returns their UTF-8 byte
    offsets."""

    def __init__(self, with_offsets=False):
        if not isinstance(with_offsets, bool):
            raise TypeError(f"UnicodeCharTokenizer: with_offsets must be a bool, got "
                            f"{with_offsets!r}")
        self.with_offsets = with_offsets

    def __call__(self, text):
        s = _one_string("UnicodeCharTokenizer", text)
        return _tokens(s, [(i, i + 1) for i in range(len(s))], self.with_offsets)


class PythonTokenizer:
    """Tokens from a Python function of one string returning a list of str."""

    def __init__(self, tokenizer):
        if not callable(tokenizer):
            raise TypeError(f"PythonTokenizer: tokenizer must be callable, got {tokenizer!r}")
        self.tokenizer = tokenizer

    def __call__(self, text):
        if not isinstance(text, np.ndarray):
            raise TypeError(f"PythonTokenizer: the input should be a numpy array (as MindSpore "
                            f"requires), got {type(text).__name__}")
        return np.asarray(self.tokenizer(_one_string("PythonTokenizer", text)), dtype=str)


class AddToken:
    """Put `token` before (begin=True) or after the tokens of the last axis."""

    def __init__(self, token, begin=True):
        if not isinstance(token, str) or not isinstance(begin, bool):
            raise TypeError(f"AddToken: token must be a str and begin a bool, got {token!r}, "
                            f"{begin!r}")
        self.token, self.begin = token, begin

    def __call__(self, tokens):
        x = _strings("AddToken", tokens)
        if x.ndim not in (1, 2):
            raise ValueError(f"AddToken: the input must be 1-D or 2-D, got shape {x.shape}")
        extra = np.full(x.shape[:-1] + (1,), self.token)
        return np.concatenate([extra, x] if self.begin else [x, extra], axis=-1)


class Truncate:
    """Keep the first max_seq_len items of the last axis (1-D or 2-D data)."""

    def __init__(self, max_seq_len):
        if not _is_int(max_seq_len) or max_seq_len < 1:
            raise ValueError(f"Truncate: max_seq_len must be an int >= 1, got {max_seq_len!r}")
        self.max_seq_len = int(max_seq_len)

    def __call__(self, x):
        x = np.asarray(x)
        if x.ndim not in (1, 2):
            raise ValueError(f"Truncate: the input must be 1-D or 2-D, got shape {x.shape}")
        return np.ascontiguousarray(x[..., :self.max_seq_len])


_INT_PREFIX = re.compile(r"\s*[+-]?\d+")
_FLOAT_PREFIX = re.compile(r"\s*[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf(?:inity)?|nan)",
                           re.IGNORECASE)


class ToNumber:
    """Strings -> numbers of data_type, reading the longest numeric prefix as C++'s stoll /
    stod do ('1.5' as an int is 1); a value out of the type's range is an error."""

    def __init__(self, data_type):
        self.np_dtype = np_dtype("ToNumber", data_type)
        if self.np_dtype.kind not in "iuf":
            raise TypeError(f"ToNumber: data_type must be a numeric type, got {data_type!r}")

    def _one(self, s: str):
        integer = self.np_dtype.kind in "iu"
        m = (_INT_PREFIX if integer else _FLOAT_PREFIX).match(s)
        if m is None:
            raise RuntimeError(f"ToNumber: cannot convert {s!r} to {self.np_dtype}")
        value = int(m.group()) if integer else float(m.group())
        if integer:
            info = np.iinfo(self.np_dtype)
            if not info.min <= value <= info.max:
                raise RuntimeError(f"ToNumber: {s!r} is out of the range of {self.np_dtype}")
        elif np.isfinite(value) and abs(value) > float(np.finfo(self.np_dtype).max):
            raise RuntimeError(f"ToNumber: {s!r} is out of the range of {self.np_dtype}")
        return value

    def __call__(self, strings):
        x = _strings("ToNumber", strings)
        vals = [self._one(s) for s in x.reshape(-1).tolist()]
        return np.asarray(vals, dtype=self.np_dtype).reshape(x.shape)


class SlidingWindow:
    """Windows of `width` consecutive items of 1-D data: shape (n - width + 1, width) (empty
    when the data is shorter than width)."""

    def __init__(self, width, axis=0):
        if not _is_int(width) or width < 1:
            raise ValueError(f"SlidingWindow: width must be an int >= 1, got {width!r}")
        if axis not in (0, -1) or not _is_int(axis):
            raise ValueError(f"SlidingWindow: axis must be 0 (or -1) for 1-D data, as in "
                             f"MindSpore, got {axis!r}")
        self.width, self.axis = int(width), axis

    def __call__(self, x):
        x = np.asarray(x)
        if x.ndim != 1:
            raise ValueError(f"SlidingWindow: the input must be 1-D, got shape {x.shape}")
        n = len(x) - self.width + 1
        if n <= 0:
            return np.empty((0,), x.dtype)
        return np.stack([x[i:i + self.width] for i in range(n)])


def to_str(array, encoding="utf8") -> np.ndarray:
    """A numpy bytes array decoded to str."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"to_str: array must be a numpy array, got {type(array).__name__}")
    return np.char.decode(array, encoding)


def to_bytes(array, encoding="utf8") -> np.ndarray:
    """A numpy str array encoded to bytes."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"to_bytes: array must be a numpy array, got {type(array).__name__}")
    return np.char.encode(array, encoding)


__all__ = ["Vocab", "Lookup", "WhitespaceTokenizer", "RegexTokenizer", "UnicodeCharTokenizer",
           "PythonTokenizer", "AddToken", "Truncate", "ToNumber", "SlidingWindow", "to_str",
           "to_bytes", "CaseFold", "NormalizeForm", "NormalizeUTF8", "RegexReplace", "Ngram"]
