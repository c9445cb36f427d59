#!/usr/bin/env bash
# The GPU checks in one go, on a machine with an NVIDIA GPU (sized for ~8 minutes on an
# H200). Run from anywhere:  OUT=/some/dir bash benchmarks/gpu_device_check.sh
# Writes at most 7 files under $OUT (default /tmp/minispore-gpu-check): env.txt, install.txt,
# gpu_tests.txt (tests/gpu -m gpu: tensors on the device, TF32 off, MLP step at every level vs
# the CPU, O2 as one captured CUDA graph), bench.txt + bench.json (benchmarks/gpu.py --quick),
# opdb.txt (the op database on the GPU: tests/ops -m gpu), summary.txt (one line per stage).
# Every stage has its own time limit, so a hang cannot eat the others' time.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-${TMPDIR:-/tmp}/minispore-gpu-check}
mkdir -p "$OUT"
PY=${PYTHON:-python3}
export PYTHONUNBUFFERED=1 PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
export MINISPORE_TEST_BACKENDS=GPU        # the op database's GPU cells only
# a kernel NVRTC rejects prints its whole source with the error (one run has to diagnose it)
export CUPY_DUMP_CUDA_SOURCE_ON_ERROR=1
summary() { echo "$*" >> "$OUT/summary.txt"; }
: > "$OUT/summary.txt"

{
  date -u; uname -a; nvidia-smi || true
  $PY --version
  $PY -c "import numpy, numba; print('numpy', numpy.__version__, 'numba', numba.__version__)"
  $PY -c "import cupy; print('cupy', cupy.__version__); cupy.show_config()" || true
  $PY -c "import torch; print('torch', torch.__version__, torch.cuda.is_available())" || true
} > "$OUT/env.txt" 2>&1

# The gpu extra: CuPy when it is missing (needs the package index; CUDA 13 drivers: .[gpu13]);
# minispore itself runs from this checkout (PYTHONPATH), so nothing else has to be fetched.
{
  if $PY -c "import cupy" 2>/dev/null; then
    echo "CuPy already installed: $($PY -c 'import cupy; print(cupy.__version__)')"
  else
    EXTRA=gpu
    nvidia-smi 2>/dev/null | grep -q "CUDA Version: 1[3-9]" && EXTRA=gpu13
    timeout 240 $PY -m pip install -q -e ".[$EXTRA]" || echo "pip install -e .[$EXTRA] FAILED"
  fi
  $PY -c "from minispore.backends import gpu; print('GPU available:', gpu.available())"
} > "$OUT/install.txt" 2>&1
summary "install: $(tail -n 1 "$OUT/install.txt")"

stage() {   # name, limit in seconds, output file, command...
  local name=$1 limit=$2 file=$3; shift 3
  local t0=$SECONDS
  timeout "$limit" "$@" > "$OUT/$file" 2>&1
  local rc=$?
  summary "$name: rc=$rc in $((SECONDS - t0)) s; $(grep -E '(passed|failed|error|skipped)' \
    "$OUT/$file" | tail -n 1)"
}

stage "gpu tests" 150 gpu_tests.txt \
  $PY -m pytest tests/gpu -m gpu -q -rfEs -p no:cacheprovider
stage "benchmark" 150 bench.txt $PY benchmarks/gpu.py --quick --json "$OUT/bench.json"
grep -E "GB/s|x PyNative" "$OUT/bench.txt" >> "$OUT/summary.txt"
XDIST=""
$PY -c "import xdist" 2>/dev/null && XDIST="-n 8"
stage "op database on GPU" 170 opdb.txt \
  $PY -m pytest tests/ops -m gpu -q -rfE -p no:cacheprovider $XDIST
cat "$OUT/summary.txt"
