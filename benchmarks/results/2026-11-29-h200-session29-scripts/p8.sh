#!/usr/bin/env bash
# P8 (session 29): what reading a phase's first bytes ahead would buy. P7's probe (one phase's matrix, N copies swept
# in turn with a barrier between) with --rows-prefetch-mib (new): right after each copy's dispatch, with no barrier
# between, stream_read (a workgroup a SM) reads the first MiB of the next copy, so that the next dispatch may find its
# first round's rows in L2. The first round's bytes: 12 MB on the 8B's gate/up and q/k/v at 640 wide (2,640 subgroups x
# 2 rows), all 33 MB of its down (one round), 4.9 MB on the 1B's gate/up at 512.
# Predicted: at about the first round's bytes, each copy 2-4 us faster (the ramp: 8-15% on gate/up, more on q/k/v) if
# L2 keeps them and the extra reads fit beside the phase's own (P7: the phases stream at 1.6-3.2 TB/s of 4.4); no gain
# or a loss if the prefetch's reads compete.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
rm -rf /tmp/o; mkdir -p /tmp/o
for shape in 28672:4096:8:640 4096:14336:16:640 6144:4096:36:640 16384:2048:28:512; do
  IFS=: read -r m k c wg <<< "$shape"
  for mib in 0 4 12 32; do
    timeout 60 $BS bs_micro --rows --rows-m $m --rows-k $k --rows-copies $c --rows-prefetch-mib $mib --rows-wg $wg \
      --rows-per-sm 1 --rows-parts 1,2 --rows-pipe 0,1 --rows-header 1 --reps 10 --json > /tmp/o/rows-$m-$k-$mib.json
    python3 - /tmp/o/rows-$m-$k-$mib.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
c = d["rows_copies"]
line = f"{d['rows_m']:6} x {d['rows_k']:5} ({d['rows_bytes'] / 1e6:3.0f} MB) prefetch {d['rows_prefetch_bytes'] / 2**20:4.1f} MiB:"
for r in d["rows_sweep"]:
    line += f" | p{r['parts']} pipe{r['pipe']} {r['ms'] * 1000 / c:5.1f} us"
print(line + f" | stream_read {d['rows_bytes'] / (d['stream_read_gb_s'] * 1e3):5.1f} us")
PY
  done
  stamp "$m x $k"
done
tar -C /tmp -cJf $OUT/p8.tar.xz o
