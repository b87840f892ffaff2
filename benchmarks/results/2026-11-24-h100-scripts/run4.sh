#!/usr/bin/env bash
# Session 2026-11-24, device run 4: all 24 manifests of DOPPLER's models/local/ (clocksmith/doppler b39bd5e),
# one at a time: synth --like, verify --deep, info, and generate --max-tokens 8 (greedy, 4 prompt ids) where
# blueshift has the architecture; the bundle is deleted before the next (the largest is 19.3 GB).
set -uo pipefail
. benchmarks/lease_setup.sh
tar -C /tmp -xJf .dev/m24/manifests.tar.xz
L=$OUT/run4.txt
{
for d in /tmp/doppler-manifests/*/; do
  n=$(basename $d); b=/tmp/m24/$n; rm -rf /tmp/m24; mkdir -p /tmp/m24
  t0=$(date +%s.%N)
  s=$($BS blueshift synth --like $d/manifest.json $b --seed 1 2>&1 | tail -1)
  t1=$(date +%s.%N)
  v=$($BS blueshift verify --deep $b 2>&1 | tail -2 | tr '\n' ' '); vrc=$?
  i=$($BS blueshift info $b 2>&1 | grep -E "not runnable|without a blueshift name" | head -2)
  if [ -z "$i" ]; then
    g=$($BS blueshift generate --model $b --prompt-tokens 2,106,1645,236779 --max-tokens 8 --temperature 0 --ignore-eos 2>&1 | tail -2 | tr '\n' ' ')
  else g="(not run: $i)"; fi
  echo "== $n: synth $(python3 -c "print(f'{$t1-$t0:.1f}')") s: $s"
  echo "   verify: $v"
  echo "   generate: $g"
done
rm -rf /tmp/m24
} 2>&1 | tee $L
