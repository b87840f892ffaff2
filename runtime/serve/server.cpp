#include "runtime/serve/server.h"

#include <httplib.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <ctime>
#include <random>

#include "runtime/base/env.h"
#include "runtime/base/error.h"
#include "runtime/serve/api.h"

namespace bs::serve {

using nlohmann::json;
using namespace std::chrono_literals;

static void send_json(httplib::Response& res, int status, const json& j) {
  res.status = status;
  res.set_content(j.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
}

static void send_error(httplib::Response& res, const ApiError& e) { send_json(res, e.status, error_body(e)); }

// Compares without an early exit, so response times do not reveal how much of a key was right.
static bool same_key(const std::string& a, const std::string& b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < a.size(); ++i) diff |= uint8_t(a[i]) ^ uint8_t(i < b.size() ? b[i] : 0);
  return diff == 0;
}

Server::Server(Engine& engine, const tok::Tokenizer& tok, ServerOptions opts)
    : engine_(engine), tok_(tok), opts_(std::move(opts)), http_(std::make_unique<httplib::Server>()) {
  int threads = std::max(opts_.threads, 4);
  http_->new_task_queue = [threads] { return new httplib::ThreadPool(size_t(threads)); };
  http_->set_payload_max_length(opts_.max_body);
  // httplib's default sets SO_REUSEPORT, which would let a second server bind the same port and take half
  // the connections unseen: SO_REUSEADDR only. The socket is kept to raise its backlog (bind()).
  // TCP_NODELAY (Linux's accepted connections inherit it): a stream's events are small writes, which Nagle's
  // algorithm holds until the client acknowledges the previous one, so tokens would reach the client in bursts
  // behind its delayed acknowledgements. BLUESHIFT_SERVE_NODELAY=0 leaves Nagle on (A/B runs).
  static const bool nodelay = env_uint("BLUESHIFT_SERVE_NODELAY", 1) != 0;
  http_->set_socket_options([this](int sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    if (nodelay) setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
    listen_fd_ = sock;
  });
  setup_routes();
}

Server::~Server() { stop(); }

int Server::bind() {
  int port = opts_.port == 0 ? http_->bind_to_any_port(opts_.host) : (http_->bind_to_port(opts_.host, opts_.port) ? opts_.port : -1);
  if (port < 0)
    fail_kind(ErrorKind::resources, "serve: cannot listen on {}:{} (in use, or not an address of this machine)", opts_.host,
              opts_.port);
  // The library listens with a backlog of 5: 16 clients connecting at once overflowed it and some got
  // "connection reset" (serve_load.py at concurrency 16). Listening again on Linux raises the backlog.
  if (listen_fd_ >= 0) ::listen(listen_fd_, SOMAXCONN);
  return port;
}

void Server::listen() { http_->listen_after_bind(); }
void Server::stop() {
  if (http_->is_running()) http_->stop();
}

// A request as a Job: the prompt's tokens, checked against the context, and the sampling options.
static std::shared_ptr<Job> make_job(const ApiRequest& r, const tok::Tokenizer& tok, const Engine& engine) {
  auto job = std::make_shared<Job>();
  if (r.endpoint == Endpoint::chat) {
    if (tok.chat_template().empty())
      bad_request("messages", "this model has no chat template; use /v1/completions with a prompt");
    std::string text;
    try {
      text = tok.apply_chat_template(r.messages, true);
    } catch (const Error& e) {
      bad_request("messages", std::string("the model's chat template refused these messages: ") + e.what());
    }
    job->prompt = tok.encode(text, false);
  } else if (!r.prompt_tokens.empty()) {
    job->prompt = r.prompt_tokens;
    for (int32_t t : job->prompt)
      if (t >= engine.vocab()) bad_request("prompt", fmt::format("token id {} is outside the vocabulary of {}", t, engine.vocab()));
  } else {
    job->prompt = tok.encode(r.prompt, true);
  }
  const int32_t n = int32_t(job->prompt.size()), ctx = engine.max_ctx();
  if (n == 0) bad_request("prompt", "the prompt has no tokens");
  if (n >= ctx)
    bad_request(r.endpoint == Endpoint::chat ? "messages" : "prompt",
                fmt::format("this model's context is {} tokens (--ctx); the prompt has {} tokens, and at least one must be "
                            "left to generate",
                            ctx, n),
                "context_length_exceeded");
  auto& o = job->opts;
  o.max_tokens = std::min(r.max_tokens.value_or(ctx - n), ctx - n);
  o.ignore_eos = r.ignore_eos;
  o.sampling.temperature = r.temperature;
  o.sampling.top_k = r.top_k;
  o.sampling.top_p = r.top_p;
  o.sampling.min_p = r.min_p;
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  o.sampling.seed = r.seed ? *r.seed : rng();
  job->stop = r.stop;
  return job;
}

static std::string new_id(Endpoint e) {
  static std::atomic<uint64_t> counter{0};
  static const uint64_t salt = std::random_device{}();
  return fmt::format("{}-{:016x}", e == Endpoint::chat ? "chatcmpl" : "cmpl", salt ^ (++counter * 0x9e3779b97f4a7c15ull));
}

void Server::setup_routes() {
  auto& h = *http_;
  h.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (opts_.api_key.empty() || req.path == "/health") return httplib::Server::HandlerResponse::Unhandled;
    if (same_key(req.get_header_value("Authorization"), "Bearer " + opts_.api_key))
      return httplib::Server::HandlerResponse::Unhandled;
    send_error(res, ApiError(401, "invalid_request_error", "invalid_api_key", "",
                             "missing or wrong API key: send \"Authorization: Bearer <key>\" (serve --api-key)"));
    return httplib::Server::HandlerResponse::Handled;
  });
  // Refusals httplib makes itself (no route, body too large, unreadable request) get JSON bodies too.
  h.set_error_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    if (res.status == 413)
      send_error(res, ApiError(413, "invalid_request_error", "request_too_large", "",
                               fmt::format("the request body exceeds {} bytes (serve --max-body)", opts_.max_body)));
    else if (res.status == 404)
      send_error(res, ApiError(404, "invalid_request_error", "not_found", "", fmt::format("no route {} {}", req.method, req.path)));
    else
      send_error(res, ApiError(res.status, "invalid_request_error", "", "", fmt::format("HTTP {}", res.status)));
  });
  h.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "internal error";
    try {
      std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    send_error(res, ApiError(500, "server_error", "", "", what));
  });

  h.Get("/health", [this](const httplib::Request&, httplib::Response& res) {
    auto s = engine_.stats();
    send_json(res, 200,
              {{"status", "ok"}, {"model", opts_.model_id}, {"slots", s.slots}, {"active", s.active}, {"queued", s.queued},
               {"served", s.served}, {"cancelled", s.cancelled}, {"prompt_tokens", s.prompt_tokens},
               {"cached_tokens", s.cached_tokens}, {"generated_tokens", s.generated_tokens}});
  });
  auto model_json = [this] {
    return json{{"id", opts_.model_id}, {"object", "model"}, {"created", 0}, {"owned_by", "blueshift"}};
  };
  h.Get("/v1/models", [model_json](const httplib::Request&, httplib::Response& res) {
    send_json(res, 200, {{"object", "list"}, {"data", json::array({model_json()})}});
  });
  h.Get(R"(/v1/models/(.+))", [this, model_json](const httplib::Request& req, httplib::Response& res) {
    if (req.matches[1] == opts_.model_id) return send_json(res, 200, model_json());
    send_error(res, ApiError(404, "invalid_request_error", "model_not_found", "model",
                             fmt::format("the model '{}' does not exist; this server serves '{}'", req.matches[1].str(), opts_.model_id)));
  });
  for (auto [path, ep] : {std::pair{"/v1/chat/completions", Endpoint::chat}, std::pair{"/v1/completions", Endpoint::completions}}) {
    h.Post(path, [this, ep = ep](const httplib::Request& req, httplib::Response& res) {
      std::shared_ptr<Job> job;
      ApiRequest r;
      try {
        r = parse_request(ep, req.body);
        if (!r.model.empty() && r.model != opts_.model_id)
          throw ApiError(404, "invalid_request_error", "model_not_found", "model",
                         fmt::format("the model '{}' does not exist; this server serves '{}'", r.model, opts_.model_id));
        job = make_job(r, tok_, engine_);
      } catch (const ApiError& e) {
        return send_error(res, e);
      }
      if (!engine_.submit(job))
        return send_error(res, ApiError(503, "server_error", "server_busy", "", "too many queued requests; retry later"));
      CompletionMeta meta{ep, new_id(ep), opts_.model_id, int64_t(std::time(nullptr))};
      auto usage = [job] {  // once the job has finished
        Usage u{int32_t(job->prompt.size()), job->completion_tokens(), job->cached_tokens()};
        if (job->first_token_ms() >= 0) {
          u.queued_ms = job->queued_ms();
          u.prompt_ms = job->first_token_ms() - job->queued_ms();
          u.predicted_ms = job->finished_ms() - job->first_token_ms();
        }
        return u;
      };
      if (!r.stream) {
        std::string text;
        while (!job->wait(text, 1000ms)) {
        }
        if (job->finish_reason() == "error")
          return send_error(res, ApiError(500, "server_error", "", "", "generation failed: " + job->error()));
        return send_json(res, 200, completion_json(meta, text, job->finish_reason(), usage()));
      }
      res.set_header("Cache-Control", "no-cache");
      res.set_chunked_content_provider(
          "text/event-stream",
          [job, meta, usage](size_t, httplib::DataSink& sink) {
            // The whole stream in one call. A failed write means the client went away: the job is
            // cancelled, which frees its sequence at the next decode batch.
            auto write = [&](const std::string& s) {
              if (sink.write(s.data(), s.size())) return true;
              job->cancel();
              return false;
            };
            if (!write(sse(chunk_json(meta, "", true)))) return false;
            auto idle = std::chrono::steady_clock::now();
            for (;;) {
              std::string text;
              bool done = job->wait(text, 200ms);
              if (!text.empty()) {
                if (!write(sse(chunk_json(meta, text, false)))) return false;
                idle = std::chrono::steady_clock::now();
              } else if (!done && std::chrono::steady_clock::now() - idle > 1s) {
                // A comment line while queued: a closed connection shows up as a failed write.
                if (!write(": waiting\n\n")) return false;
                idle = std::chrono::steady_clock::now();
              }
              if (done) break;
            }
            std::string reason = job->finish_reason();
            if (reason == "error") {
              json e = error_body(ApiError(500, "server_error", "", "", "generation failed: " + job->error()));
              if (!write(sse(e))) return false;
            } else {
              Usage u = usage();
              if (!write(sse(chunk_json(meta, "", false, &reason, &u)))) return false;
            }
            if (!write("data: [DONE]\n\n")) return false;
            sink.done();
            return true;
          },
          [job](bool success) {
            if (!success) job->cancel();
          });
    });
  }
}

}  // namespace bs::serve
