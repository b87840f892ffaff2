// blueshift serve: an OpenAI-compatible HTTP server for one model (runtime/serve). Prints
// "listening on http://HOST:PORT" once it accepts connections; SIGINT / SIGTERM stop it.
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <thread>

#include "cli/command.h"
#include "cli/generate_common.h"
#include "runtime/serve/server.h"

namespace {

struct Args {
  std::string model, alias, api_key, precision = "f16";
  bs::serve::ServerOptions server;
  int32_t ctx = 0, parallel = 1;
  size_t max_body = 1 << 20;
  bool no_prefix_cache = false, deterministic = false;
};

void run(Args& a) {
  if (a.parallel < 1) bs::fail_kind(bs::ErrorKind::usage, "--parallel: expected at least 1, got {}", a.parallel);
  if (a.server.port < 0 || a.server.port > 65535) bs::fail_kind(bs::ErrorKind::usage, "--port: expected 0..65535, got {}", a.server.port);
  // Signals go to one thread (below), never to the worker or connection threads; a client that hangs up
  // mid-write must not kill the process (SIGPIPE).
  signal(SIGPIPE, SIG_IGN);
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  // As load_for_generation, with a KV cache and a logits row per batched sequence.
  auto t0 = std::chrono::steady_clock::now();
  auto source = bs::model::open_model(a.model);
  auto device = std::make_unique<bs::gpu::Device>();
  bs::model::ModelOptions mo;
  mo.max_ctx = a.ctx;
  mo.max_batch = std::max(256, a.parallel);
  mo.logits_rows = a.parallel;
  mo.kv_slots = a.parallel;
  mo.kv_f32 = mo.f32_prefill_matmul = bs::cli::parse_precision(a.precision);
  mo.deterministic = a.deterministic;
  bs::model::Model model(*device, source, mo);
  if (!std::filesystem::exists(std::filesystem::path(a.model) / "tokenizer.json"))
    bs::fail("{}: serve needs tokenizer.json in the model directory", a.model);
  auto tokenizer = bs::tok::Tokenizer::from_dir(a.model);
  double load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  bs::serve::Engine engine(model, tokenizer, {.parallel = a.parallel, .prefix_cache = !a.no_prefix_cache});
  a.server.model_id = !a.alias.empty() ? a.alias : std::filesystem::path(a.model).lexically_normal().filename().string();
  if (a.server.model_id.empty()) a.server.model_id = std::filesystem::path(a.model).lexically_normal().parent_path().filename().string();
  a.server.max_body = a.max_body;
  bs::serve::Server server(engine, tokenizer, a.server);
  int port = server.bind();
  std::atomic<bool> waiting{true};
  std::thread waiter([&] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    waiting = false;
    engine.cancel_all();  // running streams end at the next batch instead of running to max_tokens
    server.stop();
  });
  std::fprintf(stderr, "serving %s as \"%s\" on %s (%d sequence%s at once, context %d each, load %.2f s)%s\n",
               a.model.c_str(), a.server.model_id.c_str(), device->adapter().name.c_str(), a.parallel, a.parallel > 1 ? "s" : "",
               model.max_ctx(), load_s, a.api_key.empty() ? "" : ", API key required");
  std::printf("listening on http://%s:%d\n", a.server.host.c_str(), port);
  std::fflush(stdout);
  server.listen();
  if (waiting) pthread_kill(waiter.native_handle(), SIGTERM);  // listen failed: wake the waiter (blocked everywhere, sigwait takes it)
  waiter.join();
}

bs::cli::Command serve_cmd{"serve", "OpenAI-compatible HTTP server (chat/completions, SSE streaming)", [](CLI::App& app) {
  auto a = std::make_shared<Args>();
  app.add_option("--model", a->model, "RDRR model directory (or Hugging Face checkpoint)")->required();
  app.add_option("--host", a->server.host, "address to listen on (default 127.0.0.1: this machine only)");
  app.add_option("--port", a->server.port, "TCP port (default 8080; 0: any free port, printed at start)");
  app.add_option("--parallel", a->parallel, "sequences decoded together (continuous batching; default 1: one at a time, from a queue)");
  app.add_option("--ctx", a->ctx, "context (KV-cache) length; default min(model max, 4096)");
  app.add_option("--api-key", a->api_key, "require \"Authorization: Bearer KEY\" (all routes but /health)");
  app.add_option("--alias", a->alias, "the model's id in the API (default: the model directory's name)");
  app.add_option("--max-body", a->max_body, "largest request body in bytes (default 1 MiB; larger: HTTP 413)");
  app.add_option("--threads", a->server.threads, "connections served at once (default 64)");
  app.add_flag("--no-prefix-cache", a->no_prefix_cache, "always prefill the whole prompt");
  bs::cli::add_precision_option(app, a->precision);
  bs::cli::add_deterministic_flag(app, a->deterministic);
  app.callback([a] {
    a->server.api_key = a->api_key;
    run(*a);
  });
}};

}  // namespace
