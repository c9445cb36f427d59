"""minispore: MindSpore's programming model in a small Python runtime.

`import minispore as ms` gives MindSpore 2.x names: ms.Tensor, ms.Parameter, ms.set_context,
ms.grad, ms.value_and_grad, ms.nn, ms.ops, dtypes such as ms.float32."""
from .core import tensor_methods as _tensor_methods  # noqa: F401  (attaches operators)
from .core.autodiff import grad, value_and_grad
from .core.jit import jit, jit_class, lazy_inline
from .core.vmap import vmap
from .core.mutable import mutable
from .core.data_sink import data_sink
from .core.check_modes import check_modes
from .core.context import (GRAPH_MODE, PYNATIVE_MODE, get_context, set_context, set_device)
from .core.context import COMPATIBLE, LAX, STRICT
from .core.dtype import (DType, bfloat16, bool_, dtype_to_nptype, float16, float32, float64,
                         int8, int16, int32, int64, pytype_to_dtype, uint8, uint16, uint32,
                         uint64)
from .core.tensor import Parameter, ParameterTuple, Tensor, from_numpy, tensor
from .core.ops.random import get_seed, set_seed
from . import backends  # noqa: E402,F401  (registers the backends' context option checks)
from . import common, nn, ops  # noqa: E402
from . import dataset, train  # noqa: E402
from . import amp  # noqa: E402
from . import onnx  # noqa: E402  (mindspore.onnx.export)
from .train import (Callback, LossMonitor, Model, TimeMonitor, export,  # noqa: E402
                    load_checkpoint, load_param_into_net, save_checkpoint)
from .train import (ckpt_to_safetensors, load_checkpoint_async,  # noqa: E402
                    safetensors_to_ckpt)
from .profiler import Profiler  # noqa: E402
from . import context, log  # noqa: E402  (MindSpore's module paths mindspore.context, .log)
from . import communication  # noqa: E402
from . import mint  # noqa: E402  (MindSpore's PyTorch-style API)
from .context import (ParallelMode, get_auto_parallel_context, get_ps_context,  # noqa: E402
                      reset_auto_parallel_context, set_auto_parallel_context, set_ps_context)
from .log import get_level, get_log_config  # noqa: E402
from .train import (DynamicLossScaleManager, FixedLossScaleManager,  # noqa: E402
                    LossScaleManager)

dtype = common.dtype
__version__ = "0.1.0"
