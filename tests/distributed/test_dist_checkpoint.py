"""ModelCheckpoint and save_checkpoint with several ranks (rank_scripts/checkpoint.py, 2 ranks
under DATA_PARALLEL): as in MindSpore 2.10 (train/callback/_checkpoint.py) every rank saves,
under the same names `{prefix}-{epoch}_{step}.ckpt` (no rank in them), keep_checkpoint_max
per directory; in per-rank directories (MindSpore's tutorial layout) each rank's latest
checkpoint holds the synchronised weights; in one shared directory, and when every rank
saves one path 25 times while reading it back, no file is ever corrupt, mixed or left as a
temporary file (each write is a rename of a whole temporary file)."""
from __future__ import annotations

import numpy as np

from dist_job import launch, results

NAMES = ["accum.bias", "accum.weight", "bias", "global_step", "learning_rate", "momentum",
         "stat.bias", "stat.weight", "weight"]


def test_every_rank_saves_and_shared_writes_stay_whole(tmp_path):
    job = launch("checkpoint.py", 2, str(tmp_path))
    assert job.returncode == 0, job.stdout[-3000:] + job.stderr[-3000:]
    got = results(job.stdout)
    assert sorted(got) == [0, 1], job.stdout[-3000:]
    files = ["dp-1_2.ckpt", "dp-2_1.ckpt", "dp-2_2.ckpt"]     # 4 saves, keep_checkpoint_max=3
    for rank, (out,) in got.items():
        assert out["own_dir"] == files and out["latest"] == "dp-2_2.ckpt"
        np.testing.assert_array_equal(out["loaded_weight"], out["weight"])
        # the shared directory: the same names (ranks that see the other's files first may
        # take MindSpore's next prefix dp_1), every one loads whole
        assert out["shared_ok"] and all(v == NAMES for v in out["shared_ok"].values())
        assert not [f for f in out["shared_ok"] if f.endswith(".tmp")]
        assert out["race_bad"] == [] and out["race_files"] == ["race.ckpt"]
    # data parallel: both ranks end with the same weights, and save them
    np.testing.assert_allclose(got[0][0]["weight"], got[1][0]["weight"], rtol=1e-6)
    assert sorted(tmp_path.iterdir()) == sorted(tmp_path / d for d in
                                                ("ckpt_0", "ckpt_1", "shared", "race.ckpt"))
