#!/usr/bin/env bash
# Issue 3's throughput check, in one command on the lease machine (or here):
#   benchmarks/load_check.sh RUNNER OUT_DIR [config]
# Synths a Llama-3.2-1B-sized checkpoint, converts it (q4_k_m, f16) and times convert (MB/s of
# checkpoint read), then the loader (verify + decompress + deliver, no GPU) at 1..N threads, the bare
# SHA-256 rate of this CPU (one core, OpenSSL through Python's hashlib), and the full model load
# (`bench`'s load_s: + device, allocation, upload). Everything goes to OUT_DIR/load.txt.
set -euo pipefail
runner=$1; out=$2; cfg=${3:-llama-3.2-1b}
here=$(cd "$(dirname "$0")" && pwd)
work=${BENCH_WORK:-/tmp/bs-load}
rm -rf "$work"; mkdir -p "$work" "$out"
log=$out/load.txt
say() { echo "$@" | tee -a "$log"; }
now() { date +%s.%N; }
say "cores: $(nproc); $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
t0=$(now); "$runner" blueshift synth --config "$here/configs/$cfg.json" "$work/hf" --seed 1 >/dev/null; t1=$(now)
hf=$(du -sb "$work/hf" | cut -f1)
say "synth: $(python3 -c "print(f'{$hf/1e6:.0f} MB in {$t1-$t0:.2f} s = {$hf/1e6/($t1-$t0):.0f} MB/s')")"
for q in q4_k_m f16; do
  t0=$(now); "$runner" blueshift convert "$work/hf" "$work/$q" --quant $q >/dev/null; t1=$(now)
  say "convert $q: $(python3 -c "print(f'{$hf/1e6:.0f} MB checkpoint in {$t1-$t0:.2f} s = {$hf/1e6/($t1-$t0):.0f} MB/s')")"
  say "  stored $(du -sb "$work/$q" | cut -f1) bytes"
done
python3 - <<'PY' | tee -a "$log"
import hashlib, os, time
b = os.urandom(64 << 20)
t = time.perf_counter(); n = 0
while time.perf_counter() - t < 1.0:
    hashlib.sha256(b).digest(); n += 1
print(f"sha256 (one core, OpenSSL): {n * len(b) / 1e9 / (time.perf_counter() - t):.2f} GB/s")
PY
for q in q4_k_m f16; do
  for th in 1 2 4 8 16; do
    [ "$th" -le "$(nproc)" ] || continue
    say "loader $q threads=$th: $("$runner" blueshift verify --loader --threads $th "$work/$q" 2>/dev/null | tail -1)"
  done
  if "$runner" blueshift devices >/dev/null 2>&1; then
    "$runner" blueshift bench --model "$work/$q" --prompt-tokens 512 --gen-tokens 128 --reps 3 --json > "$out/load-bench-$q.json" 2>/dev/null &&
      say "full load $q (bench load_s, incl. device + allocation + upload): $(python3 -c "import json;print(json.load(open('$out/load-bench-$q.json'))['load_s'])") s"
  fi
done
rm -rf "$work"
