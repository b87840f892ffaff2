#!/bin/bash
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig; export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
cd .dev/vkcm
export ONLY_F16=1
REPS=200 timeout 120 stdbuf -oL ./vk_cooperative_matrix_perf --dim=4096 > $OUT/cm_4096.txt 2>&1
grep -E "shader:|TFlops" $OUT/cm_4096.txt | head -60
