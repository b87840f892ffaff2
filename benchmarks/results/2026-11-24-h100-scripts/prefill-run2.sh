#!/usr/bin/env bash
# run 2: tile/step variants of the ORIGINAL matmul_cm (main) timed in isolation through bs_gemv_bench --cm-spv.
set -uo pipefail
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json BLUESHIFT_VALIDATION=0
mkdir -p /tmp/base; tar -C /tmp/base -xJf .dev/prefill/base.tar.xz; B=/tmp/base/bundle/run
timeout 300 $B bs_gemv_bench --matmul 512 --dtype q4k,f16 --shape 512x2048,2048x2048,8192x2048,2048x8192,1024x4096,4096x4096,14336x4096,4096x14336 \
  --reps 20 --rounds 3 --cm-spv .dev/prefill/spv 2>&1 | grep -v " matmul  " | grep -v "^#"
