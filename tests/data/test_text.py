"""dataset.text against MindSpore 2.10 (values from MindSpore 2.10): Vocab ids (special tokens
first or last, from_dataset's order by count then alphabetically), Lookup with and without
unknown_token, the tokenizers' tokens and UTF-8 byte offsets, ToNumber's C++-style parsing,
SlidingWindow, and the errors."""
import numpy as np
import pytest

import minispore as ms
from minispore.dataset import NumpySlicesDataset, text


def _vocab():
    return text.Vocab.from_list(["a", "b", "c"], special_tokens=["<pad>", "<unk>"])


def test_vocab_ids_are_mindspores():
    v = _vocab()
    assert v.vocab() == {"<pad>": 0, "<unk>": 1, "a": 2, "b": 3, "c": 4}
    last = text.Vocab.from_list(["a", "b", "c"], ["<pad>", "<unk>"], special_first=False)
    assert last.vocab() == {"a": 0, "b": 1, "c": 2, "<pad>": 3, "<unk>": 4}
    assert v.tokens_to_ids(["a", "zz", "<unk>"]) == [2, -1, 1] and v.tokens_to_ids("b") == 3
    assert v.ids_to_tokens([0, 3, 99]) == ["<pad>", "b", ""] and v.ids_to_tokens(2) == "a"
    d = text.Vocab.from_dict({"x": 3, "y": 7})
    assert d.ids_to_tokens([3, 4]) == ["x", ""] and d.tokens_to_ids(["x", "q"]) == [3, -1]


def test_vocab_from_dataset_orders_by_count_then_alphabetically():
    data = NumpySlicesDataset({"text": ["zz a m", "q b b"]}, shuffle=False)
    data = data.map(text.WhitespaceTokenizer(), "text")
    assert text.Vocab.from_dataset(data, columns="text").vocab() == \
        {"b": 0, "a": 1, "m": 2, "q": 3, "zz": 4}
    assert text.Vocab.from_dataset(data, ["text"], special_tokens=["<s>", "<unk>"]).vocab() == \
        {"<s>": 0, "<unk>": 1, "b": 2, "a": 3, "m": 4, "q": 5, "zz": 6}
    data = NumpySlicesDataset({"text": ["a b c", "b c zz", "c"]}, shuffle=False)
    data = data.map(text.WhitespaceTokenizer(), "text")
    assert text.Vocab.from_dataset(data, "text", top_k=2, special_tokens=["<pad>"],
                                   special_first=False).vocab() == {"c": 0, "b": 1, "<pad>": 2}
    assert text.Vocab.from_dataset(data, "text", freq_range=(2, 10)).vocab() == {"c": 0, "b": 1}


def test_lookup():
    v = _vocab()
    out = text.Lookup(v, "<unk>")(np.array(["a", "c", "zz"]))
    assert out.tolist() == [2, 4, 1] and out.dtype == np.int32
    assert text.Lookup(v, "<unk>")("b").tolist() == 3
    assert text.Lookup(v, "<unk>", ms.int64)(np.array(["a"])).dtype == np.int64
    assert text.Lookup(v, "<unk>")(np.array([["a", "b"], ["c", "q"]])).tolist() == [[2, 3], [4, 1]]
    with pytest.raises(RuntimeError, match="'zz' is not in the vocab"):
        text.Lookup(v)(np.array(["a", "zz"]))
    with pytest.raises(RuntimeError, match="unknown_token 'nope'"):
        text.Lookup(v, "nope")(np.array(["a"]))
    with pytest.raises(TypeError, match="numeric"):
        text.Lookup(v, "a", np.str_)


def test_lookup_in_a_pipeline():
    data = NumpySlicesDataset({"text": ["a b c", "b c zz", "c"]}, shuffle=False)
    data = data.map(text.WhitespaceTokenizer(), "text")
    data = data.map(text.Lookup(text.Vocab.from_list(["a", "b", "c", "<unk>"]), "<unk>"), "text")
    rows = [r[0].tolist() for r in data.create_tuple_iterator(output_numpy=True)]
    assert rows == [[0, 1, 2], [1, 2, 3], [2]]


def test_tokenizers_and_their_byte_offsets():
    assert text.WhitespaceTokenizer()("hello  world\tfoo\nbar ").tolist() == \
        ["hello", "world", "foo", "bar"]
    tokens, start, limit = text.WhitespaceTokenizer(True)("hello  wörld x")
    assert tokens.tolist() == ["hello", "wörld", "x"]
    assert start.tolist() == [0, 7, 14] and limit.tolist() == [5, 13, 15]
    assert start.dtype == np.uint32
    assert text.WhitespaceTokenizer()("   ").tolist() == [""]
    assert text.WhitespaceTokenizer()("a\u3000b\u00a0c").tolist() == ["a", "b", "c"]
    assert text.RegexTokenizer(r"\s+", r"\s+")("a b  c").tolist() == ["a", " ", "b", "  ", "c"]
    tokens, start, limit = text.RegexTokenizer("[,.]", "[,]", True)("ab,cd.ef")
    assert tokens.tolist() == ["ab", ",", "cd", "ef"]
    assert start.tolist() == [0, 2, 3, 6] and limit.tolist() == [2, 3, 5, 8]
    assert text.RegexTokenizer(",")(",a,,b,").tolist() == ["a", "b"]
    assert text.RegexTokenizer(",")(",,").tolist() == [""]
    with pytest.raises(ValueError, match="one string"):
        text.WhitespaceTokenizer()(np.array(["a b", "c"]))


def test_to_number_and_sliding_window():
    assert text.ToNumber(ms.int32)(np.array(["1", "-2", "30"])).tolist() == [1, -2, 30]
    assert text.ToNumber(ms.int32)(np.array(["1.5", " 7"])).tolist() == [1, 7]   # stoll prefix
    f = text.ToNumber(ms.float32)(np.array(["1.5", "2e3", "1.5x"]))
    assert f.dtype == np.float32 and f.tolist() == [1.5, 2000.0, 1.5]
    for dtype, s in [(ms.int8, "300"), (ms.uint8, "-1"), (ms.float16, "1e6"), (ms.int32, "abc")]:
        with pytest.raises(RuntimeError, match="ToNumber"):
            text.ToNumber(dtype)(np.array([s]))
    assert text.SlidingWindow(2)(np.array([1, 2, 3, 4])).tolist() == [[1, 2], [2, 3], [3, 4]]
    assert text.SlidingWindow(5)(np.array([1, 2, 3])).shape == (0,)
    assert text.SlidingWindow(2)(np.array(["a", "b", "c"])).tolist() == [["a", "b"], ["b", "c"]]
    with pytest.raises(ValueError, match="width"):
        text.SlidingWindow(0)
    assert text.to_str(np.array([b"ab", b"c"])).tolist() == ["ab", "c"]
    assert text.to_bytes(np.array(["ab", "c"])).tolist() == [b"ab", b"c"]


def test_vocab_errors():
    with pytest.raises(ValueError, match="duplicate"):
        text.Vocab.from_list(["a", "a"])
    with pytest.raises(ValueError, match="share"):
        text.Vocab.from_list(["a", "b"], special_tokens=["a"])
    with pytest.raises(RuntimeError, match="not built"):
        text.Vocab().vocab()
    with pytest.raises(ValueError, match=">= 0"):
        _vocab().ids_to_tokens(-1)
    with pytest.raises(TypeError, match="tokens"):
        _vocab().tokens_to_ids(3)


def test_char_tokenizer_add_token_truncate_python_tokenizer():
    # values from MindSpore 2.10
    tokens, start, limit = text.UnicodeCharTokenizer(True)("ab ö")
    assert tokens.tolist() == ["a", "b", " ", "ö"]
    assert start.tolist() == [0, 1, 2, 3] and limit.tolist() == [1, 2, 3, 5]
    assert text.UnicodeCharTokenizer()("").tolist() == [""]
    assert text.AddToken("<s>")(np.array(["a", "b"])).tolist() == ["<s>", "a", "b"]
    assert text.AddToken("</s>", False)(np.array(["a"])).tolist() == ["a", "</s>"]
    assert text.AddToken("<s>")(np.array([["a"]])).tolist() == [["<s>", "a"]]
    assert text.Truncate(2)(np.array(["a", "b", "c"])).tolist() == ["a", "b"]
    assert text.Truncate(2)(np.array([[1, 2, 3], [4, 5, 6]])).tolist() == [[1, 2], [4, 5]]
    split = text.PythonTokenizer(lambda s: s.split("-"))
    assert split(np.array("a-b-c")).tolist() == ["a", "b", "c"]
    with pytest.raises(TypeError, match="numpy array"):
        split("a-b-c")
    with pytest.raises(ValueError, match="max_seq_len"):
        text.Truncate(0)


def test_vocab_from_file(tmp_path):
    # values from MindSpore 2.10
    path = tmp_path / "vocab.txt"
    path.write_text("a,1\nb,2\nc,3\n", encoding="utf-8")
    assert text.Vocab.from_file(str(path), ",").vocab() == {"a": 0, "b": 1, "c": 2}
    assert text.Vocab.from_file(str(path), ",", vocab_size=2, special_tokens=["<u>"],
                                special_first=False).vocab() == {"a": 0, "b": 1, "<u>": 2}
    assert text.Vocab.from_file(str(path)).vocab() == {"a,1": 0, "b,2": 1, "c,3": 2}


def test_case_fold_normalize_regex_replace_ngram():
    # values from MindSpore 2.10
    assert str(text.CaseFold()("Straße ÀB")) == "strasse àb"
    assert text.CaseFold()(np.array(["AbC", "DD"])).tolist() == ["abc", "dd"]
    assert str(text.NormalizeUTF8()("ｱ①ﬁ")) == "ア1fi"
    assert str(text.NormalizeUTF8(text.NormalizeForm.NFD)("é")) == "e\u0301"
    assert str(text.NormalizeUTF8(text.NormalizeForm.NONE)("ｱ")) == "ｱ"
    assert str(text.RegexReplace("a+", "X")("caaab aa")) == "cXb X"
    assert str(text.RegexReplace("a+", "X", False)("caaab aa")) == "cXb aa"
    assert str(text.RegexReplace("(a)(b)", "$2$1")("abab")) == "baba"
    with pytest.raises(ValueError, match="one string"):
        text.RegexReplace("a", "b")(np.array(["a", "b"]))
    tokens = np.array(["a", "b", "c"])
    assert text.Ngram(2)(tokens).tolist() == ["a b", "b c"]
    assert text.Ngram([1, 3])(tokens).tolist() == ["a", "b", "c", "a b c"]
    assert text.Ngram(2, ("_", 1), ("-", 1))(np.array(["a", "b"])).tolist() == \
        ["_ a", "a b", "b -"]
    assert text.Ngram(3, ("<", 2), (">", 2))(np.array(["x"])).tolist() == \
        ["< < x", "< x >", "x > >"]
    assert text.Ngram(4)(np.array(["a", "b"])).tolist() == [""]
    assert text.Ngram(2, separator="+")(tokens).tolist() == ["a+b", "b+c"]
