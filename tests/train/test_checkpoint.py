"""Checkpoints in both formats (MindSpore's protobuf "ckpt", the default, and "safetensors"):
round trip, MindSpore's file-name rules, atomic writes, malformed files refused with the file
and the fault named, mismatches listed, load_param_into_net's casts and prefix matching."""
from __future__ import annotations

import os

import numpy as np
import pytest

import minispore as ms
from minispore import nn
from minispore.train import ckpt_format, serialization

FORMATS = ["ckpt", "safetensors"]


class Net(nn.Cell):
    def __init__(self, n=3, dtype=np.float32):
        super().__init__()
        self.w = ms.Parameter(ms.Tensor(np.arange(n * 2, dtype=dtype).reshape(n, 2)), name="w")
        self.b = ms.Parameter(ms.Tensor(np.ones(2, dtype)), name="b")

    def construct(self, x):
        return ms.ops.matmul(x, self.w) + self.b


@pytest.mark.parametrize("fmt", FORMATS)
def test_round_trip(tmp_path, fmt):
    src, dst = Net(), Net()
    src.w.set_data(ms.Tensor(np.full((3, 2), 5.0, np.float32)))
    path = str(tmp_path / f"net.{fmt}")
    ms.save_checkpoint(src, path, format=fmt)
    params = ms.load_checkpoint(path, format=fmt)
    assert sorted(params) == ["b", "w"]
    assert ms.load_param_into_net(dst, params) == ([], [])
    np.testing.assert_array_equal(dst.w.asnumpy(), src.w.asnumpy())
    assert os.stat(path).st_mode & 0o777 == 0o400          # read-only, as MindSpore's
    ms.save_checkpoint(Net(), path, format=fmt)              # a read-only file is replaced
    assert ms.load_checkpoint(path, format=fmt)["w"].asnumpy()[0, 0] == 0


def test_the_default_format_is_mindspores_ckpt(tmp_path):
    ms.save_checkpoint(Net(), str(tmp_path / "a.ckpt"))
    assert (tmp_path / "a.ckpt").read_bytes()[:1] == b"\n"       # a protobuf Checkpoint
    from safetensors.numpy import load_file
    ms.save_checkpoint(Net(), str(tmp_path / "s.safetensors"), format="safetensors")
    assert set(load_file(str(tmp_path / "s.safetensors"))) == {"w", "b"}


def test_the_file_name_rules_are_mindspores(tmp_path):
    # MindSpore 2.10: a name not ending with the format gets ".<format>" appended ...
    ms.save_checkpoint(Net(), str(tmp_path / "plain"))
    ms.save_checkpoint(Net(), str(tmp_path / "x.safetensors"))
    ms.save_checkpoint(Net(), str(tmp_path / "y"), format="safetensors")
    assert sorted(os.listdir(tmp_path)) == ["plain.ckpt", "x.safetensors.ckpt",
                                            "y.safetensors"]
    # ... and load_checkpoint refuses a name that does not end with `format`
    with pytest.raises(ValueError, match=r"must end with format='ckpt'.*plain\.ckpt' exists"):
        ms.load_checkpoint(str(tmp_path / "plain"))
    with pytest.raises(ValueError, match="does not exist"):
        ms.load_checkpoint(str(tmp_path / "missing.ckpt"))
    with pytest.raises(ValueError, match="format must be 'ckpt'.*got 'pickle'"):
        ms.save_checkpoint(Net(), str(tmp_path / "p"), format="pickle")
    with pytest.raises(ValueError, match="format must be 'ckpt'.*got 'npz'"):
        ms.load_checkpoint(str(tmp_path / "p.npz"), format="npz")
    with pytest.raises(TypeError, match="ckpt_file_name must be a str"):
        ms.save_checkpoint(Net(), 3)


@pytest.mark.parametrize("fmt", FORMATS)
def test_dtypes_and_0d_survive(tmp_path, fmt):
    values = {"bf": ms.Tensor(np.array([1.5, -2.25], np.float32)).astype(ms.bfloat16),
              "h": ms.Tensor(np.arange(3, dtype=np.float16)), "u": ms.Tensor(np.uint8([7, 255])),
              "q": ms.Tensor(np.array([True])), "d": ms.Tensor(np.float64(2.5)),
              "i": ms.Tensor(np.int8([-3]))}
    path = str(tmp_path / f"h.{fmt}")
    ms.save_checkpoint(values, path, format=fmt)
    got = ms.load_checkpoint(path, format=fmt)
    for k, v in values.items():
        assert got[k].dtype is v.dtype and got[k].shape == v.shape, k
        np.testing.assert_array_equal(got[k].asnumpy(), v.asnumpy())


@pytest.mark.parametrize("fmt", FORMATS)
def test_append_dict_as_mindspore_stores_it(tmp_path, fmt):
    path = str(tmp_path / f"s.{fmt}")
    ms.save_checkpoint({"t": ms.Tensor(np.float32(2.0))}, path, format=fmt,
                       append_dict={"epoch": 20, "lr": 0.5, "flag": True,
                                    "step": ms.Tensor(np.int32(4))})
    got = ms.load_checkpoint(path, format=fmt)
    # MindSpore 2.10: appended Python scalars come back as 0-d Parameters: int -> Int64,
    # float -> Float32, bool -> Bool; a Tensor keeps its dtype
    assert {k: (v.dtype, v.shape) for k, v in got.items()} == {
        "t": (ms.float32, ()), "epoch": (ms.int64, ()), "lr": (ms.float32, ()),
        "flag": (ms.bool_, ()), "step": (ms.int32, ())}
    assert all(isinstance(v, ms.Parameter) for v in got.values())
    assert int(got["epoch"].asnumpy()) == 20 and float(got["lr"].asnumpy()) == 0.5
    with pytest.raises(TypeError, match=r"array 'c' has dtype complex64, which minispore has"):
        ms.save_checkpoint({"c": np.ones(2, np.complex64)}, path, format=fmt)
    with pytest.raises(TypeError, match="append_dict must map str to int"):
        ms.save_checkpoint(Net(), path, format=fmt, append_dict={"a": [1, 2]})


def test_a_str_in_append_dict_comes_back_as_a_str(tmp_path):
    path = str(tmp_path / "s.ckpt")
    ms.save_checkpoint(Net(), path, append_dict={"note": "héllo"})
    got = ms.load_checkpoint(path)
    assert got["note"] == "héllo"
    net = Net()
    assert ms.load_param_into_net(net, got) == ([], ["note"])       # skipped, as MindSpore
    with pytest.raises(TypeError, match="str, which the safetensors format cannot hold"):
        ms.save_checkpoint(Net(), str(tmp_path / "s.safetensors"), format="safetensors",
                           append_dict={"note": "x"})


def test_a_large_tensor_is_written_in_slices_and_joined(tmp_path, monkeypatch):
    monkeypatch.setattr(ckpt_format, "SLICE_BYTES", 8)       # MindSpore slices at 512 MiB
    a = np.arange(7, dtype=np.float32)
    ms.save_checkpoint({"a": ms.Tensor(a), "z": ms.Tensor(np.ones(1, np.float32))},
                       str(tmp_path / "big.ckpt"), crc_check=True)
    Checkpoint, _ = ckpt_format.message_classes()
    msg = Checkpoint()
    msg.ParseFromString((tmp_path / "big.ckpt").read_bytes()[:-17])
    assert [(v.tag, len(v.tensor.tensor_content)) for v in msg.value] == \
        [("a", 8), ("a", 8), ("a", 8), ("a", 4), ("z", 4)]
    got = ms.load_checkpoint(str(tmp_path / "big.ckpt"), crc_check=True)
    np.testing.assert_array_equal(got["a"].asnumpy(), a)


def test_an_empty_tensor_is_left_out_of_a_ckpt_as_mindspore_does(tmp_path):
    ms.save_checkpoint({"e": ms.Tensor(np.zeros((2, 0), np.float32)), "w": ms.Tensor([1.0])},
                       str(tmp_path / "e.ckpt"))
    assert list(ms.load_checkpoint(str(tmp_path / "e.ckpt"))) == ["w"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_mismatches_are_listed(tmp_path, fmt):
    path = str(tmp_path / f"small.{fmt}")
    ms.save_checkpoint(Net(n=4), path, format=fmt)
    target = Net(n=3)
    before = target.w.asnumpy().copy()
    with pytest.raises(ValueError, match=r"w: checkpoint Float32\[4, 2\], network "
                                         r"Float32\[3, 2\]"):
        ms.load_checkpoint(path, net=target, format=fmt)
    with pytest.raises(RuntimeError):                      # MindSpore raises RuntimeError
        ms.load_checkpoint(path, net=target, format=fmt)
    np.testing.assert_array_equal(target.w.asnumpy(), before)       # nothing loaded
    ms.save_checkpoint({"b": ms.Tensor(np.ones(2, np.float32)),
                        "extra": ms.Tensor(np.ones(1, np.float32))}, path, format=fmt)
    # MindSpore 2.10: strict_load does not make missing names an error; a network parameter
    # left unloaded gives a warning, checkpoint entries left over do not
    for strict in (False, True):
        with pytest.warns(RuntimeWarning, match=r"not in the checkpoint .*\['w'\]"):
            assert ms.load_param_into_net(target, ms.load_checkpoint(path, format=fmt),
                                          strict_load=strict) == (["w"], ["extra"])


def _pb(path, tag="w", dims=(2,), tensor_type="Float32", content=b"\0" * 8):
    Checkpoint, _ = ckpt_format.message_classes()
    msg = Checkpoint()
    v = msg.value.add()
    v.tag = tag
    v.tensor.dims.extend(dims)
    v.tensor.tensor_type = tensor_type
    v.tensor.tensor_content = content
    path.write_bytes(msg.SerializeToString())
    return str(path)


def test_malformed_ckpt_files_are_refused_naming_the_fault(tmp_path):
    assert ms.load_checkpoint(_pb(tmp_path / "ok.ckpt"))["w"].shape == (2,)
    with pytest.raises(ValueError, match=r"entry 'w' of .*u\.ckpt.* unknown tensor_type "
                                         r"'Float128'"):
        ms.load_checkpoint(_pb(tmp_path / "u.ckpt", tensor_type="Float128"))
    with pytest.raises(ValueError, match=r"'Int4', which minispore has no dtype for"):
        ms.load_checkpoint(_pb(tmp_path / "i4.ckpt", tensor_type="Int4"))
    with pytest.raises(ValueError, match=r"entry 'w' .* holds 8 bytes but its dims \[3\] and "
                                         r"tensor_type Float32 need 12"):
        ms.load_checkpoint(_pb(tmp_path / "n.ckpt", dims=(3,)))
    good = (tmp_path / "ok.ckpt").read_bytes()
    (tmp_path / "t.ckpt").write_bytes(good[:-3])                      # truncated
    with pytest.raises(ValueError, match=r"t\.ckpt' is not a readable MindSpore \.ckpt "
                                         r"checkpoint .*truncated"):
        ms.load_checkpoint(str(tmp_path / "t.ckpt"))
    (tmp_path / "x.ckpt").write_bytes(b"\x08\x01")                # protobuf, but no Value
    with pytest.raises(ValueError, match=r"x\.ckpt' is not a readable .*no Checkpoint value"):
        ms.load_checkpoint(str(tmp_path / "x.ckpt"))


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_non_checkpoint_is_refused(tmp_path, fmt):
    bad = tmp_path / f"evil.{fmt}"
    bad.write_bytes(b"\x80\x04\x95not a checkpoint at all")              # a pickle
    with pytest.raises(ValueError, match=r"evil\.\w+' is not a readable"):
        ms.load_checkpoint(str(bad), format=fmt)
    (tmp_path / f"empty.{fmt}").write_bytes(b"")
    with pytest.raises(ValueError, match=r"empty\.\w+' is empty \(0 bytes\)"):
        ms.load_checkpoint(str(tmp_path / f"empty.{fmt}"), format=fmt)
    ms.save_checkpoint(Net(), str(tmp_path / f"n.{fmt}"), format=fmt)
    raw = (tmp_path / f"n.{fmt}").read_bytes()
    (tmp_path / f"cut.{fmt}").write_bytes(raw[:len(raw) - 5])
    with pytest.raises(ValueError, match=r"cut\.\w+' is not a readable .*truncated"):
        ms.load_checkpoint(str(tmp_path / f"cut.{fmt}"), format=fmt)


@pytest.mark.parametrize("fmt", FORMATS)
def test_prefixes_and_choice_func_select_what_is_loaded(tmp_path, fmt):
    path = str(tmp_path / f"p.{fmt}")
    ms.save_checkpoint({"enc.w": ms.Tensor(np.ones(1, np.float32)),
                        "enc.b": ms.Tensor(np.ones(1, np.float32)),
                        "dec.w": ms.Tensor(np.ones(1, np.float32))}, path, format=fmt)
    load = lambda **kw: sorted(ms.load_checkpoint(path, format=fmt, **kw))   # noqa: E731
    assert load(specify_prefix="enc") == ["enc.b", "enc.w"]
    assert load(filter_prefix=["enc.b", "dec"]) == ["enc.w"]
    assert load(specify_prefix="enc", filter_prefix="enc.b") == ["enc.w"]
    assert load(choice_func=lambda n: n.endswith("w")) == ["dec.w", "enc.w"]
    with pytest.raises(ValueError, match="choice_func cannot be combined"):
        load(specify_prefix="enc", choice_func=lambda n: True)
    with pytest.raises(ValueError, match="no parameter .* is left"):
        load(specify_prefix="nothing")
    with pytest.raises(TypeError, match="specify_prefix"):
        load(specify_prefix=3)
    with pytest.raises(ValueError, match="filter_prefix"):
        load(filter_prefix=[""])
    ms.save_checkpoint(Net(), str(tmp_path / f"c.{fmt}"), format=fmt,
                       choice_func=lambda n: n == "w", append_dict={"epoch": 1})
    assert sorted(ms.load_checkpoint(str(tmp_path / f"c.{fmt}"), format=fmt)) == \
        ["epoch", "w"]                         # choice_func does not filter append_dict


def test_unsupported_options_raise_instead_of_being_ignored(tmp_path):
    path = str(tmp_path / "o.ckpt")
    ms.save_checkpoint(Net(), path)
    with pytest.raises(NotImplementedError, match="dec_key"):
        ms.load_checkpoint(path, dec_key=b"0123456789abcdef")
    with pytest.raises(ValueError, match="dec_mode"):
        ms.load_checkpoint(path, dec_mode="SM4-CBC")
    with pytest.raises(NotImplementedError, match="remove_redundancy"):
        ms.load_checkpoint(path, remove_redundancy=True)
    with pytest.raises(TypeError, match="unexpected keyword argument 'no_such_option'"):
        ms.load_checkpoint(path, no_such_option=1)
    with pytest.raises(TypeError, match="crc_check"):
        ms.load_checkpoint(path, crc_check="yes")
    with pytest.raises(ValueError, match="enc_mode"):
        ms.save_checkpoint(Net(), path, enc_mode="SM4-CBC")
    with pytest.raises(NotImplementedError, match="enc_key"):
        ms.save_checkpoint(Net(), path, enc_key=b"0123456789abcdef")
    with pytest.raises(NotImplementedError, match="remove_redundancy"):
        ms.save_checkpoint(Net(), path, remove_redundancy=True)
    with pytest.raises(NotImplementedError, match="incremental"):
        ms.save_checkpoint(Net(), path, incremental=True)
    with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):
        ms.save_checkpoint(Net(), path, bogus=1)
    with pytest.raises(ValueError, match="async_save"):
        ms.save_checkpoint(Net(), path, async_save="later")
    # what MindSpore's ModelCheckpoint passes; async_save's file is complete on return
    ms.save_checkpoint(Net(), path, async_save="thread", incremental=False,
                       global_step_num=7, remove_redundancy=False)
    assert sorted(ms.load_checkpoint(path)) == ["b", "w"]
    with pytest.raises(ValueError, match="global_step_num must be None"):
        ms.save_checkpoint(Net(), str(tmp_path / "o.safetensors"), format="safetensors",
                           global_step_num=7)


@pytest.mark.parametrize("fmt", FORMATS)
def test_crc_check_detects_a_damaged_file(tmp_path, fmt):
    path = tmp_path / f"c.{fmt}"
    ms.save_checkpoint(Net(), str(path), crc_check=True, format=fmt)
    assert sorted(ms.load_checkpoint(str(path), crc_check=True, format=fmt)) == ["b", "w"]
    raw = bytearray(path.read_bytes())
    where = raw.index(np.ones(2, np.float32).tobytes())    # b's content in either format
    raw[where + 1] ^= 0xFF
    damaged = tmp_path / f"d.{fmt}"
    damaged.write_bytes(bytes(raw))
    ms.load_checkpoint(str(damaged), format=fmt)             # no check asked: loads
    with pytest.raises(ValueError, match="CRC32 check .* failed"):
        ms.load_checkpoint(str(damaged), crc_check=True, format=fmt)
    plain = str(tmp_path / f"plain.{fmt}")
    ms.save_checkpoint(Net(), plain, format=fmt)
    with pytest.warns(RuntimeWarning, match="holds no CRC32"):     # MindSpore only warns
        ms.load_checkpoint(plain, crc_check=True, format=fmt)


def test_load_param_into_net_casts_like_mindspore():
    target = Net(n=3)
    # MindSpore 2.10 without strict_load: a float value is cast to the parameter's float dtype
    ms.load_param_into_net(target, {"w": ms.Parameter(ms.Tensor(np.full((3, 2), 1 / 3)), "w"),
                                    "b": ms.Parameter(ms.Tensor(np.ones(2, np.float16)), "b")})
    assert target.w.dtype is ms.float32 and target.b.dtype is ms.float32
    assert target.w.asnumpy()[0, 0] == np.float32(1 / 3)
    with pytest.raises(ValueError, match=r"w: checkpoint Float64\[3, 2\], network Float32\[3, 2\] "
                                         r"\(differs in dtype Float64 vs Float32\) "
                                         r"\(strict_load=True allows no cast\)"):
        ms.load_param_into_net(target, {"w": ms.Parameter(ms.Tensor(np.ones((3, 2))), "w")},
                               strict_load=True)
    with pytest.raises(ValueError, match=r"differs in dtype Int32 vs Float32"):
        ms.load_param_into_net(target, {"w": ms.Parameter(ms.Tensor(np.ones((3, 2), np.int32)))})
    with pytest.raises(TypeError, match=r"parameter_dict\['w'\] must be a Parameter or Tensor, "
                                        r"got ndarray"):
        ms.load_param_into_net(target, {"w": np.ones((3, 2), np.float32)})
    # MindSpore 2.10 takes a shape with extra trailing 1s but leaves the parameter at
    # (3, 2, 1, 1); minispore refuses it
    with pytest.raises(ValueError, match=r"differs in shape \[3, 2, 1, 1\] vs \[3, 2\]"):
        ms.load_param_into_net(target, {"w": ms.Tensor(np.ones((3, 2, 1, 1), np.float32))})
    with pytest.raises(ValueError, match=r"differs in dtype UInt8 vs Float32"):    # as MindSpore
        ms.load_param_into_net(target, {"b": ms.Tensor(np.ones(2, np.uint8))})


def test_load_param_into_net_finds_a_saved_wrapper_prefix():
    # MindSpore 2.10: without strict_load, parameters missing by name are looked up under the
    # prefix of a checkpoint name ending with one of them; the returned checkpoint list still
    # names those entries
    target = Net()
    saved = {"network.w": ms.Tensor(np.full((3, 2), 4.0, np.float32)),
             "network.b": ms.Tensor(np.full(2, 5.0, np.float32)),
             "moments.w": ms.Tensor(np.zeros((3, 2), np.float32))}
    assert ms.load_param_into_net(target, dict(saved)) == ([], list(saved))
    assert target.w.asnumpy()[0, 0] == 4.0 and target.b.asnumpy()[0] == 5.0
    with pytest.warns(RuntimeWarning, match="not in the checkpoint"):
        assert ms.load_param_into_net(Net(), dict(saved), strict_load=True) == \
            (["w", "b"], list(saved))


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_failed_save_leaves_the_old_checkpoint_and_no_partial_file(tmp_path, fmt, monkeypatch):
    target = tmp_path / "taken"
    target.mkdir()
    with pytest.raises(IsADirectoryError):
        ms.save_checkpoint(Net(), str(target), format=fmt)
    path = tmp_path / f"net.{fmt}"
    ms.save_checkpoint(Net(), str(path), format=fmt)
    before = path.read_bytes()
    module = ckpt_format if fmt == "ckpt" else serialization.safetensors_format

    def crash(f, *args):
        if hasattr(f, "write"):
            f.write(before[:7])                             # a partial file, then a crash
        else:
            open(f, "wb").write(before[:7])
        raise KeyboardInterrupt
    monkeypatch.setattr(module, "write", crash)
    with pytest.raises(KeyboardInterrupt):
        ms.save_checkpoint(Net(n=5), str(path), format=fmt)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["taken", path.name])
