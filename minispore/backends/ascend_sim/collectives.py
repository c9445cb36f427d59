"""The cost model of collectives on a simulated Ascend cluster: how long HCCL takes for one
collective of `nbytes` over `p` devices, from the profile's interconnect figures alone
(profile.py: HCCS within a server of `devices_per_node` NPUs, RoCE between servers).

Pure functions of (op, nbytes, p, profile), in the alpha-beta model: a step costs the link's
latency alpha, a byte 1/B of the link's bandwidth per direction (every device sends and
receives at once, one neighbour at a time). With n the bytes below:

- all_reduce (n = the buffer): ring 2(p-1)/p * n/B + 2(p-1) alpha; halving-doubling
  (recursive-halving reduce-scatter, then recursive-doubling all-gather) 2(p-1)/p * n/B +
  2 log2(p) alpha. Rule: halving-doubling when p is a power of two (the same bytes in fewer
  steps, so never slower here), ring otherwise;
- reduce_scatter (n = the input, p parts) and all_gather (n = the gathered output, p parts):
  (p-1)/p * n/B + (p-1) alpha as a ring, log2(p) alpha steps by halving/doubling (same rule);
- collective_broadcast (n = the buffer): the cheaper of a binomial tree ceil(log2 p) * (alpha
  + n/B) and scatter + ring all-gather 2(p-1)/p * n/B + (ceil(log2 p) + p-1) alpha;
- all_to_all (n = one device's input): pairwise exchange, (p-1) * (alpha + n/(p B)).

Hierarchical when p exceeds one server (p = nodes x k, k = devices_per_node): all_reduce is
an intra-server reduce-scatter over HCCS, an all-reduce of the n/k shard between servers over
RoCE, then an intra-server all-gather; all_gather is an inter-server all-gather of the n/k
shards, then the intra-server one; reduce_scatter the mirror; broadcast between servers, then
within each; all_to_all sends (k-1) parts over HCCS and (p-k) over RoCE.
One device (p = 1) communicates nothing: 0 s (the runtime still gives the task its minimum
duration). `all_reduce_async` costs what all_reduce costs. The rooted collectives cost as
their duals: reduce (n = the buffer) as a broadcast run backwards, collective_gather and
collective_scatter (n = the root's whole buffer) as an all-gather of n.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from .profile import DeviceProfile

__all__ = ["OPS", "Estimate", "estimate", "collective_time", "task_name"]

OPS = ("all_reduce", "all_reduce_async", "all_gather", "reduce_scatter",
       "collective_broadcast", "all_to_all", "reduce", "collective_gather",
       "collective_scatter", "broadcast_from_root")
HCCL_NAMES = {"all_reduce": "hcclAllReduce", "all_reduce_async": "hcclAllReduce",
              "all_gather": "hcclAllGather", "reduce_scatter": "hcclReduceScatter",
              "collective_broadcast": "hcclBroadcast", "all_to_all": "hcclAlltoAll",
              "reduce": "hcclReduce", "collective_gather": "hcclGather",
              "collective_scatter": "hcclScatter", "broadcast_from_root": "hcclBroadcast"}
# the rooted collectives cost as their duals and halves: a reduce as a broadcast run backwards,
# a gather or scatter (n: the root's whole buffer) as an all-gather's bytes into one device
_SAME_COST = {"reduce": "collective_broadcast", "broadcast_from_root": "collective_broadcast",
              "collective_gather": "all_gather", "collective_scatter": "all_gather"}


@dataclass(frozen=True)
class Estimate:
    seconds: float
    algorithm: str          # e.g. "ring", "halving-doubling", "hierarchical(HCCS x8, RoCE x2)"


def _pow2(p: int) -> bool:
    return p & (p - 1) == 0


def _log2(p: int) -> int:
    return math.ceil(math.log2(p)) if p > 1 else 0


def _flat(op: str, n: float, p: int, bw: float, alpha: float) -> tuple[float, str]:
    """(seconds, algorithm) of one collective over p devices on one kind of link."""
    if p <= 1:
        return 0.0, "local"
    op = _SAME_COST.get(op, op)
    hd = _pow2(p)
    frac = (p - 1) / p
    if op == "all_reduce":
        steps = 2 * _log2(p) if hd else 2 * (p - 1)
        return 2 * frac * n / bw + steps * alpha, "halving-doubling" if hd else "ring"
    if op in ("all_gather", "reduce_scatter"):
        steps = _log2(p) if hd else p - 1
        return frac * n / bw + steps * alpha, "halving-doubling" if hd else "ring"
    if op == "collective_broadcast":
        tree = _log2(p) * (alpha + n / bw)
        scatter_gather = 2 * frac * n / bw + (_log2(p) + p - 1) * alpha
        if tree <= scatter_gather:
            return tree, "binomial tree"
        return scatter_gather, "scatter + all-gather"
    if op == "all_to_all":
        return (p - 1) * (alpha + n / (p * bw)), "pairwise"
    raise ValueError(f"collective cost model: unknown collective {op!r}; choose one of "
                     f"{', '.join(OPS)}")


def estimate(op: str, nbytes: int, p: int, profile: DeviceProfile) -> Estimate:
    """The modelled time and algorithm of collective `op` on `p` devices (module docstring
    says what `nbytes` counts for each op)."""
    if op == "all_reduce_async":
        op = "all_reduce"
    if op not in OPS:
        raise ValueError(f"collective cost model: unknown collective {op!r}; choose one of "
                         f"{', '.join(OPS)}")
    if not isinstance(p, int) or p < 1:
        raise ValueError(f"collective cost model: the number of devices must be an int >= 1, "
                         f"but got {p!r}")
    if nbytes < 0:
        raise ValueError(f"collective cost model: nbytes must be >= 0, but got {nbytes}")
    op = _SAME_COST.get(op, op)
    k = profile.devices_per_node
    hb, ha = profile.hccs_bw, profile.hccs_latency
    if p <= k:
        t, alg = _flat(op, nbytes, p, hb, ha)
        return Estimate(t, alg)
    if p % k:
        raise ValueError(f"collective cost model: {p} devices do not fill whole servers of "
                         f"{k} ({profile.name}'s devices_per_node); use a multiple of {k}")
    m = p // k
    rb, ra = profile.roce_bw, profile.roce_latency
    n = float(nbytes)
    if op == "all_reduce":
        intra, _ = _flat("reduce_scatter", n, k, hb, ha)
        inter, _ = _flat("all_reduce", n / k, m, rb, ra)
        t = 2 * intra + inter
    elif op == "all_gather":
        t = _flat("all_gather", n / k, m, rb, ra)[0] + _flat("all_gather", n, k, hb, ha)[0]
    elif op == "reduce_scatter":
        t = _flat("reduce_scatter", n, k, hb, ha)[0] + _flat("reduce_scatter", n / k, m, rb,
                                                             ra)[0]
    elif op == "collective_broadcast":
        t = _flat(op, n, m, rb, ra)[0] + _flat(op, n, k, hb, ha)[0]
    else:
        t = (k - 1) * (ha + n / (p * hb)) + (p - k) * (ra + n / (p * rb))
    return Estimate(t, f"hierarchical (HCCS x{k}, RoCE x{m})")


def collective_time(op: str, nbytes: int, p: int, profile: DeviceProfile) -> float:
    """Seconds of collective `op` of `nbytes` on `p` devices (see `estimate`)."""
    return estimate(op, nbytes, p, profile).seconds


def fmt_bytes(n: int) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} B"


def task_name(op: str, nbytes: int, p: int) -> str:
    """The timeline's name of a collective task, e.g. "hcclAllReduce 4.0 MB x4"."""
    return f"{HCCL_NAMES.get(op, op)} {fmt_bytes(nbytes)} x{p}"
