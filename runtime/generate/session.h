// A generation session on a Model: prefill as its own submit(s), then the whole decode loop as ONE
// vkQueueSubmit of replayed batches (K recorded steps each) whose completions a timeline semaphore
// counts; tokens stream from a host-visible ring as each batch completes. The GPU samples and decides
// when to stop; per token, 4 bytes cross to the host and the host does no work beyond reading them.
#pragma once
#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <memory>
#include <span>
#include <vector>

#include "runtime/model/model.h"

namespace bs::generate {

struct SamplingOptions {
  float temperature = 0.0f;   // <= 0: greedy
  int32_t top_k = 0;          // 0: off
  float top_p = 1.0f;         // 1: off
  float min_p = 0.0f;         // 0: off
  float repeat_penalty = 1.0f;
  uint64_t seed = 0;
};

struct GenerateOptions {
  int32_t max_tokens = 128;
  bool ignore_eos = false;
  SamplingOptions sampling;
};

struct GenerateStats {
  int32_t prompt_tokens = 0, generated = 0;
  double prefill_ms = 0, ttft_ms = 0, decode_ms = 0;  // decode: first to last token
  // Where prefill_ms goes: recording its command buffers on the host, when the first of them was submitted (the
  // GPU starts on layer 0 while the rest records), and the GPU's own time from the first dispatch to the end of
  // the sampler (timestamps).
  double prefill_record_ms = 0, prefill_gpu_ms = 0, prefill_first_submit_ms = 0;
  uint64_t prefill_submits = 0, decode_submits = 0;
  uint64_t dispatches_per_step = 0, barriers_per_step = 0;
  bool stopped_by_eos = false;
  double decode_tok_s() const { return generated > 1 && decode_ms > 0 ? (generated - 1) * 1000.0 / decode_ms : 0; }
};

// on_token(id, ms since generate() began); return false to cancel the rest of the answer.
using TokenCallback = std::function<bool(int32_t, double)>;

class Session {
 public:
  // steps_per_batch: decode steps per recorded command buffer (one timeline value each).
  Session(model::Model& model, int32_t steps_per_batch = 16);
  ~Session();

  // Continues from the current position (the KV cache keeps earlier turns): `prompt` is appended,
  // then up to max_tokens tokens are generated. Throws bs::Error when the context would overflow.
  GenerateStats generate(std::span<const int32_t> prompt, const GenerateOptions& opts, const TokenCallback& on_token);

  int32_t position() const { return pos_; }  // tokens in the KV cache
  void reset() { pos_ = 0; pending_ = -1; }
  // Keeps the first `pos` tokens in the KV cache (a prefix shared with the next prompt; serve's prefix
  // cache) and drops the pending token. Only for attention-only models: conv and recurrent states do
  // not rewind.
  void rewind(int32_t pos) { pos_ = std::clamp(pos, 0, pos_); pending_ = -1; }
  // GPU ms per dispatch label of one decode step at position `pos` (forward + "sample"), with a
  // timestamp and a barrier after every dispatch. Leaves the step state as a fresh session's.
  std::map<std::string, double> profile_step(int32_t pos, const GenerateOptions& opts);

  // Asks a running generate() to stop at the next batch boundary (safe from a signal handler thread).
  void cancel();

 private:
  void ensure_decode_graph(const GenerateOptions& opts);
  void ensure_long_decode_graph(const GenerateOptions& opts, int64_t last_pos);  // where a step reaches last_pos
  bool greedy_parts(const GenerateOptions& opts) const;  // argmax keys and sample_parts, not the one-workgroup scan
  bool sampler_embeds(const GenerateOptions& opts);
  void record_sample(gpu::CommandEncoder& enc, model::Recording& rec, const GenerateOptions& opts,
                     model::IndirectTable* indirect);

  model::Model& model_;
  gpu::Device& device_;
  int32_t steps_per_batch_;
  int32_t pos_ = 0;
  int32_t pending_ = -1;  // the last generated token, not yet in the KV cache: fed first next turn
  gpu::Buffer history_, ring_, eos_, seen_, control_, args_;
  // Greedy decoding's argmax keys (argmax.glsl; params.h kArgmaxKeyStride apart): argmax_parts' dispatch over slices of
  // the vocabulary (argmax_slices_ workgroups) or the head itself writes them, and sample_parts reduces them.
  gpu::Buffer argmax_parts_;
  uint32_t argmax_slices_ = 0;
  int32_t ring_size_;
  // A recorded decode batch: its commands, the objects they refer to, and (without conditional rendering) the
  // workgroup counts the gate copies into args_ at each step.
  struct DecodeGraph {
    std::unique_ptr<gpu::CommandBuffer> cb;
    model::Recording rec;
    gpu::Buffer nominal;
  };
  void record_decode_graph(DecodeGraph& g, const GenerateOptions& opts, bool long_context);
  // The decode batch, and where the model records a step differently at long contexts (Model::long_context_from) the
  // one that batches from long_from_ on replay; both re-recorded when sampling options change.
  DecodeGraph decode_, decode_long_;
  int32_t long_from_ = INT32_MAX;
  std::unique_ptr<gpu::Profiler> prefill_prof_;  // the prefill's GPU time (GenerateStats::prefill_gpu_ms)
  std::vector<uint8_t> decode_key_;
  uint64_t dispatches_per_step_ = 0, barriers_per_step_ = 0;
};

}  // namespace bs::generate
