"""mindspore.mint: MindSpore's PyTorch-style functional API (PyTorch names, signatures and
defaults: `dim`/`keepdim`, `mint.transpose(input, dim0, dim1)`), written as thin views over
the same op declarations as `ops`, never as aliases of `ops` (whose defaults differ)."""
from . import nn, optim  # noqa: F401
from ._creation import *  # noqa: F401,F403
from ._elementwise import *  # noqa: F401,F403
from ._extra import *  # noqa: F401,F403
from ._linalg import *  # noqa: F401,F403
from ._reduce import *  # noqa: F401,F403
from ._shape import *  # noqa: F401,F403
from ._sorting import *  # noqa: F401,F403
from ._trig import *  # noqa: F401,F403
from . import _creation, _elementwise, _extra, _linalg, _reduce, _shape, _sorting, _trig

__all__ = sorted(set(_creation.__all__ + _elementwise.__all__ + _extra.__all__ +
                     _linalg.__all__ + _reduce.__all__ + _shape.__all__ +
                     _sorting.__all__ + _trig.__all__))
