// blueshift devices [--json]: every Vulkan adapter, what it offers, and whether blueshift can use it.
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "runtime/gpu/instance.h"

namespace {

struct Args {
  bool json = false;
};

nlohmann::json to_json(const bs::gpu::AdapterInfo& a, bool selected) {
  return {{"index", a.index},
          {"name", a.name},
          {"type", a.type},
          {"driver", a.driver},
          {"api_version", a.api_version},
          {"subgroup_size", a.subgroup_size},
          {"f16", a.f16},
          {"int8", a.int8},
          {"storage16", a.storage16},
          {"subgroup_arithmetic", a.subgroup_arithmetic},
          {"subgroup_shuffle", a.subgroup_shuffle},
          {"timeline_semaphore", a.timeline},
          {"timestamps", a.timestamps},
          {"cooperative_matrix_nv", a.coopmat_nv},
          {"cooperative_matrix_khr", a.coopmat_khr},
          {"tensor_core_prefill", a.coopmat_f16},
          {"tensor_core_khr", a.coopmat_f16_khr},  // the kernels are rewritten to KHR at load (BLUESHIFT_COOPMAT_NV=1: not)
          {"int_dot", a.int_dot},
          {"int_dot_accelerated", a.int_dot_accel},
          {"max_storage_binding_bytes", a.max_storage_range},
          {"shared_memory_bytes", a.max_shared_memory},
          {"device_local_bytes", a.device_local_bytes},
          {"usable", a.usable()},
          {"missing", a.missing},
          {"selected", selected}};
}

void run(const Args& args) {
  bs::gpu::Instance instance(0);
  auto adapters = instance.enumerateAdapters();
  int selected = -1;
  try {
    selected = int(instance.requestAdapter().index);
  } catch (const bs::Error&) {
  }
  if (args.json) {
    nlohmann::json out = nlohmann::json::array();
    for (auto& a : adapters) out.push_back(to_json(a, int(a.index) == selected));
    std::printf("%s\n", out.dump(2).c_str());
  } else {
    for (auto& a : adapters) {
      std::printf("[%u] %s%s\n", a.index, a.name.c_str(), int(a.index) == selected ? "  (selected)" : "");
      std::printf("    type %s, Vulkan %s, driver %s\n", a.type.c_str(), a.api_version.c_str(), a.driver.c_str());
      std::printf("    subgroup %u, f16 %s, int8 %s, coopmat %s\n", a.subgroup_size, a.f16 ? "yes" : "no",
                  a.int8 ? "yes" : "no", a.coopmat_khr && a.coopmat_nv ? "KHR+NV" : a.coopmat_khr ? "KHR" : a.coopmat_nv ? "NV" : "no");
      std::printf("    int8 dot products: %s\n", a.int_dot_accel ? "yes (accelerated)" : a.int_dot ? "yes (emulated)" : "no");
      std::printf("    prefill matmul: %s\n", a.coopmat_f16_khr ? "tensor cores (cooperative matrix, f16 -> f32, through KHR)"
                                             : a.coopmat_f16   ? "tensor cores (cooperative matrix, f16 -> f32)"
                                                               : "scalar (no usable cooperative matrix)");
      std::printf("    max storage binding %.0f MiB, shared memory %u KiB, device-local memory %.1f GiB\n",
                  double(a.max_storage_range) / (1 << 20), a.max_shared_memory / 1024,
                  double(a.device_local_bytes) / (1ull << 30));
      if (a.usable()) {
        std::printf("    usable by blueshift: yes\n");
      } else {
        std::printf("    usable by blueshift: no, missing:");
        for (auto& m : a.missing) std::printf(" %s;", m.c_str());
        std::printf("\n");
      }
    }
    if (adapters.empty()) std::printf("no Vulkan adapters found\n");
  }
  bs::cli::set_exit_code(selected >= 0 ? 0 : int(bs::ErrorKind::gpu));
}

bs::cli::Command devices_cmd{"devices", "List Vulkan adapters and the features blueshift uses", [](CLI::App& app) {
  auto args = std::make_shared<Args>();
  app.add_flag("--json", args->json, "Print JSON");
  app.callback([args] { run(*args); });
}};

}  // namespace
