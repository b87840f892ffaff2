// Chained dispatches (decode on the per-phase path; the _chain kernel variants define CHAIN): dependent dispatches
// recorded with no barrier between them (ComputePassEncoder::chainNext). A producer (CHAIN_SIGNAL = 1) counts each of
// its workgroups done on the counter at binding 12 once what it writes is written; a consumer (CHAIN_WAIT = n) waits
// in chain_wait until n producer workgroups have, before it reads anything they wrote. So the consumer's workgroups
// launch while the producer's last ones drain: the launch and ramp that a barrier serializes (6-10 us a dispatch
// boundary on the H200, 2026-12-01-h200-session44.md) overlap the producer's tail. A dispatch may wait on one counter
// and signal another. The counters are zeroed by a fill before each step (Model::record_forward). A workgroup that
// spins never holds back one it waits for, because workgroups start in dispatch order (see chainNext). Measured on the
// H200 (2026-12-01-h200-session45.md, W40-W43): the poll is an atomic load (an atomic add of 0 queued the producers'
// signals behind 1,000 spinning workgroups; a plain `volatile` load let the 8B's consumers through early).
//
// The including kernel enables GL_KHR_memory_scope_semantics where CHAIN is defined (an #extension comes before any
// code) and calls both functions from every invocation, in uniform control flow.
#ifdef CHAIN
layout(constant_id = 4) const uint CHAIN_WAIT = 0;
layout(constant_id = 5) const uint CHAIN_SIGNAL = 0;
layout(std430, binding = 11) coherent volatile buffer ChainWait { uint chain_wait_count[]; };
layout(std430, binding = 12) coherent volatile buffer ChainSignal { uint chain_signal_count[]; };
#endif
// Before the first read of what the producer wrote.
void chain_wait() {
#ifdef CHAIN
  if (CHAIN_WAIT == 0u) return;
  if (gl_LocalInvocationIndex == 0u)
    while (atomicLoad(chain_wait_count[0], gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsRelaxed) <
           CHAIN_WAIT) {
    }
  memoryBarrierBuffer();
  barrier();
#endif
}
// After the workgroup's last write that a consumer reads.
void chain_signal() {
#ifdef CHAIN
  if (CHAIN_SIGNAL == 0u) return;
  memoryBarrierBuffer();
  barrier();
  if (gl_LocalInvocationIndex == 0u) atomicAdd(chain_signal_count[0], 1u);
#endif
}
