#!/usr/bin/env bash
# Sourced at the start of every command on the lease machine (see ../shared/docs/DEVICE.md): unpacks
# the Vulkan loader and the portable blueshift bundle (scripts/bundle.sh), and points at NVIDIA's ICD.
#   . benchmarks/lease_setup.sh      -> $BS (runs bundled programs: $BS blueshift devices), $SHARED
for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
export BLUESHIFT_VALIDATION=0
mkdir -p /tmp/bs
tar -C /tmp/bs -xJf .dev/carry/bundle.tar.xz
[ -f .dev/carry/shared.tar.xz ] && tar -C /tmp/bs -xJf .dev/carry/shared.tar.xz
BS=/tmp/bs/bundle/run
SHARED=/tmp/bs/shared
export BS SHARED
