"""Model and TrainOneStepCell details as MindSpore 2.10 has them: Model.__init__'s metrics checks
(MindSpore's get_metrics and _build_eval_network errors, with their messages), the value types
of Model.eval's dict, and TrainOneStepCell's grad_reducer / reducer_flag. Every expected value
and message was printed by MindSpore 2.10 (CPU) on the same data."""
import numpy as np
import pytest

import minispore as ms
import minispore.dataset as ds
from minispore import Tensor, nn
from minispore.train import Dice, Model

F32 = np.float32
X = np.arange(24, dtype=F32).reshape(8, 3) / 10
Y = (X @ np.array([[1., -1.], [0.5, 0.2], [-0.3, 0.4]], F32)).astype(F32)
LABELS = np.array([0, 1, 1, 0, 1, 0, 0, 1], np.int32)
W = np.array([[0.1, -0.2, 0.3], [0.05, 0.15, -0.25]], F32)
B = np.array([0.01, -0.02], F32)


def _dense():
    return nn.Dense(3, 2, weight_init=Tensor(W), bias_init=Tensor(B))


def _data(y):
    return ds.NumpySlicesDataset({"x": X, "y": y}, shuffle=False).batch(4)


def test_eval_values_have_mindspores_types(mode):
    """numpy.float64 for loss, accuracy, top-1, mae and mse; an ndarray for precision; a Python
    float for dice (MindSpore 2.10's types and values, both modes)."""
    r = Model(_dense(), nn.CrossEntropyLoss(), metrics={
        "loss": nn.Loss(), "acc": nn.Accuracy(), "top1": nn.Top1CategoricalAccuracy(),
        "prec": nn.Precision()}).eval(_data(LABELS))
    assert {k: type(v) for k, v in r.items()} == {
        "loss": np.float64, "acc": np.float64, "top1": np.float64, "prec": np.ndarray}
    np.testing.assert_allclose(r["loss"], 0.7134974002838135, rtol=1e-6)
    assert r["acc"] == 0.5 and r["top1"] == 0.5
    np.testing.assert_array_equal(r["prec"], [0.5, 0.0])
    r = Model(_dense(), nn.MSELoss(), metrics={
        "mae": nn.MAE(), "mse": nn.MSE(), "loss": nn.Loss(), "dice": Dice()}).eval(_data(Y))
    assert {k: type(v) for k, v in r.items()} == {
        "mae": np.float64, "mse": np.float64, "loss": np.float64, "dice": float}
    np.testing.assert_allclose([r["mae"], r["mse"], r["loss"], r["dice"]],
                               [1.2687498927116394, 1.5556373298168182, 0.7778186574578285,
                                0.10212587648211205], rtol=1e-6)


def test_metric_names_in_a_set():
    r = Model(_dense(), nn.CrossEntropyLoss(), metrics={"loss", "acc"}).eval(_data(LABELS))
    assert sorted(r) == ["acc", "loss"] and type(r["acc"]) is np.float64


NO_EVAL_NETWORK = ("If `metrics` is set, `eval_network` must not be None. Do not set `metrics` "
                   "if you don't want an evaluation.\nIf evaluation is required, you need to "
                   "specify `eval_network`, which will be used in the framework to evaluate the "
                   "model.\nFor the simple scenarios with one data, one label and one logits, "
                   "`eval_network` is optional, and then you can set `eval_network` or `loss_fn`. "
                   "For the latter case, framework will automatically build an evaluation network "
                   "with `network` and `loss_fn`.")


def test_metrics_without_a_loss_fn_or_eval_network_is_mindspores_value_error():
    net = _dense()
    for kw in ({}, {"optimizer": nn.SGD(net.trainable_params())}):
        with pytest.raises(ValueError) as e:
            Model(net, metrics={"acc"}, **kw)
        assert str(e.value) == NO_EVAL_NETWORK
    # an eval_network, or no metrics at all (None or empty), is accepted
    Model(net, metrics={"acc"}, eval_network=nn.WithEvalCell(net, nn.MSELoss()))
    for empty in (None, set(), {}):
        Model(net, metrics=empty)


@pytest.mark.parametrize("metrics,shown", [
    (["acc"], "['acc']"), (("acc",), "('acc',)"), ("acc", "acc")])
def test_metrics_as_list_tuple_or_str_is_mindspores_type_error(metrics, shown):
    with pytest.raises(TypeError) as e:
        Model(_dense(), nn.MSELoss(), metrics=metrics)
    assert str(e.value) == (f"For 'get_metrics', the argument 'metrics' must be None, dict or "
                            f"set, but got {shown}")
    with pytest.raises(TypeError, match="the argument 'metrics' must be None, dict or set"):
        Model(_dense(), nn.MSELoss(), metrics=nn.Accuracy())


def test_metrics_dict_needs_str_keys_and_metric_values():
    for bad in ({"acc": "accuracy"}, {1: nn.Accuracy()}):
        with pytest.raises(TypeError, match="if 'metrics' is dict, the key in 'metrics' must be "
                                            "string and value in 'metrics' must be Metric"):
            Model(_dense(), nn.MSELoss(), metrics=bad)


def test_unknown_metric_name_is_a_key_error():
    with pytest.raises(KeyError, match="unsupported metric 'bogus'"):
        Model(_dense(), nn.MSELoss(), metrics={"bogus"})


def _train_step():
    net = _dense()
    return nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()),
                               nn.Momentum(net.trainable_params(), 0.1, 0.9))


def test_train_one_step_cell_has_an_identity_grad_reducer_stand_alone(mode):
    """MindSpore 2.10 stand-alone: reducer_flag False, grad_reducer an nn.Identity,
    parallel_mode 'stand_alone'; the step is MindSpore's (loss values from MindSpore 2.10)."""
    step = _train_step()
    assert step.reducer_flag is False and step.parallel_mode == "stand_alone"
    assert isinstance(step.grad_reducer, nn.Identity)
    assert not hasattr(step, "mean") and not hasattr(step, "degree")
    losses = [float(step(Tensor(X[:4]), Tensor(Y[:4])).asnumpy()) for _ in range(3)]
    np.testing.assert_allclose(losses, [0.13919373, 0.09606925, 0.04561013], rtol=1e-5)


def test_train_one_step_cell_builds_a_distributed_grad_reducer_in_data_parallel():
    """parallel_mode='data_parallel': reducer_flag True, mean from gradients_mean, degree the
    device number, grad_reducer a DistributedGradReducer over the weights (MindSpore's
    TrainOneStepCell.__init__); on one device the step is unchanged."""
    ms.set_auto_parallel_context(parallel_mode="data_parallel", gradients_mean=True)
    try:
        step = _train_step()
        assert step.reducer_flag is True and step.parallel_mode == "data_parallel"
        assert isinstance(step.grad_reducer, nn.DistributedGradReducer)
        assert step.mean is True and step.degree == 1 and step.grad_reducer.degree == 1
        losses = [float(step(Tensor(X[:4]), Tensor(Y[:4])).asnumpy()) for _ in range(3)]
    finally:
        ms.reset_auto_parallel_context()
    np.testing.assert_allclose(losses, [0.13919373, 0.09606925, 0.04561013], rtol=1e-5)


def test_train_one_step_cell_sens_zero_is_mindspores_value_error():
    net = _dense()
    with pytest.raises(ValueError, match="The input argument of 'sens' can not be 0."):
        nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()),
                            nn.SGD(net.trainable_params()), sens=0.0)
