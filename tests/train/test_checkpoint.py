"""Checkpoints in safetensors: round trip, mismatches listed, no code executed on load."""
from __future__ import annotations

import numpy as np
import pytest

import minispore as ms
from minispore import nn


class Net(nn.Cell):
    def __init__(self, n=3, dtype=np.float32):
        super().__init__()
        self.w = ms.Parameter(ms.Tensor(np.arange(n * 2, dtype=dtype).reshape(n, 2)), name="w")
        self.b = ms.Parameter(ms.Tensor(np.ones(2, dtype)), name="b")

    def construct(self, x):
        return ms.ops.matmul(x, self.w) + self.b


def test_round_trip(tmp_path):
    src, dst = Net(), Net()
    src.w.set_data(ms.Tensor(np.full((3, 2), 5.0, np.float32)))
    path = tmp_path / "net.safetensors"
    ms.save_checkpoint(src, str(path))
    params = ms.load_checkpoint(str(path))
    assert sorted(params) == sorted(p.name for p in dst.get_parameters())
    not_loaded, unused = ms.load_param_into_net(dst, params)
    assert not_loaded == [] and unused == []
    np.testing.assert_array_equal(dst.w.asnumpy(), src.w.asnumpy())
    from safetensors.numpy import load_file                 # a plain safetensors file
    assert set(load_file(str(path))) == {p.name for p in src.get_parameters()}


def test_bfloat16_survives(tmp_path):
    net = Net()
    bf = ms.Tensor(np.array([1.5, -2.25], np.float32)).astype(ms.bfloat16)
    ms.save_checkpoint([{"name": "h", "data": bf}], str(tmp_path / "h.ckpt"))
    h = ms.load_checkpoint(str(tmp_path / "h.ckpt"))["h"]
    assert h.dtype is ms.bfloat16 and h.astype(ms.float32).asnumpy().tolist() == [1.5, -2.25]
    del net


def test_mismatches_are_listed(tmp_path):
    path = str(tmp_path / "small.safetensors")
    ms.save_checkpoint(Net(n=4), path)
    target = Net(n=3)
    before = target.w.asnumpy().copy()
    with pytest.raises(ValueError, match=r"w: checkpoint Float32\[4, 2\], network "
                                         r"Float32\[3, 2\]"):
        ms.load_checkpoint(path, net=target)
    np.testing.assert_array_equal(target.w.asnumpy(), before)       # nothing loaded
    ms.save_checkpoint({"b": ms.Tensor(np.ones(2, np.float32)),
                        "extra": ms.Tensor(np.ones(1, np.float32))}, path)
    with pytest.raises(ValueError, match=r"missing from the checkpoint: \['w'\].*\['extra'\]"):
        ms.load_param_into_net(target, ms.load_checkpoint(path), strict_load=True)
    with pytest.warns(RuntimeWarning, match="missing from the checkpoint"):
        assert ms.load_param_into_net(target, ms.load_checkpoint(path)) == (["w"], ["extra"])


def test_a_non_checkpoint_is_refused(tmp_path):
    bad = tmp_path / "evil.ckpt"
    bad.write_bytes(b"\x80\x04\x95not a safetensors file")
    with pytest.raises(ValueError, match="is not a safetensors checkpoint"):
        ms.load_checkpoint(str(bad))


def test_scalars_keep_their_shape_and_other_formats_are_refused(tmp_path):
    path = str(tmp_path / "s.safetensors")
    ms.save_checkpoint({"t": ms.Tensor(np.float32(2.0))}, path, append_dict={"epoch": 20})
    got = ms.load_checkpoint(path)
    assert got["t"].shape == () and int(got["epoch"]) == 20
    with pytest.raises(ValueError, match="format='ckpt' is not supported"):
        ms.save_checkpoint(Net(), path, format="ckpt")


def test_prefixes_and_choice_func_select_what_is_loaded(tmp_path):
    path = str(tmp_path / "p.safetensors")
    ms.save_checkpoint({"enc.w": ms.Tensor(np.ones(1, np.float32)),
                        "enc.b": ms.Tensor(np.ones(1, np.float32)),
                        "dec.w": ms.Tensor(np.ones(1, np.float32))}, path)
    assert sorted(ms.load_checkpoint(path, specify_prefix="enc")) == ["enc.b", "enc.w"]
    assert sorted(ms.load_checkpoint(path, filter_prefix=["enc.b", "dec"])) == ["enc.w"]
    assert sorted(ms.load_checkpoint(path, specify_prefix="enc", filter_prefix="enc.b")) == \
        ["enc.w"]
    assert sorted(ms.load_checkpoint(path, choice_func=lambda n: n.endswith("w"))) == \
        ["dec.w", "enc.w"]
    with pytest.raises(ValueError, match="choice_func cannot be combined"):
        ms.load_checkpoint(path, specify_prefix="enc", choice_func=lambda n: True)
    with pytest.raises(ValueError, match="no parameter .* is left"):
        ms.load_checkpoint(path, specify_prefix="nothing")
    with pytest.raises(TypeError, match="specify_prefix"):
        ms.load_checkpoint(path, specify_prefix=3)
    with pytest.raises(ValueError, match="filter_prefix"):
        ms.load_checkpoint(path, filter_prefix=[""])


def test_unsupported_load_options_raise_instead_of_being_ignored(tmp_path):
    path = str(tmp_path / "o.safetensors")
    ms.save_checkpoint(Net(), path)
    with pytest.raises(NotImplementedError, match="dec_key"):
        ms.load_checkpoint(path, dec_key=b"0123456789abcdef")
    with pytest.raises(ValueError, match="dec_mode"):
        ms.load_checkpoint(path, dec_mode="SM4-CBC")
    with pytest.raises(ValueError, match="format='ckpt' is not supported"):
        ms.load_checkpoint(path, format="ckpt")
    with pytest.raises(NotImplementedError, match="remove_redundancy"):
        ms.load_checkpoint(path, remove_redundancy=True)
    with pytest.raises(TypeError, match="unexpected keyword argument 'no_such_option'"):
        ms.load_checkpoint(path, no_such_option=1)
    with pytest.raises(TypeError, match="crc_check"):
        ms.load_checkpoint(path, crc_check="yes")
    with pytest.raises(ValueError, match="enc_mode"):
        ms.save_checkpoint(Net(), path, enc_mode="SM4-CBC")
    with pytest.raises(ValueError, match="enc_key"):
        ms.save_checkpoint(Net(), path, enc_key=b"0123456789abcdef")


def test_crc_check_detects_a_damaged_file(tmp_path):
    path = tmp_path / "c.safetensors"
    ms.save_checkpoint(Net(), str(path), crc_check=True)
    assert sorted(ms.load_checkpoint(str(path), crc_check=True)) == ["b", "w"]
    raw = bytearray(path.read_bytes())
    raw[-1] ^= 0xFF                                     # flip bits of the last tensor byte
    path.write_bytes(bytes(raw))
    ms.load_checkpoint(str(path))                       # no check asked: loads
    with pytest.raises(ValueError, match="CRC32 check .* failed"):
        ms.load_checkpoint(str(path), crc_check=True)
    plain = str(tmp_path / "plain.safetensors")
    ms.save_checkpoint(Net(), plain)
    with pytest.raises(ValueError, match="holds no CRC32"):
        ms.load_checkpoint(plain, crc_check=True)


def test_mismatch_message_names_what_differs():
    target = Net(n=3)
    with pytest.raises(ValueError, match=r"w: checkpoint Float64\[3, 2\], network Float32\[3, 2\] "
                                         r"\(differs in dtype Float64 vs Float32\)"):
        ms.load_param_into_net(target, {"w": ms.Parameter(ms.Tensor(np.ones((3, 2))), "w")})
    with pytest.raises(TypeError, match=r"parameter_dict\['w'\] must be a Parameter or Tensor, "
                                        r"got ndarray"):
        ms.load_param_into_net(target, {"w": np.ones((3, 2), np.float32)})


def test_a_failed_save_leaves_no_partial_file(tmp_path):
    target = tmp_path / "taken"
    target.mkdir()                                      # the final rename cannot replace a dir
    with pytest.raises(OSError):
        ms.save_checkpoint(Net(), str(target))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken"]
