#!/bin/bash
# KHR subgroup coopmat (NVIDIA's shmem sample) vs the same shader in GL_NV_cooperative_matrix vs blueshift's f16 GEMM
. benchmarks/lease_setup.sh >/dev/null 2>&1
S="--matmul 512 --shape 4096x4096,4096x14336,14336x4096 --reps 20 --rounds 3"
timeout 100 $BS bs_gemv_bench $S --dtype f16 > $OUT/ours.txt 2>&1
grep -v "^#" $OUT/ours.txt | head -30
cd .dev/vkcm
export ONLY_F16=1 ONLY_16=1 ENABLE_NV=1 REPS=100
run() { tag=$1; shift; env "$@" timeout 60 stdbuf -oL ./vk_cooperative_matrix_perf --shmem --dim=4096 > $OUT/cm_$tag.txt 2>&1; grep -E "TFlops|rror" $OUT/cm_$tag.txt | sed "s/^/$tag /"; }
for r in 1 2; do
run khr4096 X=1
run nv4096 SHMEM_SPV=shaders/shmemnv_fp32.spv
run khr512x4096 DIM_M=512
run nv512x4096 DIM_M=512 SHMEM_SPV=shaders/shmemnv_fp32.spv
run khr512x14336 DIM_M=512 DIM_N=14336
run nv512x14336 DIM_M=512 DIM_N=14336 SHMEM_SPV=shaders/shmemnv_fp32.spv
done
