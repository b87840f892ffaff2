#include "runtime/serve/engine.h"

#include <algorithm>

#include "runtime/base/error.h"
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

void Job::finish(const std::string& reason, const std::string& error) {
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

Engine::Engine(model::Model& model, const tok::Tokenizer& tok, EngineOptions opts)
    : model_(model), tok_(tok), opts_(opts), session_(model), can_rewind_(opts.prefix_cache && attention_only(model.config())) {
  worker_ = std::thread([this] { run(); });
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
  }
  cv_.notify_one();
  return true;
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
    job.completion_tokens_ = int32_t(generated.size());
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

}  // namespace bs::serve
