# Every kernel variant, and the only place one is declared: bs_kernel(NAME SOURCE [DEFINES ...]).
# Names read op + types, e.g. matvec_q4k_f32.

# --- runtime plumbing and micro-benchmarks ---
bs_kernel(noop noop.comp)
