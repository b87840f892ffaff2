#include "runtime/serve/batch.h"

#include <algorithm>
#include <cstring>

#include "kernels_glsl/params.h"
#include "runtime/base/error.h"

namespace bs::serve {

using gpu::BufferUsage;

static uint64_t round256(uint64_t b) { return (b + 255) & ~uint64_t(255); }

BatchDecoder::BatchDecoder(model::Model& model, int32_t slots, int32_t steps_per_batch)
    : model_(model), device_(model.device()), slots_(slots), steps_(std::max(1, steps_per_batch)) {
  if (auto why = model.batch_unsupported(slots); !why.empty())
    fail_kind(ErrorKind::usage, "--parallel {}: this model cannot be batched: {}", slots, why);
  const auto& c = model.config();
  const uint64_t S = uint64_t(slots);
  ring_size_ = uint32_t(model.max_ctx() + 1);
  hist_stride_ = round256(uint64_t(model.max_ctx() + 2) * 4);
  ring_stride_ = round256(uint64_t(ring_size_ + 2) * 4);
  seen_stride_ = round256(uint64_t(c.vocab / 32 + 1) * 4);
  slot_state_ = device_.createBuffer({S * state_stride_, BufferUsage::storage, "slot states"});
  history_ = device_.createBuffer({S * hist_stride_, BufferUsage::storage, "slot token histories"});
  ring_ = device_.createBuffer({S * ring_stride_, BufferUsage::readback, "slot token rings"});
  seen_ = device_.createBuffer({S * seen_stride_, BufferUsage::storage, "slot repetition bitmaps"});
  control_ = device_.createBuffer({S * ctl_stride_, BufferUsage::upload, "slot host controls"});
  params_ = device_.createBuffer({S * param_stride_, BufferUsage::storage, "slot sampling options"});
  std::vector<uint32_t> eos(c.eos_ids.begin(), c.eos_ids.end());
  eos.push_back(0xffffffffu);
  eos_ = device_.createBuffer({eos.size() * 4, BufferUsage::storage, "eos ids"});
  device_.queue().writeBuffer(eos_, 0, eos.data(), eos.size() * 4);
  // Every slot starts stopped (state[2] = 1): its sampler skips, its row computes at position 0.
  std::vector<uint32_t> st(S * state_stride_ / 4, 0);
  for (uint64_t s = 0; s < S; ++s) st[s * state_stride_ / 4 + 2] = 1;
  device_.queue().writeBuffer(slot_state_, 0, st.data(), st.size() * 4);
  std::vector<uint32_t> zeros(S * std::max(seen_stride_, hist_stride_) / 4, 0);
  device_.queue().writeBuffer(seen_, 0, zeros.data(), S * seen_stride_);
  device_.queue().writeBuffer(history_, 0, zeros.data(), S * hist_stride_);
  std::memset(control_.mapped(), 0, S * ctl_stride_);
  std::memset(ring_.mapped(), 0, S * ring_stride_);
  taken_.assign(size_t(slots), 0);
  start_pos_.assign(size_t(slots), 0);
  prompt_len_.assign(size_t(slots), 0);

  // A batch: steps of the batched forward then every slot's sampler. Recorded once per length.
  for (int32_t len : {1, 4, steps_}) {
    if (!batch_cbs_.empty() && len <= batch_cbs_.back().first) continue;
    auto enc = device_.createCommandEncoder("serve decode batch", true);
    for (int32_t k = 0; k < len; ++k) {
      model_.record_decode_batch(enc, slots_, slot_state_, state_stride_, rec_);
      for (int32_t s = 0; s < slots_; ++s) record_sample(enc, rec_, s, uint64_t(s));
    }
    batch_cbs_.emplace_back(len, std::make_unique<gpu::CommandBuffer>(enc.finish()));
  }
}

BatchDecoder::~BatchDecoder() { device_.queue().waitIdle(); }

void BatchDecoder::record_sample(gpu::CommandEncoder& enc, model::Recording& rec, int32_t s, uint64_t logits_row) {
  const auto& a = device_.adapter();
  uint32_t wg = std::min<uint32_t>({1024u, 64u * std::max(a.subgroup_size, 1u), std::max(a.max_workgroup_invocations, 64u)});
  const auto& p = model_.kernels().get("sample_slots", {{0, wg}});
  const uint64_t vb = uint64_t(model_.config().vocab) * 4, u = uint64_t(s);
  // Bindings 1 and 6 alias: the sampler writes the token to both (state[0] and the embedding's input).
  gpu::BindGroupEntry e[] = {{0, &model_.logits(), logits_row * vb, vb},
                             {1, &slot_state_, u * state_stride_, state_stride_},
                             {2, &history_, u * hist_stride_, hist_stride_},
                             {3, &ring_, u * ring_stride_, ring_stride_},
                             {4, &eos_},
                             {5, &seen_, u * seen_stride_, seen_stride_},
                             {6, &slot_state_, u * state_stride_, 4},
                             {7, &control_, u * ctl_stride_, ctl_stride_},
                             {8, &params_, u * param_stride_, param_stride_}};
  rec.groups.push_back(device_.createBindGroup(p, 0, e, "sample slot"));
  auto pass = enc.beginComputePass();
  pass.setPipeline(p);
  pass.setBindGroup(0, rec.groups.back());
  pass.dispatchWorkgroups(1);
}

uint64_t BatchDecoder::start(int32_t s, std::span<const int32_t> prompt, int32_t pos0, const generate::GenerateOptions& o,
                             bool wait) {
  const auto& c = model_.config();
  if (prompt.empty() || pos0 < 0 || int64_t(pos0) + int64_t(prompt.size()) >= model_.max_ctx())
    fail_kind(ErrorKind::internal, "slot {}: a prompt of {} tokens at {} does not fit the context of {}", s, prompt.size(),
              pos0, model_.max_ctx());
  const uint32_t max_tokens = uint32_t(std::max<int64_t>(1, std::min<int64_t>(o.max_tokens, model_.max_ctx() - pos0 - int64_t(prompt.size()))));
  const auto& sp = o.sampling;
  kparams::SampleParams params{uint32_t(c.vocab), uint32_t(std::max(0, sp.top_k)), sp.temperature, sp.top_p, sp.min_p,
                               sp.repeat_penalty, uint32_t(sp.seed), uint32_t(sp.seed >> 32), max_tokens,
                               uint32_t(c.eos_ids.size()), o.ignore_eos ? 1u : 0u, ring_size_};
  const uint64_t u = uint64_t(s);
  uint32_t* ring = reinterpret_cast<uint32_t*>(ring_.mapped_as<uint8_t>() + u * ring_stride_);
  ring[0] = ring[1] = 0;
  reinterpret_cast<uint32_t*>(control_.mapped_as<uint8_t>() + u * ctl_stride_)[0] = 0;
  taken_[size_t(s)] = 0;
  start_pos_[size_t(s)] = pos0;
  prompt_len_[size_t(s)] = int32_t(prompt.size());

  // The prompt through the ordinary prefill (chunks of max_batch rows) on this slot's KV cache, then the
  // slot's sampler on the last row's logits: one submit, or a few parts submitted while the rest records.
  model::Recording rec;
  auto enc = device_.createCommandEncoder("serve prefill");
  enc.writeBuffer(params_, u * param_stride_, &params, sizeof params);
  std::vector<uint32_t> ids(prompt.begin(), prompt.end());
  enc.writeBuffer(history_, u * hist_stride_ + uint64_t(pos0) * 4, ids.data(), ids.size() * 4);
  model_.select_kv_slot(s);
  int32_t last_rows = 0;
  std::vector<gpu::CommandBuffer> parts;  // submitted while the rest records (model::prefill_in_parts)
  auto in_parts = model::prefill_in_parts(enc, device_.queue(), model_.config().n_layers, parts);
  for (size_t done = 0; done < ids.size();) {
    int32_t n = int32_t(std::min<size_t>(size_t(model_.max_batch()), ids.size() - done));
    uint32_t st[2] = {ids[done + size_t(n) - 1], uint32_t(pos0 + int32_t(done))};
    enc.writeBuffer(model_.state(), 0, st, sizeof st);
    enc.writeBuffer(model_.tokens(), 0, ids.data() + done, uint64_t(n) * 4);
    model_.record_forward(enc, n, rec, nullptr, nullptr, false, in_parts);
    last_rows = n;
    done += size_t(n);
  }
  model_.select_kv_slot(0);
  // The sampler appends at state.pos + 1: point pos at the last prompt token.
  uint32_t st[5] = {0, uint32_t(pos0 + int32_t(ids.size()) - 1), 0, 0, 0};
  enc.writeBuffer(slot_state_, u * state_stride_, st, sizeof st);
  record_sample(enc, rec, s, uint64_t(std::min(last_rows, model_.logits_rows()) - 1));
  auto cb = enc.finish();
  const uint64_t value = device_.queue().submit(cb);
  if (wait) {
    device_.queue().wait(value);
    return value;
  }
  parts.push_back(std::move(cb));
  started_.push_back({std::move(rec), std::move(parts), value});
  return value;
}

void BatchDecoder::wait_started() {
  if (!started_.empty()) device_.queue().wait(started_.back().value);  // the queue ran them in order
  started_.clear();
}

uint64_t BatchDecoder::submit(int32_t steps) {
  for (auto& [len, cb] : batch_cbs_)
    if (len >= steps) return device_.queue().submit(*cb);
  return device_.queue().submit(*batch_cbs_.back().second);
}
bool BatchDecoder::completed(uint64_t value) const { return device_.queue().completedValue() >= value; }
void BatchDecoder::wait(uint64_t value) { device_.queue().wait(value); }

bool BatchDecoder::take(int32_t s, std::vector<int32_t>& out) {
  ring_.invalidate();
  const uint32_t* ring = reinterpret_cast<const uint32_t*>(ring_.mapped_as<uint8_t>() + uint64_t(s) * ring_stride_);
  uint32_t n = __atomic_load_n(&ring[0], __ATOMIC_ACQUIRE);
  bool stopped = __atomic_load_n(&ring[1], __ATOMIC_ACQUIRE) != 0;
  for (uint32_t& t = taken_[size_t(s)]; t < n; ++t) out.push_back(int32_t(ring[2 + t % ring_size_]));
  return stopped && taken_[size_t(s)] == __atomic_load_n(&ring[0], __ATOMIC_ACQUIRE);
}

void BatchDecoder::cancel(int32_t s) {
  static_cast<volatile uint32_t*>(static_cast<void*>(control_.mapped_as<uint8_t>() + uint64_t(s) * ctl_stride_))[0] = 1;
}

int32_t BatchDecoder::position(int32_t s) const {
  return start_pos_[size_t(s)] + prompt_len_[size_t(s)] + std::max(0, int32_t(taken_[size_t(s)]) - 1);
}

std::map<std::string, double> BatchDecoder::profile_step() {
  device_.queue().waitIdle();
  gpu::Profiler prof(device_, 8192);
  model::Recording rec;
  auto enc = device_.createCommandEncoder("profile batched step");
  prof.begin(enc);
  model_.record_decode_batch(enc, slots_, slot_state_, state_stride_, rec, &prof);
  auto cb = enc.finish();
  device_.queue().wait(device_.queue().submit(cb));
  prof.collect();
  return prof.ms_by_label();
}

}  // namespace bs::serve
