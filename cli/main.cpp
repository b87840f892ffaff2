// blueshift: one binary, one subcommand per job. Errors are caught here, once.
#include <cstdio>
#include <algorithm>
#include <cstdlib>

#include "cli/command.h"
#include "runtime/base/error.h"
#include "runtime/gpu/instance.h"

namespace bs::cli {

std::vector<Command*>& registry() {
  static std::vector<Command*> commands;
  return commands;
}

Command::Command(const char* n, const char* h, std::function<void(CLI::App&)> s)
    : name(n), help(h), setup(std::move(s)) {
  registry().push_back(this);
}

static int g_exit_code = 0;
void set_exit_code(int code) { g_exit_code = code; }
int exit_code() { return g_exit_code; }

}  // namespace bs::cli

int main(int argc, char** argv) {
  CLI::App app{"blueshift: a native LLM runtime on Vulkan, for RDRR models"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "blueshift 0.1.0");
  auto& commands = bs::cli::registry();
  std::sort(commands.begin(), commands.end(),
            [](auto* a, auto* b) { return std::string_view(a->name) < b->name; });
  for (auto* c : commands) c->setup(*app.add_subcommand(c->name, c->help));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const bs::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return int(e.kind());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "internal error: %s\n", e.what());
    return int(bs::ErrorKind::internal);
  }
  // Tests run the binary with BLUESHIFT_VALIDATION_FATAL=1: any validation-layer message then fails
  // the command (and so the test that ran it).
  if (const char* v = std::getenv("BLUESHIFT_VALIDATION_FATAL"); v && *v == '1' && bs::gpu::validation_message_count()) {
    std::fprintf(stderr, "error: %llu Vulkan validation message(s); the last: %s\n",
                 (unsigned long long)bs::gpu::validation_message_count(), bs::gpu::last_validation_message().c_str());
    return int(bs::ErrorKind::internal);
  }
  return bs::cli::exit_code();
}
