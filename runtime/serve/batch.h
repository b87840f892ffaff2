// Continuous batching on the GPU: up to `slots` sequences decode together, each with its own KV-cache
// slot, step state, sampler options, token history and token ring.
//
// One command buffer of K decode steps is recorded once (Model::record_decode_batch, then one sampler
// dispatch per slot reading its options from a buffer) and replayed for every batch: which sequences
// run, their positions and their options all live in GPU buffers, so the host does no work per token
// within a batch. Between batches the host takes the tokens each slot's ring holds, prefills joining
// sequences into free slots (start), and frees finished ones. A slot whose sampler has stopped (end of
// sequence, max_tokens, a cancel) skips sampling; its row of the step still runs, at its last position.
#pragma once
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "runtime/generate/session.h"

namespace bs::serve {

class BatchDecoder {
 public:
  BatchDecoder(model::Model& model, int32_t slots, int32_t steps_per_batch = 16);
  ~BatchDecoder();
  int32_t slots() const { return slots_; }
  int32_t steps_per_batch() const { return steps_; }

  // Prefills `prompt` into slot s after the first `pos0` tokens its KV cache already holds, and samples
  // the sequence's first token; one submit, waited for. opts.max_tokens is clamped to the context.
  // With `wait` false the submit is left running (the next start records while it runs; the queue keeps
  // them in order): its timeline value is returned for wait / completed, and wait_started() waits for every
  // start so far and frees what their command buffers used.
  uint64_t start(int32_t s, std::span<const int32_t> prompt, int32_t pos0, const generate::GenerateOptions& opts,
                 bool wait = true);
  void wait_started();
  // Replays one batch over every slot: the shortest recorded batch (1, 4 or K steps) that covers
  // `steps`, or K; returns its timeline value.
  uint64_t submit(int32_t steps);
  bool completed(uint64_t value) const;
  void wait(uint64_t value);
  // Appends the tokens slot s produced since the last take; returns true once its sampler has stopped.
  bool take(int32_t s, std::vector<int32_t>& out);
  // Stops slot s at its next step (a cancelled request, a matched stop string): safe while a batch runs.
  void cancel(int32_t s);
  // Tokens in slot s's KV cache (prompt + generated but the last) after it stopped.
  int32_t position(int32_t s) const;
  // GPU milliseconds by kernel of one batched forward step (no sampling), submitted alone and waited for:
  // the KV rows it appends are the ones the next step writes again, so the sequences are unchanged.
  std::map<std::string, double> profile_step();
  // Dispatches and barriers a step records (samplers included), averaged over the longest recorded batch.
  double dispatches_per_step() const { return double(batch_cbs_.back().second->dispatchCount()) / batch_cbs_.back().first; }
  double barriers_per_step() const { return double(batch_cbs_.back().second->barrierCount()) / batch_cbs_.back().first; }

 private:
  void record_sample(gpu::CommandEncoder& enc, model::Recording& rec, int32_t s, uint64_t logits_row);
  model::Model& model_;
  gpu::Device& device_;
  int32_t slots_, steps_;
  uint64_t state_stride_ = 256, hist_stride_, ring_stride_, seen_stride_, ctl_stride_ = 256, param_stride_ = 256;
  uint32_t ring_size_;
  gpu::Buffer slot_state_, history_, ring_, seen_, control_, params_, eos_;
  std::vector<uint32_t> taken_;  // tokens taken from each slot's ring
  std::vector<int32_t> start_pos_, prompt_len_;
  model::Recording rec_;
  // Starts submitted and not yet waited for (start with wait false): what their command buffers use.
  struct Started {
    model::Recording rec;
    std::vector<gpu::CommandBuffer> cbs;
    uint64_t value = 0;
  };
  std::deque<Started> started_;  // a deque: Started (its Recording) may not move without throwing
  // Recorded batches of 1, 4 and K steps: when every running sequence needs only a few more tokens, a
  // short batch saves the steps a long one would spend on stopped rows.
  std::vector<std::pair<int32_t, std::unique_ptr<gpu::CommandBuffer>>> batch_cbs_;
};

}  // namespace bs::serve
