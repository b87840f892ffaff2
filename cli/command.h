// Subcommands register themselves: each cli/cmd_*.cpp defines one static Command, so adding a
// subcommand never touches main.cpp.
//
//   static bs::cli::Command verify_cmd{"verify", "Re-hash every shard against the manifest", setup_verify};
//
// setup() adds options to its CLI11 subcommand and sets its callback; the callback returns the exit
// code through bs::cli::set_exit_code (or throws bs::Error, which main turns into a message + code).
#pragma once
#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

namespace bs::cli {

struct Command {
  Command(const char* name, const char* help, std::function<void(CLI::App&)> setup);
  const char* name;
  const char* help;
  std::function<void(CLI::App&)> setup;
};

std::vector<Command*>& registry();
void set_exit_code(int code);
int exit_code();

}  // namespace bs::cli
