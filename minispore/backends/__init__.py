"""Device backends: cpu (numba), gpu (cupy), ascend_sim (simulated Ascend NPU)."""
