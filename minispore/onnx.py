"""`mindspore.onnx`: export(net, *inputs, file_name, input_names, output_names, export_params,
keep_initializers_as_inputs, dynamic_axes), MindSpore 2.10's ONNX exporter with named inputs and
outputs (train/onnx_export.py writes the model)."""
from .train.onnx_export import onnx_export as export

__all__ = ["export"]
