// `blueshift serve`'s HTTP side (cpp-httplib): the OpenAI routes, server-sent-event streaming, the
// API key, and JSON errors for every refusal. Each connection runs on a thread of the server's pool and
// waits on its Job; the Engine's worker alone touches the GPU.
//
//   POST /v1/chat/completions, POST /v1/completions   (stream: true -> text/event-stream, then [DONE])
//   GET  /v1/models, GET /v1/models/{id}, GET /health  (/health needs no key: load balancers probe it)
#pragma once
#include <memory>
#include <string>

#include "runtime/serve/engine.h"

namespace httplib {
class Server;
}

namespace bs::serve {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;                 // 0: any free port (bind() says which)
  std::string api_key;             // non-empty: requests need "Authorization: Bearer <key>"
  std::string model_id;            // the one model this server serves
  size_t max_body = 1 << 20;       // larger bodies get 413
  int threads = 64;                // connections served at once (streams hold theirs until done)
};

class Server {
 public:
  Server(Engine& engine, const tok::Tokenizer& tok, ServerOptions opts);
  ~Server();
  int bind();     // binds host:port; returns the port. Throws bs::Error when it cannot.
  void listen();  // serves until stop()
  void stop();    // from any thread

 private:
  void setup_routes();
  Engine& engine_;
  const tok::Tokenizer& tok_;
  ServerOptions opts_;
  std::unique_ptr<httplib::Server> http_;
  int listen_fd_ = -1;
};

}  // namespace bs::serve
