"""The module paths MindSpore scripts import (`import mindspore.X`, `from mindspore.X import Y`)
exist in minispore and hold the same objects as the top-level names, and the auto-parallel
context of one process returns MindSpore 2.10's values. Expected values marked "MindSpore 2.10"
were observed by running MindSpore 2.10 on CPU."""
from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import minispore as ms

ROOT = Path(__file__).resolve().parents[2]

# module path -> names it holds that must be the same objects as these top-level ones
PATHS = {
    "minispore.context": {"set_context": ms.set_context, "get_context": ms.get_context,
                          "PYNATIVE_MODE": ms.PYNATIVE_MODE, "GRAPH_MODE": ms.GRAPH_MODE,
                          "ParallelMode": ms.ParallelMode,
                          "set_auto_parallel_context": ms.set_auto_parallel_context,
                          "get_auto_parallel_context": ms.get_auto_parallel_context,
                          "reset_auto_parallel_context": ms.reset_auto_parallel_context},
    "minispore.common": {"Tensor": ms.Tensor, "Parameter": ms.Parameter, "set_seed": ms.set_seed,
                         "get_seed": ms.get_seed, "float32": ms.float32,
                         "ParameterTuple": ms.ParameterTuple},
    "minispore.common.dtype": {"float32": ms.float32, "bool_": ms.bool_, "int64": ms.int64,
                               "bfloat16": ms.bfloat16, "dtype_to_nptype": ms.dtype_to_nptype,
                               "pytype_to_dtype": ms.pytype_to_dtype},
    "minispore.common.parameter": {"Parameter": ms.Parameter,
                                   "ParameterTuple": ms.ParameterTuple, "Tensor": ms.Tensor},
    "minispore.nn.loss": {"MSELoss": ms.nn.MSELoss, "LossBase": ms.nn.LossBase},
    "minispore.nn.loss.loss": {n: getattr(ms.nn, n) for n in (
        "LossBase", "MSELoss", "L1Loss", "CrossEntropyLoss", "NLLLoss",
        "SoftmaxCrossEntropyWithLogits", "BCEWithLogitsLoss")},
    "minispore.nn.wrap": {"WithLossCell": ms.nn.WithLossCell,
                          "TrainOneStepCell": ms.nn.TrainOneStepCell,
                          "WithEvalCell": ms.nn.WithEvalCell},
    "minispore.nn.wrap.cell_wrapper": {"WithLossCell": ms.nn.WithLossCell,
                                       "TrainOneStepCell": ms.nn.TrainOneStepCell,
                                       "WithEvalCell": ms.nn.WithEvalCell},
    "minispore.nn.wrap.grad_reducer": {"DistributedGradReducer": ms.nn.DistributedGradReducer},
    "minispore.nn.optim.momentum": {"Momentum": ms.nn.Momentum, "Optimizer": ms.nn.Optimizer},
    "minispore.nn.optim.sgd": {"SGD": ms.nn.SGD},
    "minispore.nn.optim.adam": {"Adam": ms.nn.Adam, "AdamWeightDecay": ms.nn.AdamWeightDecay},
    "minispore.train.callback": {"Callback": ms.Callback, "LossMonitor": ms.LossMonitor,
                                 "TimeMonitor": ms.TimeMonitor},
    "minispore.train.serialization": {"save_checkpoint": ms.save_checkpoint,
                                      "load_checkpoint": ms.load_checkpoint,
                                      "load_param_into_net": ms.load_param_into_net},
    "minispore.train.loss_scale_manager": {"FixedLossScaleManager": ms.FixedLossScaleManager,
                                           "DynamicLossScaleManager": ms.DynamicLossScaleManager,
                                           "LossScaleManager": ms.LossScaleManager},
    # MindSpore 2.10: these names of mindspore.dataset.engine are mindspore.dataset's
    "minispore.dataset.engine": {n: getattr(ms.dataset, n) for n in (
        "Dataset", "GeneratorDataset", "NumpySlicesDataset", "BatchDataset", "MapDataset",
        "RepeatDataset", "ShuffleDataset", "config", "samplers", "Sampler", "SequentialSampler",
        "RandomSampler", "SubsetSampler", "SubsetRandomSampler", "DistributedSampler",
        "WeightedRandomSampler")},
    "minispore.log": {"get_level": ms.get_level, "get_log_config": ms.get_log_config},
}


@pytest.mark.parametrize("path", sorted(PATHS))
def test_from_path_import_names(path):
    mod = importlib.import_module(path)
    for name, obj in PATHS[path].items():
        exec_ns = {}
        exec(f"from {path} import {name}", exec_ns)    # noqa: S102
        assert exec_ns[name] is obj is getattr(mod, name), (path, name)


def test_each_path_imports_in_a_fresh_interpreter():
    """`import minispore.X` as the first import of a process (no earlier import hides a
    missing module file)."""
    paths = sorted(PATHS) + ["minispore.common.tensor", "minispore.communication",
                             "minispore.communication.management", "minispore.parallel._utils",
                             "minispore.parallel._auto_parallel_context"]
    code = "; ".join(f"import {p}" for p in paths) + "; print('ok')"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    for stmt in [code, "from minispore.common.tensor import Tensor; import minispore as ms; "
                       "assert Tensor is ms.Tensor; print('ok')"]:
        out = subprocess.run([sys.executable, "-c", stmt], cwd=ROOT, env=env,
                             capture_output=True, text=True, timeout=300)
        assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]


def test_common_tensor_is_the_tensor_function_as_in_mindspore():
    # MindSpore 2.10: ms.common.tensor is ms.tensor (the function), and
    # `from mindspore.common.tensor import Tensor` is ms.Tensor
    assert ms.common.tensor is ms.tensor
    from minispore.common.tensor import Tensor
    assert Tensor is ms.Tensor
    assert ms.common.parameter.Parameter is ms.Parameter


def test_mstype_aliases_and_helpers():
    import minispore.common.dtype as mstype
    assert ms.dtype is mstype
    # MindSpore 2.10's aliases
    assert mstype.half is ms.float16 and mstype.single is ms.float32
    assert mstype.double is ms.float64 and mstype.float is ms.float32
    assert mstype.short is ms.int16 and mstype.intc is ms.int32 and mstype.int is ms.int32
    assert mstype.long is ms.int64 and mstype.intp is ms.int64
    assert mstype.byte is ms.int8 and mstype.ubyte is ms.uint8 and mstype.bool is ms.bool_
    # MindSpore 2.10: dtype_to_pytype float16 -> float, uint8/int64 -> int, bool_ -> bool;
    # type_size_in_bytes float16 2, uint8 1, int64 8, bfloat16 2
    assert [mstype.dtype_to_pytype(d) for d in (ms.float16, ms.uint8, ms.int64, ms.bool_,
                                                ms.bfloat16)] == [float, int, int, bool, float]
    assert [mstype.type_size_in_bytes(d) for d in (ms.float16, ms.uint8, ms.int64,
                                                   ms.bfloat16)] == [2, 1, 8, 2]
    assert mstype.dtype_to_nptype(ms.float16) is np.float16
    assert [str(mstype.pytype_to_dtype(t)) for t in (bool, int, float)] == \
        ["Bool", "Int64", "Float64"]


def test_log_functions_and_config(capfd):
    from minispore import log as logger
    # MindSpore 2.10 with GLOG_v unset: get_level() '2',
    # get_log_config() {'GLOG_v': '2', 'GLOG_logtostderr': '1'}
    if "GLOG_v" not in os.environ:
        assert logger.get_level() == "2"
        assert logger.get_log_config() == {"GLOG_v": "2", "GLOG_logtostderr": "1"}
    logger.warning("hello %s", "world")
    logger.info("not shown at WARNING")
    err = capfd.readouterr().err
    # MindSpore 2.10: "[WARNING] ME(pid:thread,MainProcess):<time> [file:line] hello world"
    assert "[WARNING] ME(" in err and err.rstrip().endswith("hello world")
    assert "test_module_paths.py:" in err and "not shown" not in err


# ---- the auto-parallel context -------------------------------------------------------------

@pytest.fixture
def fresh_parallel_context():
    ms.reset_auto_parallel_context()
    yield
    ms.reset_auto_parallel_context()


def test_parallel_mode_constants():
    # MindSpore 2.10's string constants
    P = ms.ParallelMode
    assert (P.STAND_ALONE, P.DATA_PARALLEL, P.SEMI_AUTO_PARALLEL, P.AUTO_PARALLEL,
            P.HYBRID_PARALLEL) == ("stand_alone", "data_parallel", "semi_auto_parallel",
                                   "auto_parallel", "hybrid_parallel")
    assert P.MODE_LIST == ["stand_alone", "data_parallel", "hybrid_parallel",
                           "semi_auto_parallel", "auto_parallel"]
    assert ms.context.ParallelMode is P


# MindSpore 2.10's get_auto_parallel_context after reset_auto_parallel_context
MS_DEFAULTS = {
    "device_num": 1, "global_rank": 0, "gradients_mean": False, "gradient_fp32_sync": True,
    "loss_repeated_mean": True, "parallel_mode": "stand_alone",
    "auto_parallel_search_mode": "recursive_programming", "search_mode": "recursive_programming",
    "parameter_broadcast": False, "strategy_ckpt_load_file": "", "strategy_ckpt_save_file": "",
    "full_batch": False, "full_batch_is_set": False, "dataset_strategy": "data_parallel",
    "enable_parallel_optimizer": False, "enable_alltoall": False, "all_reduce_fusion_config": [],
    "pipeline_stages": 1, "pipeline_result_broadcast": False, "grad_accumulation_step": 1,
    "auto_pipeline": False, "dump_local_norm": False, "dump_local_norm_path": "",
    "dump_device_local_norm": False, "sharding_propagation": False,
    "force_fp32_communication": False, "communi_parallel_mode": "all_group_parallel",
    "optimizer_weight_shard_size": -1, "optimizer_weight_shard_aggregated_save": False,
    "pipeline_scheduler": "1f1b", "pipeline_interleave": False, "init_param_in_compile": True,
    "auto_parallel_new_interface": False,
    "strategy_ckpt_config": {"load_file": "", "save_file": "", "only_trainable_params": True},
    "comm_fusion": {"openstate": True, "allreduce": {"mode": "auto", "config": None},
                    "allgather": {"mode": "auto", "config": None},
                    "reducescatter": {"mode": "auto", "config": None}},
}


def test_defaults_match_mindspore(fresh_parallel_context):
    for key, want in MS_DEFAULTS.items():
        assert ms.get_auto_parallel_context(key) == want, key
    # MindSpore 2.10: ValueError "Get context keyword nonexistent is not recognized!"
    with pytest.raises(ValueError, match="Get context keyword nonexistent is not recognized"):
        ms.get_auto_parallel_context("nonexistent")


def test_data_parallel_on_one_device_set_get_reset(fresh_parallel_context):
    from minispore.context import ParallelMode, set_auto_parallel_context
    assert set_auto_parallel_context(parallel_mode=ParallelMode.DATA_PARALLEL,
                                     gradients_mean=True, device_num=1, global_rank=0,
                                     parameter_broadcast=True) is None
    g = ms.get_auto_parallel_context
    # MindSpore 2.10: data_parallel True 1 0 True
    assert (g("parallel_mode"), g("gradients_mean"), g("device_num"), g("global_rank"),
            g("parameter_broadcast")) == ("data_parallel", True, 1, 0, True)
    ms.set_auto_parallel_context(all_reduce_fusion_config=[85, 160], full_batch=False)
    # MindSpore 2.10: [85, 160]; full_batch False, full_batch_is_set True
    assert g("all_reduce_fusion_config") == [85, 160]
    assert (g("full_batch"), g("full_batch_is_set")) == (False, True)
    ms.set_auto_parallel_context(dataset_strategy="full_batch")
    assert (g("dataset_strategy"), g("full_batch")) == ("full_batch", True)   # MindSpore 2.10
    ms.set_auto_parallel_context(search_mode="dynamic_programming")
    assert g("search_mode") == g("auto_parallel_search_mode") == "dynamic_programming"
    ms.reset_auto_parallel_context()
    # MindSpore 2.10 after reset: stand_alone False [] False data_parallel False
    assert (g("parallel_mode"), g("gradients_mean"), g("all_reduce_fusion_config"),
            g("full_batch_is_set"), g("dataset_strategy"), g("parameter_broadcast")) == \
        ("stand_alone", False, [], False, "data_parallel", False)


@pytest.mark.parametrize("kw, err, match", [
    # MindSpore 2.10's errors for these values
    ({"parallel_mode": "DATA_PARALLEL"}, ValueError, "only support 'stand_alone'"),
    ({"parallel_mode": 1}, TypeError, "'parallel_mode' must be <class 'str'>"),
    ({"device_num": 0}, ValueError, "'device_num' must be a positive integer"),
    ({"device_num": 1.0}, TypeError, "'device_num' must be <class 'int'>"),
    ({"global_rank": -1}, ValueError, r"must be in \[0, 4095\]"),
    ({"gradients_mean": 1}, TypeError, "'gradients_mean' must be <class 'bool'>"),
    ({"all_reduce_fusion_config": (1, 2)}, TypeError, "must be <class 'list'>"),
    ({"search_mode": "bogus"}, ValueError, "'auto_parallel_search_mode' only support"),
    ({"bogus": 1}, ValueError, "Set context keyword bogus is not recognized"),
])
def test_invalid_values_raise_as_mindspore(fresh_parallel_context, kw, err, match):
    with pytest.raises(err, match=match):
        ms.set_auto_parallel_context(**kw)


@pytest.mark.parametrize("kw", [
    {"parallel_mode": "semi_auto_parallel"}, {"parallel_mode": "auto_parallel"},
    {"parallel_mode": "hybrid_parallel"}, {"device_num": 8}, {"global_rank": 1},
    {"pipeline_stages": 2}, {"grad_accumulation_step": 4}, {"dump_local_norm": True},
    {"strategy_ckpt_load_file": "s.ckpt"}, {"pipeline_config": {"pipeline_interleave": True}},
    {"optimizer_weight_shard_size": 2}, {"dataset_strategy": ((2, 1),)},
])
def test_multi_device_settings_raise_naming_the_key(fresh_parallel_context, kw):
    """MindSpore accepts these (they take effect in a multi-device job); one process cannot
    honour them, so they raise instead of being stored and ignored."""
    key = next(iter(kw))
    with pytest.raises(NotImplementedError, match=key):
        ms.set_auto_parallel_context(**kw)
    assert ms.get_auto_parallel_context("parallel_mode") == "stand_alone"


def test_settings_are_validated_before_any_is_applied(fresh_parallel_context):
    with pytest.raises(NotImplementedError, match="device_num"):
        ms.set_auto_parallel_context(gradients_mean=True, device_num=2)
    assert ms.get_auto_parallel_context("gradients_mean") is False


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_data_parallel_one_device_training_step_equals_stand_alone(fresh_parallel_context, mode):
    """gradients_mean over one device leaves the gradients as they are: a training step under
    data_parallel/device_num=1 gives the stand-alone numbers in both modes."""
    from minispore.nn.loss.loss import MSELoss
    from minispore.nn.optim.momentum import Momentum
    from minispore.nn.wrap.cell_wrapper import TrainOneStepCell, WithLossCell

    def step():
        ms.set_seed(0)
        net = ms.nn.Dense(3, 2)
        train = TrainOneStepCell(WithLossCell(net, MSELoss()),
                                 Momentum(net.trainable_params(), 0.1, 0.9))
        x = ms.Tensor(np.arange(12, dtype=np.float32).reshape(4, 3) / 10)
        y = ms.Tensor(np.ones((4, 2), np.float32))
        losses = [float(train(x, y).asnumpy()) for _ in range(3)]
        return losses, net.weight.asnumpy().copy()

    base_losses, base_w = step()
    ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL,
                                 gradients_mean=True, device_num=1)
    dp_losses, dp_w = step()
    assert dp_losses == base_losses
    np.testing.assert_array_equal(dp_w, base_w)


# ---- communication and parallel._utils in one process --------------------------------------

def test_communication_without_init_is_rank_0_of_1():
    import minispore.communication as comm
    from minispore.communication.management import (GlobalComm, get_group_size,
                                                    get_local_rank, get_local_rank_size,
                                                    get_rank, init, release)
    assert comm.management.get_rank is get_rank is comm.get_rank
    assert ms.communication is comm
    # MindSpore 2.10 without init(): rank 0, group size 1, local rank 0 and local size 1 for
    # any group name; GlobalComm's values; release() returns None
    for group in ("hccl_world_group", "nccl_world_group", "foo"):
        assert (get_rank(group), get_group_size(group), get_local_rank(group),
                get_local_rank_size(group)) == (0, 1, 0, 1)
    assert (get_rank(), get_group_size()) == (0, 1)
    assert (GlobalComm.BACKEND, GlobalComm.WORLD_COMM_GROUP, GlobalComm.INITED,
            GlobalComm.CHECK_ENVS) == ("hccl", "hccl_world_group", False, True)
    assert (comm.HCCL_WORLD_COMM_GROUP, comm.NCCL_WORLD_COMM_GROUP,
            comm.MCCL_WORLD_COMM_GROUP) == ("hccl_world_group", "nccl_world_group",
                                            "mccl_world_group")
    assert release() is None
    # MindSpore 2.10: TypeError "For 'get_rank', the argument 'group' must be type of string"
    with pytest.raises(TypeError, match="'group' must be type of string"):
        get_rank(1)
    # MindSpore 2.10 raises RuntimeError when init() runs outside mpirun/msrun
    with pytest.raises(RuntimeError, match="init"):
        init()
    with pytest.raises(RuntimeError, match="not been inited"):    # as MindSpore 2.10
        comm.create_group("g", [0, 1])


def test_parallel_utils_read_the_context(fresh_parallel_context):
    from minispore.parallel._utils import (_get_device_num, _get_global_rank,
                                           _get_gradients_mean, _get_parallel_mode,
                                           _is_in_auto_parallel_mode)
    assert (_get_parallel_mode(), _get_gradients_mean(), _get_device_num()) == \
        ("stand_alone", False, 1)
    ms.set_auto_parallel_context(parallel_mode="data_parallel", gradients_mean=True,
                                 device_num=1)
    # MindSpore 2.10: data_parallel True 1 0 False
    assert (_get_parallel_mode(), _get_gradients_mean(), _get_device_num(), _get_global_rank(),
            _is_in_auto_parallel_mode()) == ("data_parallel", True, 1, 0, False)


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_distributed_grad_reducer_on_one_device(fresh_parallel_context, mode):
    """The model-zoo pattern: a training cell that all-reduces its gradients under
    data_parallel. MindSpore 2.10 builds DistributedGradReducer(params) without init()
    (degree = get_group_size() = 1); on one device the all-reduce leaves each gradient as it is,
    so the step equals the stand-alone TrainOneStepCell's."""
    from minispore.nn.wrap.grad_reducer import DistributedGradReducer
    assert ms.nn.DistributedGradReducer is DistributedGradReducer
    ms.set_auto_parallel_context(parallel_mode="data_parallel", gradients_mean=True,
                                 device_num=1)
    reducer = DistributedGradReducer(ms.nn.Dense(2, 1).trainable_params())
    assert (reducer.degree, reducer.mean) == (1, True)    # degree from get_group_size()
    base_losses, base_w = _reducer_step(False)
    losses, w = _reducer_step(True)
    assert losses == base_losses
    np.testing.assert_array_equal(w, base_w)


def _reducer_step(use_reducer):
    from minispore.nn.wrap.grad_reducer import DistributedGradReducer

    class TrainStep(ms.nn.Cell):
        def __init__(self, network, optimizer):
            super().__init__(auto_prefix=False)
            self.network = network
            self.optimizer = optimizer
            self.weights = optimizer.parameters
            self.grad_fn = ms.value_and_grad(network, None, self.weights)
            self.reducer = DistributedGradReducer(self.weights, True, 1) if use_reducer \
                else None

        def construct(self, x, y):
            loss, grads = self.grad_fn(x, y)
            if self.reducer is not None:
                grads = self.reducer(grads)
            self.optimizer(grads)
            return loss

    ms.set_seed(0)
    net = ms.nn.Dense(3, 2)
    step = TrainStep(ms.nn.WithLossCell(net, ms.nn.MSELoss()),
                     ms.nn.Momentum(net.trainable_params(), 0.1, 0.9))
    x = ms.Tensor(np.arange(12, dtype=np.float32).reshape(4, 3) / 10)
    y = ms.Tensor(np.ones((4, 2), np.float32))
    return [float(step(x, y).asnumpy()) for _ in range(3)], net.weight.asnumpy().copy()


def test_auto_parallel_context_object(fresh_parallel_context):
    from minispore.parallel._auto_parallel_context import (_get_auto_parallel_context,
                                                           _reset_auto_parallel_context,
                                                           auto_parallel_context)
    a = auto_parallel_context()
    # MindSpore 2.10 defaults: stand_alone 1 False 0 False 1 True False
    assert (a.get_parallel_mode(), a.get_device_num(), a.get_gradients_mean(),
            a.get_global_rank(), a.get_enable_parallel_optimizer(), a.get_pipeline_stages(),
            a.get_loss_repeated_mean(), a.get_full_batch()) == \
        ("stand_alone", 1, False, 0, False, 1, True, False)
    ms.set_auto_parallel_context(parallel_mode="data_parallel", gradients_mean=True)
    # MindSpore 2.10: data_parallel True True, then stand_alone after the reset
    assert (a.get_parallel_mode(), a.get_gradients_mean(),
            _get_auto_parallel_context("gradients_mean")) == ("data_parallel", True, True)
    _reset_auto_parallel_context()
    assert a.get_parallel_mode() == "stand_alone"
    with pytest.raises(AttributeError, match="set_device_num"):
        a.set_device_num(2)


def test_mstype_names_minispore_lacks_raise():
    import minispore.common.dtype as mstype
    for name in ("uint", "complex64", "number_type", "float_"):
        with pytest.raises(AttributeError, match=f"dtype.{name} is not implemented"):
            getattr(mstype, name)
    assert not hasattr(mstype, "no_such_name")


def test_loss_scale_managers_as_mindspore():
    from minispore.train.loss_scale_manager import (DynamicLossScaleManager,
                                                    FixedLossScaleManager)
    assert ms.FixedLossScaleManager is FixedLossScaleManager
    assert ms.train.DynamicLossScaleManager is DynamicLossScaleManager
    f = FixedLossScaleManager()
    # MindSpore 2.10: 128.0 True, and get_update_cell() None without drop_overflow_update
    assert (f.get_loss_scale(), f.get_drop_overflow_update()) == (128.0, True)
    assert FixedLossScaleManager(1024, False).get_update_cell() is None
    assert isinstance(f.get_update_cell(), ms.nn.FixedLossScaleUpdateCell)
    assert isinstance(DynamicLossScaleManager().get_update_cell(), ms.nn.DynamicLossScaleUpdateCell)
    d = DynamicLossScaleManager(init_loss_scale=16, scale_factor=2, scale_window=3)
    seq = []
    for overflow in [False, False, False, True, False, False, False, True, True, False]:
        d.update_loss_scale(overflow)
        seq.append(d.get_loss_scale())
    # MindSpore 2.10's sequence, cur_iter and drop_overflow_update
    assert seq == [16, 16, 32, 16.0, 16.0, 16.0, 32.0, 16.0, 8.0, 8.0]
    assert (d.cur_iter, d.get_drop_overflow_update()) == (11, True)
    assert DynamicLossScaleManager().get_loss_scale() == 16777216
    # MindSpore 2.10's errors
    with pytest.raises(ValueError, match="'init_loss_scale' must be > 1"):
        DynamicLossScaleManager(init_loss_scale=0.5)
    with pytest.raises(ValueError, match="'scale_window' must be int and must > 0"):
        DynamicLossScaleManager(scale_window=0)
    with pytest.raises(ValueError, match="'scale_factor' must be > 0"):
        DynamicLossScaleManager(scale_factor=0)
    with pytest.raises(ValueError, match="'loss_scale' must be >= 1"):
        FixedLossScaleManager(0.5)


def test_ps_context_defaults_and_refusals():
    from minispore import context
    assert ms.get_ps_context is context.get_ps_context
    assert ms.set_ps_context is context.set_ps_context
    try:
        # MindSpore 2.10's get_ps_context values
        assert {k: context.get_ps_context(k) for k in (
            "enable_ps", "config_file_path", "enable_ssl", "ms_role", "scheduler_ip",
            "scheduler_port", "server_mode", "server_num", "worker_num")} == {
            "enable_ps": False, "config_file_path": "", "enable_ssl": False,
            "ms_role": "MS_NOT_PS", "scheduler_ip": "127.0.0.1", "scheduler_port": 6667,
            "server_mode": "", "server_num": 0, "worker_num": 0}
        assert context.set_ps_context(enable_ps=False) is None
        # MindSpore 2.10's errors
        with pytest.raises(ValueError, match="Set PS context keyword bogus is not recognized"):
            context.set_ps_context(bogus=1)
        with pytest.raises(ValueError, match="Get PS context keyword bogus is not recognized"):
            context.get_ps_context("bogus")
        with pytest.raises(TypeError, match="'enable_ps' must be <class 'bool'>"):
            context.set_ps_context(enable_ps=1)
        # MindSpore accepts enable_ps=True (a parameter-server job); one process cannot
        with pytest.raises(NotImplementedError, match="enable_ps"):
            context.set_ps_context(enable_ps=True)
        assert context.get_ps_context("enable_ps") is False
    finally:
        context.reset_ps_context()
