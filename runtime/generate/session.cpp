#include "runtime/generate/session.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <future>
#include <thread>

#include "kernels_glsl/params.h"
#include "runtime/base/env.h"
#include "runtime/base/error.h"

namespace bs::generate {

using gpu::BufferUsage;
using Clock = std::chrono::steady_clock;

static double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

Session::Session(model::Model& model, int32_t steps_per_batch)
    : model_(model), device_(model.device()), steps_per_batch_(std::max(1, steps_per_batch)) {
  const auto& c = model.config();
  ring_size_ = model.max_ctx() + 1;
  history_ = device_.createBuffer({uint64_t(model.max_ctx() + 2) * 4, BufferUsage::storage, "token history"});
  ring_ = device_.createBuffer({uint64_t(ring_size_ + 2) * 4, BufferUsage::readback, "token ring"});
  seen_ = device_.createBuffer({uint64_t(c.vocab / 32 + 1) * 4, BufferUsage::storage, "repetition bitmap"});
  control_ = device_.createBuffer({16, BufferUsage::upload, "host control"});
  // argmax_parts takes slices of 2048 logits (its 256 invocations load 8 each, all at once), a key each; a head that
  // folds the argmax in takes slices of kArgmaxSliceRows, so the keys are as many as those (params.h).
  argmax_slices_ = uint32_t((c.vocab + 2047) / 2048);
  const uint64_t keys = (uint64_t(c.vocab) + kparams::kArgmaxSliceRows - 1) / kparams::kArgmaxSliceRows;
  const uint64_t key_bytes = keys * kparams::kArgmaxKeyStride * 8;
  argmax_parts_ = device_.createBuffer({key_bytes, BufferUsage::storage, "argmax keys"});
  const std::vector<uint8_t> none(key_bytes, 0);  // key 0 (none): a folded head maxes into them
  device_.queue().writeBuffer(argmax_parts_, 0, none.data(), none.size());
  std::vector<uint32_t> eos(c.eos_ids.begin(), c.eos_ids.end());
  eos.push_back(0xffffffffu);
  eos_ = device_.createBuffer({eos.size() * 4, BufferUsage::storage, "eos ids"});
  device_.queue().writeBuffer(eos_, 0, eos.data(), eos.size() * 4);
  std::vector<uint32_t> zeros(c.vocab / 32 + 1, 0);
  device_.queue().writeBuffer(seen_, 0, zeros.data(), zeros.size() * 4);
  std::memset(control_.mapped(), 0, 16);
}

Session::~Session() { device_.queue().waitIdle(); }

void Session::cancel() { static_cast<volatile uint32_t*>(control_.mapped())[0] = 1; }

static kparams::SampleParams sample_params(const model::Model& m, const GenerateOptions& o, uint32_t ring_size) {
  const auto& s = o.sampling;
  return {uint32_t(m.config().vocab), uint32_t(std::max(0, s.top_k)), s.temperature, s.top_p, s.min_p,
          s.repeat_penalty, uint32_t(s.seed), uint32_t(s.seed >> 32), uint32_t(o.max_tokens),
          uint32_t(m.config().eos_ids.size()), o.ignore_eos ? 1u : 0u, ring_size};
}

// Greedy without a penalty takes the argmax over slices of the vocabulary (argmax keys: argmax_parts_) and a sampler
// that reduces them (sample_parts): on the H200 the one-workgroup scan of a 128k vocabulary took 38 us a step.
// BLUESHIFT_SAMPLE_SCAN=1 keeps the scan (A/B runs).
bool Session::greedy_parts(const GenerateOptions& opts) const {
  static const bool scan = env_switch("BLUESHIFT_SAMPLE_SCAN");
  return !scan && opts.sampling.temperature <= 0.0f && opts.sampling.repeat_penalty == 1.0f &&
         model_.kernels().has("argmax_parts") && model_.kernels().has("sample_parts");  // not in the WGSL set
}

void Session::record_sample(gpu::CommandEncoder& enc, model::Recording& rec, const GenerateOptions& opts,
                            model::IndirectTable* indirect) {
  const auto& a = device_.adapter();
  const uint64_t logits_bytes = uint64_t(model_.config().vocab) * 4;
  auto run = [&](const gpu::ComputePipeline& p, std::span<const gpu::BindGroupEntry> e, const char* label,
                 const auto& params, uint32_t groups) {
    rec.groups.push_back(device_.createBindGroup(p, 0, e, label));
    auto pass = enc.beginComputePass();
    pass.setPipeline(p);
    pass.setBindGroup(0, rec.groups.back());
    pass.setPushConstants(params);
    if (indirect) pass.dispatchWorkgroupsIndirect(*indirect->args, uint64_t(indirect->add(groups, 1, 1)) * 12);
    else pass.dispatchWorkgroups(groups);
  };
  // Greedy without a penalty: the argmax over slices of the vocabulary by many workgroups first (argmax_parts, or the
  // head itself where record_forward folded it in: Recording::head_argmax), then the sampler reduces the slices.
  const bool parts = greedy_parts(opts);
  if (parts && !rec.head_argmax) {
    const auto& ap = model_.kernels().get("argmax_parts", {{0, 256}});
    const gpu::BindGroupEntry e[] = {{0, &model_.logits(), 0, logits_bytes}, {1, &argmax_parts_}};
    run(ap, e, "argmax", kparams::ArgmaxParams{uint32_t(model_.config().vocab), 0, 0, 0}, argmax_slices_);
  }
  // As wide a workgroup as the sampler's shared arrays allow (MAX_SUBGROUPS = 64 subgroups): the
  // single workgroup walks the vocabulary, so more invocations keep more loads in flight. With the slices, 256.
  uint32_t wg = std::min<uint32_t>({parts ? 256u : 1024u, 64u * std::max(a.subgroup_size, 1u),
                                    std::max(a.max_workgroup_invocations, 64u)});
  std::vector<gpu::BindGroupEntry> e = {{0, &model_.logits(), 0, logits_bytes}, {1, &model_.state()}, {2, &history_},
                                        {3, &ring_}, {4, &eos_}, {5, &seen_}, {6, &model_.tokens(), 0, 4}, {7, &control_}};
  if (parts) e.front() = {9, &argmax_parts_};  // sample_parts reads the slices, not the logits
  const auto params = sample_params(model_, opts, uint32_t(ring_size_));
  // BLUESHIFT_SAMPLE_PROBE=MASK: parts of the sampler left out (sample.comp PROBE; timing breakdowns only, wrong tokens;
  // benchmarks/results/2026-12-01-h200-session42.md, W22). The WGSL set's sampler has no such constant.
  static const uint32_t probe = env_uint("BLUESHIFT_SAMPLE_PROBE", 0) & 7u;
  std::vector<gpu::SpecConstant> spec = {{0, wg}};
  if (probe) spec.push_back({1, probe});
  // Greedy, where the model allows: the sampler writes the token's embedding row into x too, and the next step's
  // forward records no embed dispatch (sampler_embeds; ensure_decode_graph sets Recording::x_embedded). So every
  // sample this session records writes it, the prefill's included: the first decode step reads that row.
  if (auto se = parts ? model_.sampler_embed() : std::nullopt) {
    e.push_back(se->table);
    e.push_back(se->x);
    struct {
      kparams::SampleParams s;
      kparams::EmbedParams e;
    } both{params, se->params};
    run(model_.kernels().get(se->kernel, spec), e, "sample", both, 1);
    return;
  }
  run(model_.kernels().get(parts ? "sample_parts" : "sample", spec), e, "sample", params, 1);
}

// Whether record_sample writes the next step's embedding (the decode graph then records none).
bool Session::sampler_embeds(const GenerateOptions& opts) {
  return greedy_parts(opts) && model_.sampler_embed().has_value();
}

void Session::ensure_decode_graph(const GenerateOptions& opts) {
  auto sp = sample_params(model_, opts, uint32_t(ring_size_));
  std::vector<uint8_t> key(sizeof sp);
  std::memcpy(key.data(), &sp, sizeof sp);
  if (decode_.cb && key == decode_key_) return;
  device_.queue().waitIdle();
  decode_ = {};
  decode_long_ = {};
  decode_key_ = key;
  record_decode_graph(decode_, opts, false);
  long_from_ = model_.long_context_from();
}

// Where a long context records differently, a second graph for the batches from there (a second recording costs
// nothing per step; a kernel that chose its form by position cost the short contexts' form 2-4%). Recorded the first
// time a generation reaches that far, so that short ones never build its pipelines.
void Session::ensure_long_decode_graph(const GenerateOptions& opts, int64_t last_pos) {
  if (!decode_long_.cb && long_from_ < model_.max_ctx() && last_pos >= long_from_)
    record_decode_graph(decode_long_, opts, true);
}

void Session::record_decode_graph(DecodeGraph& g, const GenerateOptions& opts, bool long_context) {
  // Record K steps. Once the sampler has set the stop flag (state[2]: end of sequence, max_tokens, or a
  // host cancel), the remaining steps of the submit must cost next to nothing. Where the device has
  // conditional rendering, each step is one conditional block on that flag around direct dispatches;
  // otherwise a gate kernel at the start of each step zeroes the workgroup counts of the step's
  // indirect dispatches. On the H100 a barrier before an indirect dispatch costs 4.0 us against 1.4 us
  // for compute -> compute (bs_micro), ~100 of them per step. The graphs share args_: each step's gate
  // rewrites it from its own graph's nominal counts.
  const bool conditional = device_.hasConditionalRendering();
  model::IndirectTable table;
  const size_t kMaxDispatches = 4096;
  const gpu::ComputePipeline* gate = nullptr;
  if (!conditional) {
    if (!args_) args_ = device_.createBuffer({kMaxDispatches * 12, BufferUsage::storage, "indirect args"});
    g.nominal = device_.createBuffer({kMaxDispatches * 12, BufferUsage::storage, "nominal args"});
    table.args = &args_;
    gate = &model_.kernels().get("gate");
    gpu::BindGroupEntry ge[] = {{0, &g.nominal}, {1, &args_}, {2, &model_.state()}, {3, &control_}};
    g.rec.groups.push_back(device_.createBindGroup(*gate, 0, ge, "gate"));
  }
  auto enc = device_.createCommandEncoder(long_context ? "decode batch (long context)" : "decode batch", true);
  g.rec.argmax_keys = greedy_parts(opts) ? &argmax_parts_ : nullptr;  // the head may take greedy's argmax
  g.rec.x_embedded = sampler_embeds(opts);  // the step before's sampler (or the prefill's) wrote x
  g.rec.long_context = long_context;
  uint64_t dispatch0 = 0, barrier0 = 0;
  for (int32_t s = 0; s < steps_per_batch_; ++s) {
    uint64_t d0 = enc.dispatchCount(), b0 = enc.barrierCount();
    table.cursor = 0;
    if (conditional) {
      enc.beginConditional(model_.state(), 8, true);  // state[2] != 0: skip the step
      model_.record_forward(enc, 1, g.rec, nullptr, nullptr, true);
      record_sample(enc, g.rec, opts, nullptr);
      enc.endConditional();
    } else {
      {
        auto pass = enc.beginComputePass();
        pass.setPipeline(*gate);
        pass.setBindGroup(0, g.rec.groups.front());
        pass.setPushConstants(kparams::GateParams{uint32_t(kMaxDispatches), 0, 0, 0});
        pass.dispatchWorkgroups(uint32_t((kMaxDispatches * 3 + 63) / 64));
      }
      model_.record_forward(enc, 1, g.rec, nullptr, &table, true);
      record_sample(enc, g.rec, opts, &table);
      if (table.nominal.size() / 3 > kMaxDispatches) fail_kind(ErrorKind::internal, "decode step has too many dispatches");
    }
    dispatch0 = enc.dispatchCount() - d0;  // every step records the same commands
    barrier0 = enc.barrierCount() - b0;
  }
  if (!long_context) {
    dispatches_per_step_ = dispatch0;
    barriers_per_step_ = barrier0;
  }
  if (!conditional) {
    std::vector<uint32_t> nominal(kMaxDispatches * 3, 0);
    std::copy(table.nominal.begin(), table.nominal.end(), nominal.begin());
    device_.queue().writeBuffer(g.nominal, 0, nominal.data(), nominal.size() * 4);
  }
  g.cb = std::make_unique<gpu::CommandBuffer>(enc.finish());
}

std::map<std::string, double> Session::profile_step(int32_t pos, const GenerateOptions& opts) {
  device_.queue().waitIdle();
  gpu::Profiler prof(device_, 4096);
  model::Recording rec;
  rec.argmax_keys = greedy_parts(opts) ? &argmax_parts_ : nullptr;  // as the decode loop records it
  rec.x_embedded = sampler_embeds(opts);  // x as the loop finds it: whatever the last sampler wrote
  rec.long_context = pos >= model_.long_context_from();  // the graph the loop would replay at pos
  auto enc = device_.createCommandEncoder("profile step");
  uint32_t st[5] = {0, uint32_t(pos), 0, 0, 0};
  enc.writeBuffer(model_.state(), 0, st, sizeof st);
  prof.begin(enc);
  model_.record_forward(enc, 1, rec, &prof, nullptr, true);
  record_sample(enc, rec, opts, nullptr);
  prof.mark(enc, "sample");
  enc.writeBuffer(model_.state(), 0, st, sizeof st);
  auto cb = enc.finish();
  device_.queue().wait(device_.queue().submit(cb));
  prof.collect();
  return prof.ms_by_label();
}

GenerateStats Session::generate(std::span<const int32_t> user_prompt, const GenerateOptions& opts,
                                const TokenCallback& on_token) {
  GenerateStats st;
  std::vector<int32_t> joined;
  if (pending_ >= 0) joined.push_back(pending_);
  joined.insert(joined.end(), user_prompt.begin(), user_prompt.end());
  std::span<const int32_t> prompt = joined;
  const auto& c = model_.config();
  if (prompt.empty()) fail_kind(ErrorKind::usage, "generate: empty prompt");
  for (int32_t t : prompt)
    if (t < 0 || t >= c.vocab) fail_kind(ErrorKind::usage, "generate: token id {} outside the vocabulary of {}", t, c.vocab);
  int64_t need = int64_t(pos_) + int64_t(prompt.size()) + opts.max_tokens;
  if (int64_t(pos_) + int64_t(prompt.size()) > model_.max_ctx())
    fail_kind(ErrorKind::resources, "prompt of {} tokens (after {} in the cache) exceeds the context of {} tokens",
              prompt.size(), pos_, model_.max_ctx());
  GenerateOptions o = opts;
  o.max_tokens = int32_t(std::max<int64_t>(1, std::min<int64_t>(opts.max_tokens, model_.max_ctx() - pos_ - int64_t(prompt.size()))));
  (void)need;
  st.prompt_tokens = int32_t(prompt.size());
  ensure_decode_graph(o);
  ensure_long_decode_graph(o, int64_t(pos_) + int64_t(prompt.size()) + o.max_tokens - 1);
  std::memset(control_.mapped(), 0, 16);
  auto t0 = Clock::now();
  uint64_t submits0 = device_.counters().submits;

  // Prefill: chunks of max_batch rows, one submit; the last chunk's logits are sampled in the same submit.
  uint32_t* ring = ring_.mapped_as<uint32_t>();
  ring[0] = 0;
  ring[1] = 0;
  model::Recording rec;
  auto enc = device_.createCommandEncoder("prefill");
  if (!prefill_prof_) prefill_prof_ = std::make_unique<gpu::Profiler>(device_, 1);
  gpu::Profiler& prof = *prefill_prof_;
  prof.clear();
  prof.begin(enc);
  uint32_t st0[5] = {0, uint32_t(pos_), 0, 0, 0};
  enc.writeBuffer(model_.state(), 0, st0, sizeof st0);
  std::vector<uint32_t> hist(prompt.begin(), prompt.end());
  enc.writeBuffer(history_, uint64_t(pos_) * 4, hist.data(), hist.size() * 4);
  // Submitted in parts while the rest records (model::prefill_in_parts).
  std::vector<gpu::CommandBuffer> early;  // pending until the wait below
  auto in_parts = model::prefill_in_parts(enc, device_.queue(), c.n_layers, early);
  auto after_layer = [&](int32_t l) {
    in_parts(l);
    if (early.size() == 1 && st.prefill_first_submit_ms == 0) st.prefill_first_submit_ms = ms_since(t0);
  };
  for (size_t done = 0; done < prompt.size();) {
    int32_t n = int32_t(std::min<size_t>(model_.max_batch(), prompt.size() - done));
    uint32_t pos = uint32_t(pos_ + done);
    enc.writeBuffer(model_.state(), 4, &pos, 4);
    enc.writeBuffer(model_.tokens(), 0, hist.data() + done, uint64_t(n) * 4);
    model_.record_forward(enc, n, rec, nullptr, nullptr, false, after_layer);
    done += n;
  }
  // The sampler reads the last logits row; it appends at state.pos + 1, so point pos at the last prompt token.
  uint32_t last_pos = uint32_t(pos_ + prompt.size() - 1);
  enc.writeBuffer(model_.state(), 4, &last_pos, 4);
  int32_t L = std::min<int32_t>(model_.logits_rows(), int32_t(std::min<size_t>(prompt.size(), model_.max_batch())));
  if (L != 1) fail_kind(ErrorKind::internal, "generate needs a model built with logits_rows = 1");
  record_sample(enc, rec, o, nullptr);
  prof.mark(enc, "prefill");
  auto prefill_cb = enc.finish();
  st.prefill_record_ms = ms_since(t0);
  const uint64_t done = device_.queue().submit(prefill_cb);
  if (early.empty()) st.prefill_first_submit_ms = ms_since(t0);
  // Polled for up to 0.5 s, not a blocking wait (its wake-up measured ~0.1 ms on the H100; session 12, R5): the
  // first token is the latency a user sees. Not on a CPU device, whose workers need the cores.
  // BLUESHIFT_PREFILL_SPIN=0 blocks.
  static const bool spin = env_uint("BLUESHIFT_PREFILL_SPIN", 1) != 0;
  if (spin && device_.adapter().type != "cpu") device_.queue().waitSpinning(done, 500'000'000);
  else device_.queue().wait(done);
  st.prefill_ms = ms_since(t0);
  prof.collect();
  st.prefill_gpu_ms = prof.ms_by_label().at("prefill");
  st.prefill_submits = device_.counters().submits - submits0;

  int32_t emitted = 0;
  bool cancelled = false;
  auto drain = [&]() {
    ring_.invalidate();
    uint32_t n = __atomic_load_n(&ring[0], __ATOMIC_ACQUIRE);
    while (emitted < int32_t(n) && !cancelled) {
      int32_t tok = int32_t(ring[2 + emitted % ring_size_]);
      double t = ms_since(t0);
      if (emitted == 0) st.ttft_ms = t;
      if (!on_token(tok, t)) {
        cancelled = true;
        cancel();
      }
      ++emitted;
    }
    return ring[1] != 0;
  };
  bool stop = drain();
  auto t_first = Clock::now();

  // Decode: every remaining step in ONE submit of replayed batches.
  uint64_t submits1 = device_.counters().submits;
  if (!stop && !cancelled && o.max_tokens > 1) {
    int32_t steps = o.max_tokens - 1;
    int32_t batches = (steps + steps_per_batch_ - 1) / steps_per_batch_;
    // Batch i's steps start at position p0 + i K; from long_from_ on, the long-context graph.
    const int64_t p0 = int64_t(pos_) + int64_t(prompt.size());
    std::vector<std::vector<const gpu::CommandBuffer*>> b(batches, {decode_.cb.get()});
    for (int32_t i = 0; i < batches; ++i)
      if (decode_long_.cb && p0 + int64_t(i) * steps_per_batch_ >= long_from_) b[size_t(i)] = {decode_long_.cb.get()};
    // The submit runs on its own thread while this one streams: on the H100, vkQueueSubmit of the
    // batches (one command buffer, pending several times at once) returned only after about 6 of 8
    // had executed, so tokens reached the caller in one burst near the end. Tokens are read by polling
    // the ring, which the sampler updates every step (visible to the host mid-batch on the H100 and on
    // lavapipe); the poll sleeps 100 us between looks, so no core spins.
    auto submitted = std::async(std::launch::async, [&] { return device_.queue().submitBatches(b); });
    uint64_t last = 0;
    while (!drain() && !cancelled) {
      if (!last && submitted.wait_for(std::chrono::seconds(0)) == std::future_status::ready) last = submitted.get();
      if (last && device_.queue().completedValue() >= last) break;
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    if (!last) last = submitted.get();  // rethrows a failed submit
    device_.queue().wait(last);
    drain();
  }
  st.decode_submits = device_.counters().submits - submits1;
  st.decode_ms = std::chrono::duration<double, std::milli>(Clock::now() - t_first).count();
  st.generated = emitted;
  st.stopped_by_eos = ring[1] != 0 && emitted < o.max_tokens;
  st.dispatches_per_step = dispatches_per_step_;
  st.barriers_per_step = barriers_per_step_;
  // The KV cache now holds the prompt and every generated token but the last (not yet fed back).
  pos_ += int32_t(prompt.size()) + std::max(0, emitted - 1);
  pending_ = emitted > 0 ? int32_t(ring[2 + (emitted - 1) % ring_size_]) : -1;
  st.prompt_tokens = int32_t(user_prompt.size());
  return st;
}

}  // namespace bs::generate
