#include "runtime/serve/engine.h"

#include <algorithm>
#include <cstdio>
#include <optional>

#include "runtime/base/env.h"
#include "runtime/base/error.h"
#include "runtime/serve/batch.h"
#include "runtime/serve/stop.h"

namespace bs::serve {

using Clock = std::chrono::steady_clock;

bool Job::wait(std::string& out, std::chrono::milliseconds timeout) {
  std::unique_lock lk(m_);
  cv_.wait_for(lk, timeout, [&] { return done_ || !text_.empty(); });
  out += text_;
  text_.clear();
  return done_;
}

std::string Job::finish_reason() const {
  std::lock_guard lk(m_);
  return finish_reason_;
}

std::string Job::error() const {
  std::lock_guard lk(m_);
  return error_;
}

void Job::append(const std::string& text) {
  if (text.empty()) return;
  {
    std::lock_guard lk(m_);
    text_ += text;
  }
  cv_.notify_all();
}

void Job::produced(int32_t tokens) {
  if (tokens > 0 && completion_tokens_ == 0)
    first_token_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - submitted_).count();
  completion_tokens_ = tokens;
}

void Job::finish(const std::string& reason, const std::string& error) {
  finished_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - submitted_).count();
  {
    std::lock_guard lk(m_);
    done_ = true;
    finish_reason_ = reason;
    error_ = error;
  }
  cv_.notify_all();
}

// Rewinding needs every layer's state to be a function of the KV cache up to a position: true of
// attention layers only (a conv or recurrent state holds the last position's summary).
static bool attention_only(const ModelConfig& c) {
  for (int32_t l = 0; l < c.n_layers; ++l)
    if (c.kind(l) != LayerKind::attention) return false;
  return true;
}

// One batched sequence: its job, its text pipeline, and what its KV-cache slot holds.
struct Engine::Slot {
  std::shared_ptr<Job> job;  // null: free
  std::optional<tok::StreamDecoder> dec;
  std::optional<StopMatcher> stop;
  std::vector<int32_t> generated;
  std::vector<int32_t> cached;  // tokens in this slot's KV cache (its last sequence's)
  int32_t max_tokens = 0;
  bool cancel_sent = false;
};

Engine::Engine(model::Model& model, const tok::Tokenizer& tok, EngineOptions opts)
    : model_(model), tok_(tok), opts_(opts), session_(model), can_rewind_(opts.prefix_cache && attention_only(model.config())) {
  if (opts_.parallel > 1) {
    batch_ = std::make_unique<BatchDecoder>(model, opts_.parallel);
    slots_.resize(size_t(opts_.parallel));
    stats_.slots = opts_.parallel;
    if (env_uint("BLUESHIFT_SERVE_WARMUP", 1)) warm_up();
  }
  worker_ = std::thread([this] {
    for (;;) {
      try {
        return opts_.parallel > 1 ? run_batched() : run();
      } catch (const std::exception& e) {
        // A failed submit or wait: the running sequences end with the error (their clients get it), and
        // the engine goes on with fresh slots rather than leaving every later request hanging.
        std::fprintf(stderr, "serve: decode batch failed: %s\n", e.what());
        for (auto& slot : slots_) {
          if (slot.job) slot.job->finish("error", e.what());
          slot = Slot{};
        }
      }
    }
  });
}

Engine::~Engine() {
  {
    std::lock_guard lk(m_);
    stopping_ = true;
    for (auto& j : queue_) j->finish("cancelled");
    queue_.clear();
  }
  cv_.notify_all();
  worker_.join();
}

bool Engine::submit(const std::shared_ptr<Job>& job) {
  {
    std::lock_guard lk(m_);
    if (stopping_ || int32_t(queue_.size()) >= opts_.max_queue) return false;
    job->submitted_ = Clock::now();
    queue_.push_back(job);
    if (submitted_.size() >= 1024)
      std::erase_if(submitted_, [](const std::weak_ptr<Job>& w) { return w.expired(); });
    submitted_.push_back(job);
  }
  cv_.notify_one();
  return true;
}

void Engine::cancel_all() {
  std::lock_guard lk(m_);
  for (auto& w : submitted_)
    if (auto j = w.lock()) j->cancel();
}

EngineStats Engine::stats() const {
  std::lock_guard lk(m_);
  EngineStats s = stats_;
  s.queued = int32_t(queue_.size());
  return s;
}

void Engine::run() {
  for (;;) {
    std::shared_ptr<Job> job;
    {
      std::unique_lock lk(m_);
      cv_.wait(lk, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      job = queue_.front();
      queue_.pop_front();
      stats_.active = 1;
    }
    job->queued_ms_ = std::chrono::duration<double, std::milli>(Clock::now() - job->submitted_).count();
    try {
      serve_one(*job);
    } catch (const std::exception& e) {
      // The Session's KV cache is in an unknown state: the next job starts from position 0.
      cached_.clear();
      session_.reset();
      job->finish("error", e.what());
    }
    std::lock_guard lk(m_);
    stats_.active = 0;
    stats_.served++;
    if (job->finish_reason() == "cancelled") stats_.cancelled++;
  }
}

void Engine::serve_one(Job& job) {
  if (job.cancelled()) return job.finish("cancelled");
  const auto& prompt = job.prompt;
  // The longest prefix the cache shares with the prompt, leaving at least one token to prefill (the
  // prefill's last row gives the first token's logits).
  size_t reuse = 0;
  if (can_rewind_ && int32_t(cached_.size()) == session_.position()) {
    size_t n = std::min(cached_.size(), prompt.size() - 1);
    while (reuse < n && cached_[reuse] == prompt[reuse]) ++reuse;
  }
  session_.rewind(int32_t(reuse));
  cached_.resize(reuse);
  job.cached_tokens_ = int32_t(reuse);

  tok::StreamDecoder dec(tok_, true);
  StopMatcher stop(job.stop);
  std::vector<int32_t> generated;
  auto st = session_.generate(std::span(prompt).subspan(reuse), job.opts, [&](int32_t id, double) {
    generated.push_back(id);
    job.produced(int32_t(generated.size()));
    job.append(stop.push(dec.push(id)));
    return !stop.stopped() && !job.cancelled();
  });
  if (!stop.stopped()) job.append(stop.push(dec.flush()));
  job.append(stop.flush());
  // The cache holds the prompt and every generated token but the last (Session::generate's contract).
  cached_.insert(cached_.end(), prompt.begin() + reuse, prompt.end());
  if (!generated.empty()) cached_.insert(cached_.end(), generated.begin(), generated.end() - 1);
  session_.rewind(int32_t(cached_.size()));  // drops the pending last token: the next job's prompt comes first
  {
    std::lock_guard lk(m_);
    stats_.cached_tokens += reuse;
    stats_.prompt_tokens += prompt.size();
    stats_.generated_tokens += generated.size();
  }
  if (stop.stopped()) job.finish("stop");
  else if (job.cancelled()) job.finish("cancelled");
  else job.finish(st.stopped_by_eos ? "stop" : "length");
}


void Engine::deliver(Slot& slot, int32_t s) {
  std::vector<int32_t> toks;
  batch_->take(s, toks);
  Job& job = *slot.job;
  for (int32_t id : toks) {
    if (slot.stop->stopped() || job.cancelled()) break;  // the GPU ran on until the cancel reached it
    slot.generated.push_back(id);
    job.produced(int32_t(slot.generated.size()));
    job.append(slot.stop->push(slot.dec->push(id)));
  }
  if ((slot.stop->stopped() || job.cancelled()) && !slot.cancel_sent) {
    batch_->cancel(s);
    slot.cancel_sent = true;
  }
}

void Engine::finish_slot(Slot& slot, int32_t s) {
  Job& job = *slot.job;
  if (!slot.stop->stopped() && !job.cancelled()) job.append(slot.stop->push(slot.dec->flush()));
  job.append(slot.stop->flush());
  // The slot's cache: the prompt and the generated tokens but the last (the ones the host kept; the GPU
  // may have sampled on before a cancel reached it, past what is recorded here, which is harmless).
  slot.cached = job.prompt;
  size_t keep = std::min(slot.generated.size() > 0 ? slot.generated.size() - 1 : 0,
                         size_t(std::max(0, batch_->position(s) - int32_t(job.prompt.size()))));
  slot.cached.insert(slot.cached.end(), slot.generated.begin(), slot.generated.begin() + ptrdiff_t(keep));
  {
    std::lock_guard lk(m_);
    stats_.prompt_tokens += job.prompt.size();
    stats_.generated_tokens += slot.generated.size();
    stats_.served++;
    if (job.cancelled() && !slot.stop->stopped()) stats_.cancelled++;
  }
  if (slot.stop->stopped()) job.finish("stop");
  else if (job.cancelled()) job.finish("cancelled");
  else job.finish(int32_t(slot.generated.size()) < slot.max_tokens ? "stop" : "length");
  slot.job.reset();
  slot.dec.reset();
  slot.stop.reset();
}

// A short prompt through slot 0's prefill (BatchDecoder::start) and one replayed batch, before the server takes
// requests: the pipelines the batched path creates on first use are made here, not while the first requests wait.
// The slot's cached tokens stay empty, so no request reuses what the warm-up left in its KV cache.
// BLUESHIFT_SERVE_WARMUP=0 skips it (A/B runs).
void Engine::warm_up() {
  const int32_t n = std::min(8, model_.max_ctx() - 2);  // start() needs room for the prompt and one token
  if (n < 2) return;
  generate::GenerateOptions o;
  o.max_tokens = 1;
  o.sampling.temperature = 0;
  batch_->start(0, std::vector<int32_t>(size_t(n), 0), 0, o);
  batch_->wait(batch_->submit(1));
  std::vector<int32_t> out;
  batch_->take(0, out);
}

void Engine::run_batched() {
  const int32_t N = int32_t(slots_.size());
  for (;;) {
    std::vector<int32_t> joined;
    {
      std::unique_lock lk(m_);
      auto active = [&] { return std::any_of(slots_.begin(), slots_.end(), [](const Slot& s) { return bool(s.job); }); };
      cv_.wait(lk, [&] { return stopping_ || !queue_.empty() || active(); });
      if (stopping_) {
        for (auto& s : slots_)
          if (s.job) s.job->finish("cancelled");
        return;
      }
      // Queued jobs join free slots, each where the KV cache shares the longest prefix with its prompt.
      while (!queue_.empty()) {
        auto& job = queue_.front();
        int32_t best = -1;
        size_t best_len = 0;
        for (int32_t s = 0; s < N; ++s) {
          if (slots_[size_t(s)].job || std::find(joined.begin(), joined.end(), s) != joined.end()) continue;
          const auto& c = slots_[size_t(s)].cached;
          size_t n = 0;
          while (n < c.size() && n < job->prompt.size() && c[n] == job->prompt[n]) ++n;
          if (best < 0 || n > best_len) best = s, best_len = n;
        }
        if (best < 0) break;
        job->queued_ms_ = std::chrono::duration<double, std::milli>(Clock::now() - job->submitted_).count();
        slots_[size_t(best)].job = job;
        joined.push_back(best);
        queue_.pop_front();
      }
      stats_.active = int32_t(std::count_if(slots_.begin(), slots_.end(), [](const Slot& s) { return bool(s.job); }));
    }
    // Prefill the joiners between batches (the others wait for these submits); each joiner's first token is delivered
    // once its prefill is done. Each joiner's prefill records while those before it run (H200, 8 joiners of a 1B
    // q4_k_m: the last one's prompt_ms 35.1-35.9 -> 30.1-30.5 ms, server TTFT p50 ~60.2 -> ~58.4 ms and p95 ~77.4 ->
    // ~70.9 over three rounds; benchmarks/results/2026-11-28-h200-session17.md, R4-R5).
    // BLUESHIFT_SERVE_JOIN_OVERLAP=0: each start waits for its own submit (A/B runs).
    static const bool overlap = env_uint("BLUESHIFT_SERVE_JOIN_OVERLAP", 1) != 0;
    std::vector<std::pair<int32_t, uint64_t>> prefilling;  // (slot, timeline value), in submission order
    auto deliver_done = [&](bool wait) {
      size_t n = 0;
      for (; n < prefilling.size(); ++n) {
        auto [s, value] = prefilling[n];
        if (wait) batch_->wait(value);
        else if (!batch_->completed(value)) break;
        deliver(slots_[size_t(s)], s);
      }
      prefilling.erase(prefilling.begin(), prefilling.begin() + ptrdiff_t(n));
    };
    for (int32_t s : joined) {
      Slot& slot = slots_[size_t(s)];
      Job& job = *slot.job;
      if (job.cancelled()) {
        job.finish("cancelled");
        slot.job.reset();
        std::lock_guard lk(m_);
        stats_.served++;
        stats_.cancelled++;
        continue;
      }
      const auto& prompt = job.prompt;
      // Reuse at most all but two prompt tokens: a one-row prefill would take the decode path's kernels.
      size_t reuse = 0;
      if (opts_.prefix_cache && prompt.size() > 2) {
        size_t n = std::min(slot.cached.size(), prompt.size() - 2);
        while (reuse < n && slot.cached[reuse] == prompt[reuse]) ++reuse;
      }
      job.cached_tokens_ = int32_t(reuse);
      slot.cached.clear();  // overwritten from `reuse` on; rebuilt when the job ends
      slot.generated.clear();
      slot.cancel_sent = false;
      slot.dec.emplace(tok_, true);
      slot.stop.emplace(job.stop);
      slot.max_tokens = std::min<int32_t>(job.opts.max_tokens, model_.max_ctx() - int32_t(prompt.size()));
      try {
        prefilling.emplace_back(s, batch_->start(s, std::span(prompt).subspan(reuse), int32_t(reuse), job.opts, !overlap));
      } catch (const std::exception& e) {
        job.finish("error", e.what());
        slot.job.reset();
        continue;
      }
      {
        std::lock_guard lk(m_);
        stats_.cached_tokens += reuse;
      }
      deliver_done(false);  // without the overlap: this joiner, whose submit was waited for
    }
    deliver_done(true);
    batch_->wait_started();
    // Slots that stopped on their first token leave before the batch.
    auto retire = [&] {
      for (int32_t s = 0; s < N; ++s) {
        Slot& slot = slots_[size_t(s)];
        if (!slot.job) continue;
        if (slot.job->cancelled() && !slot.cancel_sent) {
          batch_->cancel(s);
          slot.cancel_sent = true;
        }
        std::vector<int32_t> rest;
        bool stopped = batch_->take(s, rest);
        if (!rest.empty()) fail_kind(ErrorKind::internal, "slot {}: tokens left after a drain", s);
        if (stopped) finish_slot(slot, s);
      }
    };
    for (int32_t s = 0; s < N; ++s)
      if (slots_[size_t(s)].job) deliver(slots_[size_t(s)], s);
    retire();
    {
      std::lock_guard lk(m_);
      stats_.active = int32_t(std::count_if(slots_.begin(), slots_.end(), [](const Slot& s) { return bool(s.job); }));
    }
    if (std::none_of(slots_.begin(), slots_.end(), [](const Slot& s) { return bool(s.job); })) continue;
    // One replayed batch, as long as the longest remaining answer needs (up to K steps); tokens stream to
    // their jobs while it runs (the rings are read by polling).
    int32_t need = 1;
    for (const auto& slot : slots_)
      if (slot.job && !slot.cancel_sent) need = std::max(need, slot.max_tokens - int32_t(slot.generated.size()));
    uint64_t v = batch_->submit(need);
    while (!batch_->completed(v)) {
      for (int32_t s = 0; s < N; ++s)
        if (slots_[size_t(s)].job) deliver(slots_[size_t(s)], s);
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    batch_->wait(v);
    for (int32_t s = 0; s < N; ++s)
      if (slots_[size_t(s)].job) deliver(slots_[size_t(s)], s);
    retire();
    std::lock_guard lk(m_);
    stats_.active = int32_t(std::count_if(slots_.begin(), slots_.end(), [](const Slot& s) { return bool(s.job); }));
  }
}

}  // namespace bs::serve
