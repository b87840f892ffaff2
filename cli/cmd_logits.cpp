// blueshift logits --model M --tokens 1,2,3 --out x.npy [--step]: teacher-forced logits, the parity interface.
// Without --step every token goes through the prefill path in one pass; with --step one at a time
// through the decode path and the KV cache. Output: float32 [n_tokens, vocab].
#include <cstdio>

#include "cli/command.h"
#include "cli/generate_common.h"
#include "cli/util.h"
#include "runtime/base/npy.h"
#include "runtime/model/model.h"
#include "runtime/model/reference.h"

namespace {

struct Args {
  std::string model, tokens, out;
  bool step = false, cpu_reference = false;
  std::string kernels = "glsl", precision = "f16";
  int32_t ctx = 0;
};

void run(const Args& a) {
  auto ids = bs::cli::parse_ids(a.tokens, "--tokens");
  auto source = bs::model::open_model(a.model);
  if (a.cpu_reference) {  // the float64 CPU forward over the same (dequantized) weights
    bs::model::ReferenceModel ref(source);
    for (int32_t t : ids)
      if (t < 0 || t >= ref.config().vocab) bs::fail_kind(bs::ErrorKind::usage, "token {} outside the vocabulary", t);
    auto d = ref.forward(ids);
    std::vector<float> f(d.begin(), d.end());
    bs::write_npy_f32(a.out, f.data(), ids.size(), uint64_t(ref.config().vocab));
    std::fprintf(stderr, "wrote %s: [%zu, %d] via the float64 CPU reference\n", a.out.c_str(), ids.size(), ref.config().vocab);
    if (ref.config().moe())  // tests skip token draws whose routing is a near tie (ReferenceModel::min_route_margin)
      std::fprintf(stderr, "smallest routing margin %.6g (router logits: k-th largest minus the next)\n", ref.min_route_margin());
    return;
  }
  bs::gpu::Device device;
  bs::model::ModelOptions opts;
  // LongRoPE picks its factors by the context the model is built for; HF by the positions of the forward.
  // A logits run is one forward: build it for exactly its tokens, so both pick the same factors.
  const bool longrope = source.config.rope.scaling == bs::RopeScaling::longrope;
  opts.max_ctx = a.ctx > 0 ? a.ctx : longrope ? int32_t(ids.size()) : std::max<int32_t>(int32_t(ids.size()), 256);
  opts.max_batch = a.step ? 1 : int32_t(ids.size());
  opts.logits_rows = a.step ? 1 : int32_t(ids.size());
  opts.kernels = bs::gpu::parse_kernel_source(a.kernels);
  opts.kv_f32 = opts.f32_prefill_matmul = bs::cli::parse_precision(a.precision);
  if (opts.kernels == bs::gpu::KernelSource::wgsl && !a.step)
    bs::fail_kind(bs::ErrorKind::usage, "--kernels wgsl covers the decode path only (no WGSL matmul kernels); add --step");
  if (int64_t(ids.size()) > source.config.max_seq && source.config.max_seq > 0)
    bs::fail_kind(bs::ErrorKind::resources, "--tokens: {} tokens exceed the model's context of {}", ids.size(),
                  source.config.max_seq);
  bs::model::Model model(device, source, opts);
  std::vector<float> logits;
  if (a.step) {
    for (size_t i = 0; i < ids.size(); ++i) {
      auto row = model.decode(ids[i], int32_t(i));
      logits.insert(logits.end(), row.begin(), row.end());
    }
  } else {
    logits = model.prefill(ids, 0, true);
  }
  bs::write_npy_f32(a.out, logits.data(), ids.size(), uint64_t(model.config().vocab));
  std::fprintf(stderr, "wrote %s: [%zu, %d] via the %s path (%s kernels) on %s\n", a.out.c_str(), ids.size(),
               model.config().vocab, a.step ? "decode" : "prefill", a.kernels.c_str(), device.adapter().name.c_str());
}

bs::cli::Command logits_cmd{"logits", "Teacher-forced logits of a token sequence, as .npy (parity checks)",
                            [](CLI::App& app) {
  auto a = std::make_shared<Args>();
  app.add_option("--model", a->model, "RDRR model directory (or Hugging Face checkpoint)")->required();
  app.add_option("--tokens", a->tokens, "token ids, comma-separated")->required();
  app.add_option("--out", a->out, "output .npy file")->required();
  app.add_flag("--step", a->step, "one token at a time through the decode path and KV cache");
  app.add_flag("--cpu-reference", a->cpu_reference, "compute with the float64 CPU reference instead of the GPU");
  app.add_option("--ctx", a->ctx, "KV-cache length (default: max(n_tokens, 256))");
  app.add_option("--kernels", a->kernels, "kernel set: glsl (default) or wgsl (the WGSL twins, with --step)");
  bs::cli::add_precision_option(app, a->precision);
  app.callback([a] { run(*a); });
}};

}  // namespace
