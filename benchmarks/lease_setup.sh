#!/usr/bin/env bash
# Sourced at the start of every command on the lease machine (see ../shared/docs/DEVICE.md): unpacks
# the Vulkan loader and the portable blueshift bundle (scripts/bundle.sh), and points at NVIDIA's ICD.
#   . benchmarks/lease_setup.sh      -> $BS (runs bundled programs: $BS blueshift devices) and $BS_BUILD (the commit
#     it was built from, scripts/bundle.sh's BUILD), $SHARED, and $OLD / $OLD_BUILD where
#     .dev/carry2/bundle-old.tar.xz is carried (an older tree's bin/ and run, for A/Bs of one tree against another;
#     it takes the new bundle's lib/), and stamp (below) for run scripts' progress lines
for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
export BLUESHIFT_VALIDATION=0
mkdir -p /tmp/bs
tar -C /tmp/bs -xJf .dev/carry/bundle.tar.xz
[ -f .dev/carry/shared.tar.xz ] && tar -C /tmp/bs -xJf .dev/carry/shared.tar.xz
BS=/tmp/bs/bundle/run
SHARED=/tmp/bs/shared
# What each bundle was built from (scripts/bundle.sh's BUILD), for run scripts to print beside their rows.
BS_BUILD=$(tr '\n' ' ' < /tmp/bs/bundle/BUILD 2>/dev/null || echo unknown)
export BS SHARED BS_BUILD
if [ -f .dev/carry2/bundle-old.tar.xz ]; then
  mkdir -p /tmp/bsold && tar -C /tmp/bsold -xJf .dev/carry2/bundle-old.tar.xz && cp -r /tmp/bs/bundle/lib /tmp/bsold/bundle/
  OLD=/tmp/bsold/bundle/run
  OLD_BUILD=$(tr '\n' ' ' < /tmp/bsold/bundle/BUILD 2>/dev/null || echo unknown)
  export OLD OLD_BUILD
fi
# For run scripts: `stamp MSG` prints MSG after the seconds since this file was sourced.
lease_t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - lease_t0 )) s] $*"; }
