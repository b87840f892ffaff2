set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
rm -rf /tmp/o; mkdir -p /tmp/o
timeout 200 benchmarks/decode_ab.sh $BS /tmp/o llama-3.1-8b q4_k_m xs768p0:BLUESHIFT_PKX=xs,BLUESHIFT_PERSISTENT_WG=768,BLUESHIFT_PERSISTENT_PIPE=0 \
  xs640:BLUESHIFT_PKX=xs xs768:BLUESHIFT_PKX=xs,BLUESHIFT_PERSISTENT_WG=768
timeout 100 benchmarks/decode_ab.sh $BS /tmp/o llama-3.2-1b q4_k_m xs768p0:BLUESHIFT_PKX=xs,BLUESHIFT_PERSISTENT_WG=768,BLUESHIFT_PERSISTENT_PIPE=0 xs:BLUESHIFT_PKX=xs
tar -C /tmp -cJf $OUT/n2.tar.xz o
