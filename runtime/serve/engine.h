// The serving engine: requests (Jobs) wait in a queue and one worker thread, the only one that
// touches the GPU, runs them on a generate::Session. Each token is decoded to text and matched against
// the job's stop strings on the worker; the HTTP thread serving the job waits on the job for text.
//
// Prefix caching: the Session's KV cache still holds the previous sequence (its prompt and the tokens
// generated after it). A job whose prompt starts with those tokens rewinds the Session to the shared
// prefix and prefills only the rest. Models with recurrent or conv state (hybrids) cannot be rewound
// and always start at position 0.
//
// With parallel > 1, up to that many sequences decode together (continuous batching, batch.h): queued
// jobs join free slots between replayed decode batches, finished ones leave without stalling the rest,
// and each slot keeps its last sequence's KV for prefix reuse (a job goes to the free slot sharing the
// longest prefix with its prompt). With parallel = 1 a generate::Session serves them one at a time.
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "runtime/generate/session.h"
#include "runtime/serve/stop.h"
#include "runtime/tokenizer/tokenizer.h"

namespace bs::serve {

class Job {
 public:
  // Set before Engine::submit.
  std::vector<int32_t> prompt;
  generate::GenerateOptions opts;
  std::vector<std::string> stop;

  // The HTTP side: asks the worker to stop this job (at once if it is still queued).
  void cancel() { cancelled_ = true; }
  bool cancelled() const { return cancelled_; }
  // Waits up to `timeout` for text or the end; appends new text to `out`. Returns true once the job has
  // finished and everything it produced has been handed out.
  bool wait(std::string& out, std::chrono::milliseconds timeout);

  // Valid once finished: "stop", "length", "cancelled" or "error" (then error() says why).
  std::string finish_reason() const;
  std::string error() const;
  int32_t completion_tokens() const { return completion_tokens_; }
  int32_t cached_tokens() const { return cached_tokens_; }
  double queued_ms() const { return queued_ms_; }
  // Valid once finished (negative where no token came): ms from submit to the first token, and to the end.
  double first_token_ms() const { return first_token_ms_; }
  double finished_ms() const { return finished_ms_; }

 private:
  friend class Engine;
  void append(const std::string& text);
  void finish(const std::string& reason, const std::string& error = "");
  void produced(int32_t tokens);  // completion_tokens, and the first token's time

  mutable std::mutex m_;
  std::condition_variable cv_;
  std::string text_;  // produced, not yet handed out
  bool done_ = false;
  std::string finish_reason_, error_;
  std::atomic<bool> cancelled_{false};
  std::atomic<int32_t> completion_tokens_{0}, cached_tokens_{0};
  double queued_ms_ = 0, first_token_ms_ = -1, finished_ms_ = -1;
  std::chrono::steady_clock::time_point submitted_;
};

struct EngineOptions {
  int32_t parallel = 1;     // sequences decoded together (the model needs kv_slots and logits_rows >= this)
  bool prefix_cache = true;
  int32_t max_queue = 256;  // jobs waiting beyond this are refused (HTTP 503)
};

struct EngineStats {
  int32_t queued = 0, active = 0, slots = 1;
  uint64_t served = 0, cancelled = 0, cached_tokens = 0, prompt_tokens = 0, generated_tokens = 0;
};

class Engine {
 public:
  Engine(model::Model& model, const tok::Tokenizer& tok, EngineOptions opts = {});
  ~Engine();  // finishes queued jobs as cancelled, waits for the running one
  // Queues a job; false when the queue is full.
  bool submit(const std::shared_ptr<Job>& job);
  EngineStats stats() const;
  // Cancels every queued and running job (shutdown: their streams end at the next decode batch).
  void cancel_all();
  int32_t max_ctx() const { return model_.max_ctx(); }
  int32_t vocab() const { return model_.config().vocab; }

 private:
  void run();
  void serve_one(Job& job);
  void run_batched();
  void warm_up();
  struct Slot;
  void deliver(Slot& slot, int32_t s);
  void finish_slot(Slot& slot, int32_t s);

  model::Model& model_;
  const tok::Tokenizer& tok_;
  EngineOptions opts_;
  generate::Session session_;
  bool can_rewind_;
  std::vector<int32_t> cached_;  // the tokens in the Session's KV cache, in order
  std::unique_ptr<class BatchDecoder> batch_;  // parallel > 1
  std::vector<Slot> slots_;

  mutable std::mutex m_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<Job>> queue_;
  std::vector<std::weak_ptr<Job>> submitted_;  // for cancel_all (pruned of finished jobs as it grows)
  bool stopping_ = false;
  EngineStats stats_;
  std::thread worker_;
};

}  // namespace bs::serve
