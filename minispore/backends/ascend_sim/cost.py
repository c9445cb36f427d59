"""The cost model: how long one kernel takes on the simulated device, from the profile alone.

Each kernel is a roofline over the profile (profile.py): the time is the larger of its compute
time on its unit and its memory time, never below the profile's minimum kernel duration.

- Cube (matmul): the operands are padded to 16 (fractals); the output is cut into tiles whose
  fp32 accumulators fit half of L0C (double buffering), K into steps whose operand slices fit
  half of L0A/L0B; tiles are spread over the Cube cores in waves (a small matmul uses few cores:
  parallelism is capped by the tile count), and each K step costs the larger of its MACs at the
  per-core MAC rate (fp32 inputs pay `cube_fp32_slowdown`) and its L1->L0 load. Memory: each
  operand is re-read once per tile row/column from L2 when the working set fits L2, else HBM.
- Vector (elementwise, fused groups, reductions, TransData): elements x operations at the lanes
  of the cores the tensor's UB tiles can occupy; a fused group reads its inputs and writes its
  output once (UB fusion), which is the whole point of fusing.
- Copies between host and device: PCIe latency + bytes / bandwidth.
"""
from __future__ import annotations

import math

from ...core import scalar_expr as E
from ...core import scalar_math
from .profile import DeviceProfile

CUBE, VECTOR, MTE, PCIE = "Cube", "Vector", "MTE", "PCIe"

# relative Vector-unit cost of one scalar operation (a transcendental is a short instruction
# sequence on the Vector unit): scalar_math.TABLE's weights
_OP_WEIGHT = {name: op.weight for name, op in scalar_math.TABLE.items()}


def expr_ops(e: E.Expr) -> int:
    """Vector operations per element of a scalar expression (arguments and constants free)."""
    if e.op in ("arg", "const"):
        return 0
    return _OP_WEIGHT.get(e.op, 1) + sum(expr_ops(a) for a in e.args if isinstance(a, E.Expr))


def cube(p: DeviceProfile, batch: int, m: int, n: int, k: int, in_itemsize: int,
         out_itemsize: int, fp32: bool) -> tuple[float, int, float]:
    """(seconds, HBM bytes, FLOPs) of a batch of (m x k) @ (k x n) on the Cube."""
    pm, pn, pk = (max(16, -(-d // 16) * 16) for d in (m, n, k))
    side = int(math.sqrt(p.l0c_bytes / 2 / 4)) // 16 * 16       # fp32 accumulator tile side
    tm, tn = min(side, pm), min(side, pn)
    # K is walked in steps whose A and B slices fit half of L0A/L0B (double buffering); each
    # step's slices come from L1 while the previous step multiplies: a step costs the larger
    tk = min(pk, max(16, (p.l0a_bytes // 2) // (max(tm, tn) * in_itemsize) // 16 * 16))
    k_steps = -(-pk // tk)
    mac = tm * tn * tk / p.cube_macs_per_cycle * (p.cube_fp32_slowdown if fp32 else 1.0)
    load = (tm + tn) * tk * in_itemsize / p.l1_to_l0_bytes_per_cycle
    rows, cols = -(-pm // tm), -(-pn // tn)
    tiles = batch * rows * cols
    waves = -(-tiles // p.cube_cores)
    cycles = waves * k_steps * max(mac, load)
    compute = cycles / p.clock_hz
    a_bytes, b_bytes = batch * pm * pk * in_itemsize, batch * pk * pn * in_itemsize
    c_bytes = batch * pm * pn * out_itemsize
    first = a_bytes + b_bytes + c_bytes
    reread = a_bytes * (cols - 1) + b_bytes * (rows - 1)
    reread_bw = p.l2_bw if a_bytes + b_bytes <= p.l2_bytes else p.hbm_bw
    memory = first / p.hbm_bw + reread / reread_bw
    flops = 2.0 * batch * m * n * k
    return max(p.kernel_min_duration, compute, memory), first, flops


def vector(p: DeviceProfile, elements: int, in_bytes: int, out_bytes: int,
           ops_per_element: int = 1, itemsize: int = 4) -> float:
    """Seconds for a Vector kernel over `elements` that reads `in_bytes` and writes `out_bytes`
    from/to HBM once."""
    total = in_bytes + out_bytes
    tile = p.ub_bytes // 4                       # in + out, double buffered
    cores = max(1, min(p.vector_cores, -(-total // tile)))
    lanes = p.vector_bytes_per_cycle // max(1, min(itemsize, 4))
    compute = elements * max(1, ops_per_element) / (cores * lanes * p.clock_hz)
    # a quarter of the vector cores saturate HBM [E]
    bw = p.hbm_bw * min(1.0, cores / max(1, p.vector_cores / 4))
    return max(p.kernel_min_duration, compute, total / bw)


def transdata(p: DeviceProfile, nd_bytes: int, nz_bytes: int) -> float:
    """ND <-> FRACTAL_NZ: a GM -> GM re-layout of the padded bytes at a fraction of HBM
    bandwidth (strided fractal access)."""
    return max(p.kernel_min_duration,
               (nd_bytes + nz_bytes) / (p.hbm_bw * p.transdata_efficiency))


def move(p: DeviceProfile, in_bytes: int, out_bytes: int) -> float:
    """Data movement kernels (gather, concat, transpose, slicing): bytes at HBM bandwidth."""
    return max(p.kernel_min_duration, (in_bytes + out_bytes) / p.hbm_bw)


def pcie(p: DeviceProfile, nbytes: int) -> float:
    return p.pcie_latency + nbytes / p.pcie_bw
