"""`dataset.text`'s string-rewriting ops with MindSpore's results: CaseFold, NormalizeUTF8
(NormalizeForm), RegexReplace (ICU's $n group references) and Ngram; re-exported by
`dataset.text`."""
from __future__ import annotations

import re
import unicodedata
from enum import IntEnum

import numpy as np


def _strings(op: str, x) -> np.ndarray:
    x = np.asarray(x)
    if x.dtype.kind == "S":
        x = np.char.decode(x, "utf-8")
    if x.dtype.kind != "U":
        raise TypeError(f"{op}: the input must be strings, got {x.dtype}")
    return x


def _each(x: np.ndarray, fn) -> np.ndarray:
    out = [fn(s) for s in x.reshape(-1).tolist()]
    return np.asarray(out, dtype=str).reshape(x.shape)


class CaseFold:
    """Unicode full case folding (str.casefold: 'ß' becomes 'ss')."""

    def __call__(self, text):
        return _each(_strings("CaseFold", text), str.casefold)


class NormalizeForm(IntEnum):
    """Unicode normalisation forms, MindSpore's values."""
    NONE = 0
    NFC = 1
    NFKC = 2
    NFD = 3
    NFKD = 4


class NormalizeUTF8:
    """Unicode normalisation of every string (NFKC by default; NONE leaves them)."""

    def __init__(self, normalize_form=NormalizeForm.NFKC):
        if not isinstance(normalize_form, NormalizeForm):
            raise TypeError(f"NormalizeUTF8: normalize_form must be a text.NormalizeForm, got "
                            f"{normalize_form!r}")
        self.normalize_form = normalize_form

    def __call__(self, text):
        x = _strings("NormalizeUTF8", text)
        if self.normalize_form == NormalizeForm.NONE:
            return x
        form = self.normalize_form.name
        return _each(x, lambda s: unicodedata.normalize(form, s))


class RegexReplace:
    """Replace matches of `pattern` in one string by `replace` ($1.. name the groups, as in
    ICU); only the first match unless replace_all."""

    def __init__(self, pattern, replace, replace_all=True):
        if not isinstance(pattern, str) or not isinstance(replace, str):
            raise TypeError("RegexReplace: pattern and replace must be str")
        if not isinstance(replace_all, bool):
            raise TypeError(f"RegexReplace: replace_all must be a bool, got {replace_all!r}")
        self.pattern, self.replace, self.replace_all = pattern, replace, replace_all
        self._regex = re.compile(pattern)
        self._template = re.sub(r"\$(\d+)", r"\\g<\1>", replace.replace("\\", "\\\\"))

    def __call__(self, text):
        x = _strings("RegexReplace", text)
        if x.ndim != 0:
            # MindSpore 2.10 joins the strings of an array into its first element; refuse
            raise ValueError(f"RegexReplace: the input must be one string (a 0-D array), got "
                             f"shape {x.shape}; map it over single strings")
        out = self._regex.sub(self._template, str(x), count=0 if self.replace_all else 1)
        return np.asarray(out)


class Ngram:
    """The n-grams (for each n in `n`, in order) of 1-D tokens joined by `separator`, after
    padding left_pad[1] copies of left_pad[0] before and right_pad[1] of right_pad[0] after;
    no n-gram at all gives ['']."""

    def __init__(self, n, left_pad=("", 0), right_pad=("", 0), separator=" "):
        ns = [n] if isinstance(n, int) and not isinstance(n, bool) else n
        if not isinstance(ns, (list, tuple)) or not ns or not all(
                isinstance(k, int) and not isinstance(k, bool) and k >= 1 for k in ns):
            raise ValueError(f"Ngram: n must be an int >= 1 or a list of them, got {n!r}")
        for name, pad in (("left_pad", left_pad), ("right_pad", right_pad)):
            if not (isinstance(pad, tuple) and len(pad) == 2 and isinstance(pad[0], str) and
                    isinstance(pad[1], int) and pad[1] >= 0):
                raise TypeError(f"Ngram: {name} must be a (str, int >= 0) pair, got {pad!r}")
        if not isinstance(separator, str):
            raise TypeError(f"Ngram: separator must be a str, got {separator!r}")
        self.n, self.left_pad, self.right_pad = list(ns), left_pad, right_pad
        self.separator = separator

    def __call__(self, tokens):
        x = _strings("Ngram", tokens)
        if x.ndim != 1:
            raise ValueError(f"Ngram: the input must be 1-D tokens, got shape {x.shape}")
        padded = [self.left_pad[0]] * self.left_pad[1] + x.tolist() + \
            [self.right_pad[0]] * self.right_pad[1]
        grams = [self.separator.join(padded[i:i + k]) for k in self.n
                 for i in range(len(padded) - k + 1)]
        return np.asarray(grams or [""], dtype=str)


__all__ = ["CaseFold", "NormalizeForm", "NormalizeUTF8", "RegexReplace", "Ngram"]
