// blueshift serve: an OpenAI-compatible HTTP server for one model (runtime/serve). Prints
// "listening on http://HOST:PORT" once it accepts connections; SIGINT / SIGTERM stop it.
#include <pthread.h>
#include <signal.h>

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
  bool no_prefix_cache = false;
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

  auto lm = bs::cli::load_for_generation(a.model, a.ctx, 256, bs::gpu::KernelSource::glsl, {}, bs::cli::parse_precision(a.precision));
  if (!lm.tokenizer) bs::fail("{}: serve needs tokenizer.json in the model directory", a.model);
  if (a.parallel > 1)
    std::fprintf(stderr, "note: --parallel %d: continuous batching is not built yet; requests are served one at a time "
                         "from a queue\n", a.parallel);
  bs::serve::Engine engine(*lm.model, *lm.tokenizer, {.prefix_cache = !a.no_prefix_cache});
  a.server.model_id = !a.alias.empty() ? a.alias : std::filesystem::path(a.model).lexically_normal().filename().string();
  if (a.server.model_id.empty()) a.server.model_id = std::filesystem::path(a.model).lexically_normal().parent_path().filename().string();
  a.server.max_body = a.max_body;
  bs::serve::Server server(engine, *lm.tokenizer, a.server);
  int port = server.bind();
  std::thread waiter([&] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    server.stop();
  });
  std::fprintf(stderr, "serving %s as \"%s\" on %s (context %d, load %.2f s)%s\n", a.model.c_str(), a.server.model_id.c_str(),
               lm.device->adapter().name.c_str(), lm.model->max_ctx(), lm.load_s, a.api_key.empty() ? "" : ", API key required");
  std::printf("listening on http://%s:%d\n", a.server.host.c_str(), port);
  std::fflush(stdout);
  server.listen();
  pthread_kill(waiter.native_handle(), SIGTERM);  // blocked everywhere: the waiter's sigwait takes it
  waiter.join();
}

bs::cli::Command serve_cmd{"serve", "OpenAI-compatible HTTP server (chat/completions, SSE streaming)", [](CLI::App& app) {
  auto a = std::make_shared<Args>();
  app.add_option("--model", a->model, "RDRR model directory (or Hugging Face checkpoint)")->required();
  app.add_option("--host", a->server.host, "address to listen on (default 127.0.0.1: this machine only)");
  app.add_option("--port", a->server.port, "TCP port (default 8080; 0: any free port, printed at start)");
  app.add_option("--parallel", a->parallel, "sequences decoded together (continuous batching: not built yet, 1)");
  app.add_option("--ctx", a->ctx, "context (KV-cache) length; default min(model max, 4096)");
  app.add_option("--api-key", a->api_key, "require \"Authorization: Bearer KEY\" (all routes but /health)");
  app.add_option("--alias", a->alias, "the model's id in the API (default: the model directory's name)");
  app.add_option("--max-body", a->max_body, "largest request body in bytes (default 1 MiB; larger: HTTP 413)");
  app.add_option("--threads", a->server.threads, "connections served at once (default 64)");
  app.add_flag("--no-prefix-cache", a->no_prefix_cache, "always prefill the whole prompt");
  bs::cli::add_precision_option(app, a->precision);
  app.callback([a] {
    a->server.api_key = a->api_key;
    run(*a);
  });
}};

}  // namespace
