"""minispore.nn.layers: basic layers, activations, convolution/pooling, normalisation/dropout,
recurrent layers, padding/resampling and attention. Each module lists its Cells in `__all__`."""
from . import (activation, basic, conv, conv_transpose, normalization, pooling, rnn, rnn_cells,
               sampling, sync_batchnorm, transformer)
from .activation import *  # noqa: F401,F403
from .basic import *  # noqa: F401,F403
from .conv import *  # noqa: F401,F403
from .conv_transpose import *  # noqa: F401,F403
from .normalization import *  # noqa: F401,F403
from .pooling import *  # noqa: F401,F403
from .rnn import *  # noqa: F401,F403
from .rnn_cells import *  # noqa: F401,F403
from .sampling import *  # noqa: F401,F403
from .sync_batchnorm import *  # noqa: F401,F403
from .transformer import *  # noqa: F401,F403

__all__ = [n for m in (activation, basic, conv, conv_transpose, normalization, pooling, rnn,
                       rnn_cells, sampling, sync_batchnorm, transformer) for n in m.__all__]
