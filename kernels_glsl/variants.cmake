# Every kernel variant, and the only place one is declared: bs_kernel(NAME SOURCE [DEFINES ...]).
# Names read op + types, e.g. matvec_q4k_f32.

# --- runtime plumbing and micro-benchmarks ---
bs_kernel(noop noop.comp)
bs_kernel(stream_read stream_read.comp)
bs_kernel(reduce_sum_f32 reduce.comp)
bs_kernel(reduce_max_f32 reduce.comp DEFINES REDUCE_MAX)

# --- model kernels ---
bs_kernel(rms_norm_f32 rms_norm.comp)
bs_kernel(matvec_f16 matvec_f16.comp)
