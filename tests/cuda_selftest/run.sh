#!/usr/bin/env bash
# Builds the CUDA backend and its self-test straight with nvcc and gcc (no
# Python, no setup.py) and runs it on the GPUs present:
#   bash tests/cuda_selftest/run.sh [loop id]
# DGARRAY_CUDA_ARCHS (one arch, default 90), CUDA_HOME, BUILD (object folder).
set -euo pipefail
cd "$(dirname "$0")/../.."
arch="${DGARRAY_CUDA_ARCHS:-90}"
cuda="${CUDA_HOME:-/usr/local/cuda}"
b="${BUILD:-/tmp/dg_cuda_selftest}"
mkdir -p "$b"
inc="-Isrc/core -Isrc/backend/cuda -Isrc/backend/cpu -Ikernels -I$cuda/include"
cflags="-std=c11 -O3 -Wall -Wextra -ffp-contract=off -fno-math-errno -pthread"
t0=$(date +%s)
pids=()
for f in kernels/*.cu; do
  "$cuda/bin/nvcc" -c "$f" -o "$b/$(basename "$f").o" -O3 -std=c++17 -Xcompiler -fPIC \
    --fmad=false -DNDEBUG -gencode "arch=compute_$arch,code=sm_$arch" $inc &
  pids+=($!)
done
for f in src/backend/cuda/*.c src/core/dg_status.c src/core/dg_ufunc.c \
         src/backend/cpu/cpu_loops.c src/backend/cpu/cpu_index.c \
         tests/cuda_selftest/cuda_selftest.c; do
  [ "$(basename "$f")" = module.c ] && continue
  gcc $cflags $inc -c "$f" -o "$b/$(basename "$f").o" &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
# NCCL (the exchange slots): -lnccl, or the versioned library where only that
# is installed
nccl="-lnccl"
for d in ${NCCL_HOME:+$NCCL_HOME/lib} "$cuda/lib64" /usr/lib/x86_64-linux-gnu /usr/lib64; do
  if [ -e "$d/libnccl.so" ]; then nccl="-L$d -Wl,-rpath,$d -lnccl"; break; fi
  v=$(ls "$d"/libnccl.so.[0-9]* 2>/dev/null | head -1 || true)
  if [ -n "$v" ]; then nccl="-L$d -Wl,-rpath,$d -l:$(basename "$v")"; break; fi
done
gcc -o "$b/cuda_selftest" "$b"/*.o -L"$cuda/lib64" -Wl,-rpath,"$cuda/lib64" \
    -lcudart -lcublas -lcublasLt $nccl -lstdc++ -lpthread -lm
echo "built in $(( $(date +%s) - t0 )) s"
"$b/cuda_selftest" "$@"
