// blueshift: one binary, one subcommand per job. Errors are caught here, once.
#include <cstdio>
#include <algorithm>

#include "cli/command.h"
#include "runtime/base/error.h"

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
  return bs::cli::exit_code();
}
