"""Device profiles of the simulated Ascend NPU: the one table where its numbers live.

Every parameter has a unit and a source tag (from ../shared/notes/ascend-gpu.md, section D):
[V] verified in a cited source, [D] derived from verified numbers, [E] an estimate (no public
figure exists: host launch and task dispatch costs, HBM bandwidth of the 910B). The cost model
(cost.py), the memory pool (memory.py) and the runtime clocks (runtime.py) read only these fields,
so a second profile (the smaller 310P-like one) changes every figure the simulator reports.
Select one with `ms.set_context(ascend_config={"device_profile": "Ascend310P"})`.
The interconnect (HCCS inside a server of `devices_per_node` NPUs, RoCE between servers) has no
figure verified in a cited source here: its bandwidths are the commonly quoted ones, marked [E];
collectives.py turns them into HCCL times.
"""
from __future__ import annotations

from dataclasses import dataclass, fields, replace


@dataclass(frozen=True)
class Param:
    unit: str
    source: str


# name -> (unit, source for the 910B-like defaults)
PARAMS: dict[str, Param] = {
    "cube_cores": Param("cores", "[V] S4,S5: 24 AIC on 910B2"),
    "vector_cores": Param("cores", "[V] S4,S5: 48 AIV (2 per AIC)"),
    "clock_hz": Param("Hz", "[V] S4,S5 cube_freq=1800 MHz; vector clock assumed equal [E]"),
    "cube_macs_per_cycle": Param("fp16 MAC/cycle/core", "[V] S1,S10: 16x16x16 fractal"),
    "cube_fp32_slowdown": Param("x", "[E] fp32 (HF32) Cube path at 1/4 the fp16 rate"),
    "vector_bytes_per_cycle": Param("B/cycle/core", "[V] S2,S4: 2048-bit vector unit"),
    "ub_bytes": Param("B", "[V] S4 ub_size=196608"),
    "l1_bytes": Param("B", "[V] S4,S6"),
    "l0a_bytes": Param("B", "[V] S4,S6 (L0B the same)"),
    "l0c_bytes": Param("B", "[V] S4,S6"),
    "l1_to_l0_bytes_per_cycle": Param("B/cycle/core", "[V] S8 (310P value, assumed for 910B)"),
    "l2_bytes": Param("B", "[V] S4 l2_size"),
    "hbm_bytes": Param("B", "[V] S4 allocatable HBM (64 GiB chip)"),
    "hbm_bw": Param("B/s", "[E] 1.6e12; ~1.5e12 practitioner roofline (S5)"),
    "l2_bw": Param("B/s", "[E] hbm_bw x 310P l2_rate/ddr_rate (S8)"),
    "mem_align": Param("B", "[V] S13,S15: 512 B fractal / MTE line"),
    "pcie_bw": Param("B/s", "[E] PCIe 4.0 x16 ~25 GB/s effective (S2)"),
    "pcie_latency": Param("s", "[E] 10 us per copy"),
    "host_launch_eager": Param("s", "[E] per PyNative op: infer+tiling+aclnn launch (S51-S55)"),
    "host_launch_kbk": Param("s", "[E] per kernel in graph KernelByKernel (O0/O1): C++ runtime"),
    "host_task_submit": Param("s", "[E] per extra task an eager op submits (its TransData)"),
    "task_dispatch": Param("s", "[E] device task scheduler, per task in sink mode"),
    "graph_execute_head": Param("s", "[E] model-execute head overhead per sunk run (S27)"),
    "kernel_min_duration": Param("s", "[E] shortest kernel on the device"),
    "transdata_efficiency": Param("fraction of hbm_bw", "[E] strided fractal re-layout"),
    # the interconnect (collectives.py): HCCS between the NPUs of one server, RoCE between
    # servers; the per-link and per-NIC figures are the commonly quoted ones, not measured
    "devices_per_node": Param("NPUs", "[E] 8 NPUs per Atlas 800T A2 server (commonly quoted)"),
    "hccs_bw": Param("B/s per direction", "[E] 56 GB/s per HCCS link, 7 links full mesh "
                                          "(commonly quoted; 910A: 3 x 240 Gb/s [V S2])"),
    "hccs_latency": Param("s", "[E] per collective step over HCCS (link + HCCL sync)"),
    "roce_bw": Param("B/s per direction", "[E] one 200 Gb/s RoCE NIC per NPU = 25 GB/s "
                                          "(commonly quoted)"),
    "roce_latency": Param("s", "[E] per collective step over RoCE (NIC + switch + sync)"),
}


@dataclass(frozen=True)
class DeviceProfile:
    name: str
    cube_cores: int
    vector_cores: int
    clock_hz: float
    cube_macs_per_cycle: int
    cube_fp32_slowdown: float
    vector_bytes_per_cycle: int
    ub_bytes: int
    l1_bytes: int
    l0a_bytes: int
    l0c_bytes: int
    l1_to_l0_bytes_per_cycle: int
    l2_bytes: int
    hbm_bytes: int
    hbm_bw: float
    l2_bw: float
    mem_align: int
    pcie_bw: float
    pcie_latency: float
    host_launch_eager: float
    host_launch_kbk: float
    host_task_submit: float
    task_dispatch: float
    graph_execute_head: float
    kernel_min_duration: float
    transdata_efficiency: float
    devices_per_node: int
    hccs_bw: float
    hccs_latency: float
    roce_bw: float
    roce_latency: float

    @property
    def peak_cube_flops(self) -> float:
        """fp16 FLOP/s of all Cube cores [D]."""
        return 2.0 * self.cube_macs_per_cycle * self.cube_cores * self.clock_hz

    def rows(self) -> list[tuple[str, object, str, str]]:
        """(name, value, unit, source) for every parameter: what `python -m minispore info`
        and the docs print."""
        return [(f.name, getattr(self, f.name), PARAMS[f.name].unit, PARAMS[f.name].source)
                for f in fields(self) if f.name != "name"]


ASCEND_910B = DeviceProfile(
    name="Ascend910B", cube_cores=24, vector_cores=48, clock_hz=1.8e9, cube_macs_per_cycle=4096,
    cube_fp32_slowdown=4.0, vector_bytes_per_cycle=256, ub_bytes=196608, l1_bytes=524288,
    l0a_bytes=65536, l0c_bytes=131072, l1_to_l0_bytes_per_cycle=512, l2_bytes=201326592, hbm_bytes=65452113920,
    hbm_bw=1.6e12, l2_bw=1.0e13, mem_align=512, pcie_bw=25e9, pcie_latency=10e-6,
    host_launch_eager=15e-6, host_launch_kbk=8e-6, host_task_submit=2e-6, task_dispatch=2e-6,
    graph_execute_head=30e-6, kernel_min_duration=3e-6, transdata_efficiency=0.5,
    devices_per_node=8, hccs_bw=56e9, hccs_latency=2e-6, roce_bw=25e9, roce_latency=5e-6)

# A 310P-like inference part (S8): 8 AI cores with 7 vector cores at 1.0-1.06 GHz, 16 MiB L2,
# 1 MiB L1, 256 KiB UB; memory and bandwidths are [E] (LPDDR4X-class, 24 GiB, ~200 GB/s).
# An inference card has no HCCS: its cards talk over PCIe [E] (the fields keep their names).
ASCEND_310P = replace(
    ASCEND_910B, name="Ascend310P", cube_cores=8, vector_cores=7, clock_hz=1.06e9,
    ub_bytes=262144, l1_bytes=1048576, l0c_bytes=262144, l2_bytes=16777216,
    hbm_bytes=24 * 2**30, hbm_bw=2.0e11, l2_bw=1.3e12, pcie_bw=12e9, devices_per_node=4,
    hccs_bw=12e9, hccs_latency=10e-6, roce_bw=12.5e9, roce_latency=10e-6)

PROFILES: dict[str, DeviceProfile] = {p.name: p for p in (ASCEND_910B, ASCEND_310P)}
DEFAULT = ASCEND_910B.name
