"""Op declarations, one file per family; importing this package registers every op."""
from . import array, index_ops, linalg, math, nn, reduce  # noqa: F401
from . import conv, norm, random, rounding  # noqa: F401,E402
from . import sorting  # noqa: F401,E402
from . import activation, array_nd, attention, conv_nd, pool_nd  # noqa: F401,E402
