"""ckpt_to_safetensors / safetensors_to_ckpt and load_checkpoint_async, checked against what
MindSpore 2.10 does with the same files (tests/fixtures/mindspore_ckpt)."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pytest

import minispore as ms
from minispore.train.ckpt_convert import (ckpt_to_safetensors, load_checkpoint_async,
                                          safetensors_to_ckpt)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "mindspore_ckpt"


def _tree(root):
    return {os.path.relpath(r, root): sorted(f) for r, _, f in os.walk(root)}


def test_a_directory_of_rank_folders_converts_as_mindspore(tmp_path):
    src = tmp_path / "conv"
    for d in ("rank0", "rank1", "other"):
        (src / d).mkdir(parents=True)
    shutil.copy(FIXTURES / "lenet.ckpt", src / "rank0" / "a.ckpt")
    shutil.copy(FIXTURES / "lenet.ckpt", src / "rank1" / "b.ckpt")
    shutil.copy(FIXTURES / "lenet.ckpt", src / "other" / "c.ckpt")
    out = tmp_path / "out"
    ckpt_to_safetensors(str(src), save_path=str(out), name_map={"fc.bias": "head.bias"})
    # what MindSpore 2.10 writes for the same call: only the rank* folders, names mapped
    assert _tree(out) == {".": [], "rank0": ["a.safetensors"], "rank1": ["b.safetensors"]}
    got = ms.load_checkpoint(str(out / "rank0" / "a.safetensors"), format="safetensors")
    assert list(got) == ["bn.beta", "bn.gamma", "bn.moving_mean", "bn.moving_variance",
                         "conv1.weight", "fc.weight", "head.bias"]
    theirs = ms.load_checkpoint(str(FIXTURES / "lenet.safetensors"), format="safetensors")
    np.testing.assert_array_equal(got["head.bias"].asnumpy(), theirs["fc.bias"].asnumpy())
    with pytest.raises(ValueError, match="no directories starting with 'rank'"):
        ckpt_to_safetensors(str(src / "other"))


def test_one_file_converts_beside_itself_or_into_save_path(tmp_path):
    shutil.copy(FIXTURES / "lenet.ckpt", tmp_path / "a.ckpt")
    ckpt_to_safetensors(str(tmp_path / "a.ckpt"))
    assert sorted(os.listdir(tmp_path)) == ["a.ckpt", "a.safetensors"]
    safetensors_to_ckpt(str(tmp_path / "a.safetensors"), save_path=str(tmp_path / "back"))
    # the round trip holds the same tensors, in name order (safetensors sorts them)
    back = ms.load_checkpoint(str(tmp_path / "back" / "a.ckpt"))
    original = ms.load_checkpoint(str(FIXTURES / "lenet.ckpt"))
    assert list(back) == sorted(original)
    for k, v in original.items():
        np.testing.assert_array_equal(back[k].asnumpy(), v.asnumpy())
    with pytest.raises(ValueError, match=r"must be a \.ckpt file"):
        ckpt_to_safetensors(str(tmp_path / "a.safetensors"))
    with pytest.raises(ValueError, match="save_path must be a directory"):
        ckpt_to_safetensors(str(tmp_path / "a.ckpt"), save_path=str(tmp_path / "x.safetensors"))
    with pytest.raises(ValueError, match="does not match file_name_regex"):
        ckpt_to_safetensors(str(tmp_path / "a.ckpt"), file_name_regex="^zzz$")
    with pytest.raises(ValueError, match="processes_num must be a positive int"):
        ckpt_to_safetensors(str(tmp_path / "a.ckpt"), processes_num=0)


def test_load_checkpoint_async_gives_load_checkpoints_result(tmp_path):
    future = load_checkpoint_async(str(FIXTURES / "lenet.ckpt"))
    assert sorted(future.result()) == sorted(np.load(FIXTURES / "lenet_params.npz").files)
    shutil.copy(FIXTURES / "lenet.safetensors", tmp_path / "l.safetensors")
    assert len(load_checkpoint_async(str(tmp_path / "l.safetensors")).result()) == 7
    with pytest.raises(ValueError, match="does not exist"):
        load_checkpoint_async(str(tmp_path / "missing.ckpt")).result()
