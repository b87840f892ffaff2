// llama_bench_peer: times llama.cpp (libllama, any ggml backend it loads) the way `blueshift bench`
// times blueshift, and prints one JSON line.
//   - every layer on the GPU (n_gpu_layers 999), flash attention as llama.cpp decides (auto);
//   - a prompt of random token ids in ONE batch (n_batch = n_ubatch = prompt length), then greedy
//     tokens one at a time;
//   - prefill_ms: the prompt's llama_decode until its logits are ready; ttft_ms: until the first
//     token is sampled (blueshift samples inside its prefill submit, so its prefill_ms is its TTFT
//     on the GPU); decode: from the first token to the last, (gen - 1) tokens;
//   - one warm-up repetition, then `reps`, medians reported; the KV cache is cleared between reps.
// Build: benchmarks/peer/build_peer.sh (gcc against the npm package's libllama, with its headers
// taken from node-llama-cpp's bundled llama.cpp sources of the same release).
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ggml-backend.h"
#include "llama.h"

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int cmp_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static double median(double* v, int n) {
  qsort(v, (size_t)n, sizeof(double), cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// A JSON string: quotes, backslashes and control characters escaped (paths and device names are free text).
static void put_json_string(const char* key, const char* s) {
  printf("\"%s\": \"", key);
  for (; *s; ++s) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') printf("\\%c", c);
    else if (c < 0x20) printf("\\u%04x", c);
    else putchar(c);
  }
  printf("\", ");
}

static int verbose = 0;
static void quiet_log(enum ggml_log_level level, const char* text, void* user) {
  (void)user;
  if (verbose || level == GGML_LOG_LEVEL_ERROR) fputs(text, stderr);
}

static void usage(const char* argv0) {
  fprintf(stderr,
          "usage: %s --model FILE.gguf --backends DIR [--prompt-tokens 512] [--gen-tokens 128] [--reps 5]\n"
          "          [--n-gpu-layers 999] [--flash-attn auto|on|off] [--threads N] [--prompt-ids 1,2,3] [--verbose]\n"
          "  DIR: the folder of libggml-*.so backends (the npm package's bins/linux-x64-vulkan)\n"
          "  --prompt-ids: this prompt instead of random ids (to compare greedy ids with blueshift)\n",
          argv0);
  exit(2);
}

int main(int argc, char** argv) {
  const char *model_path = NULL, *backends = NULL, *fa = "auto", *prompt_ids = NULL;
  int prompt_tokens = 512, gen_tokens = 128, reps = 5, n_gpu_layers = 999, threads = 4;
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--verbose")) { verbose = 1; continue; }
    if (!v) usage(argv[0]);
    if (!strcmp(a, "--model")) model_path = v;
    else if (!strcmp(a, "--backends")) backends = v;
    else if (!strcmp(a, "--prompt-tokens")) prompt_tokens = atoi(v);
    else if (!strcmp(a, "--gen-tokens")) gen_tokens = atoi(v);
    else if (!strcmp(a, "--reps")) reps = atoi(v);
    else if (!strcmp(a, "--n-gpu-layers")) n_gpu_layers = atoi(v);
    else if (!strcmp(a, "--flash-attn")) fa = v;
    else if (!strcmp(a, "--threads")) threads = atoi(v);
    else if (!strcmp(a, "--prompt-ids")) prompt_ids = v;
    else usage(argv[0]);
    ++i;
  }
  if (!model_path || !backends || prompt_tokens < 1 || gen_tokens < 2 || reps < 1) usage(argv[0]);

  llama_log_set(quiet_log, NULL);
  ggml_backend_load_all_from_path(backends);
  llama_backend_init();

  // Which devices ggml found: the benchmark must say whether it ran on a GPU.
  char devices[1024] = "";
  for (size_t i = 0; i < ggml_backend_dev_count(); ++i) {
    ggml_backend_dev_t d = ggml_backend_dev_get(i);
    size_t n = strlen(devices);
    snprintf(devices + n, sizeof devices - n, "%s%s (%s)", n ? ", " : "", ggml_backend_dev_name(d),
             ggml_backend_dev_description(d));
  }

  struct llama_model_params mp = llama_model_default_params();
  mp.n_gpu_layers = n_gpu_layers;
  double t_load = now_ms();
  struct llama_model* model = llama_model_load_from_file(model_path, mp);
  if (!model) {
    fprintf(stderr, "%s: llama.cpp could not load the model (run with --verbose for its log)\n", model_path);
    return 3;
  }
  struct llama_context_params cp = llama_context_default_params();
  cp.n_ctx = (uint32_t)(prompt_tokens + gen_tokens + 8);
  cp.n_batch = cp.n_ubatch = (uint32_t)prompt_tokens;  // the prompt in one batch
  cp.n_threads = cp.n_threads_batch = threads;
  cp.flash_attn_type = !strcmp(fa, "on") ? LLAMA_FLASH_ATTN_TYPE_ENABLED
                       : !strcmp(fa, "off") ? LLAMA_FLASH_ATTN_TYPE_DISABLED
                                            : LLAMA_FLASH_ATTN_TYPE_AUTO;
  struct llama_context* ctx = llama_init_from_model(model, cp);
  if (!ctx) {
    fprintf(stderr, "%s: llama.cpp could not create a context\n", model_path);
    return 6;
  }
  double load_s = (now_ms() - t_load) / 1e3;
  const int32_t n_vocab = llama_vocab_n_tokens(llama_model_get_vocab(model));
  struct llama_sampler* greedy = llama_sampler_init_greedy();

  // Random prompt ids (never time on a constant input), fixed seed; or the ids given.
  if (prompt_ids) {
    prompt_tokens = 1;
    for (const char* c = prompt_ids; *c; ++c) prompt_tokens += *c == ',';
  }
  llama_token* prompt = malloc(sizeof(llama_token) * (size_t)prompt_tokens);
  uint64_t s = 1234;
  for (int i = 0; i < prompt_tokens; ++i) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    prompt[i] = (llama_token)(s % (uint64_t)n_vocab);
  }
  for (int i = 0; prompt_ids && i < prompt_tokens; ++i) {
    prompt[i] = (llama_token)strtol(prompt_ids, (char**)&prompt_ids, 10);
    if (prompt[i] < 0 || prompt[i] >= n_vocab) {
      fprintf(stderr, "--prompt-ids: id %d is outside the vocabulary (%d)\n", prompt[i], n_vocab);
      return 2;
    }
    if (*prompt_ids == ',') ++prompt_ids;
  }

  double *prefill = calloc((size_t)reps, sizeof(double)), *ttft = calloc((size_t)reps, sizeof(double));
  double* decode = calloc((size_t)reps, sizeof(double));
  llama_token* ids = malloc(sizeof(llama_token) * (size_t)gen_tokens);
  for (int r = -1; r < reps; ++r) {  // r = -1: warm-up
    llama_memory_clear(llama_get_memory(ctx), true);
    llama_sampler_reset(greedy);
    double t0 = now_ms();
    if (llama_decode(ctx, llama_batch_get_one(prompt, prompt_tokens))) {
      fprintf(stderr, "llama_decode failed on the %d-token prompt\n", prompt_tokens);
      return 5;
    }
    llama_synchronize(ctx);
    double t_prefill = now_ms();
    ids[0] = llama_sampler_sample(greedy, ctx, -1);
    double t_first = now_ms();
    for (int i = 1; i < gen_tokens; ++i) {
      if (llama_decode(ctx, llama_batch_get_one(&ids[i - 1], 1))) {
        fprintf(stderr, "llama_decode failed at generated token %d\n", i);
        return 5;
      }
      ids[i] = llama_sampler_sample(greedy, ctx, -1);
    }
    double t_last = now_ms();
    if (r < 0) continue;
    prefill[r] = prompt_tokens / ((t_prefill - t0) / 1e3);
    ttft[r] = t_first - t0;
    decode[r] = (gen_tokens - 1) / ((t_last - t_first) / 1e3);
  }

  char desc[256];
  llama_model_desc(model, desc, sizeof desc);
  printf("{\"engine\": \"llama.cpp\", ");
  put_json_string("model", model_path);
  put_json_string("desc", desc);
  put_json_string("devices", devices);
  put_json_string("flash_attn", fa);
  printf("\"n_gpu_layers\": %d, \"prompt_tokens\": %d, \"gen_tokens\": %d, \"reps\": %d, "
         "\"prefill_tok_s\": %.2f, \"ttft_ms\": %.3f, \"decode_tok_s\": %.2f, \"load_s\": %.3f, "
         "\"model_bytes\": %llu, \"ids\": [",
         n_gpu_layers, prompt_tokens, gen_tokens, reps, median(prefill, reps), median(ttft, reps), median(decode, reps),
         load_s, (unsigned long long)llama_model_size(model));
  for (int i = 0; i < gen_tokens; ++i) printf("%s%d", i ? ", " : "", ids[i]);  // greedy ids of the last rep
  printf("]}\n");

  llama_sampler_free(greedy);
  llama_free(ctx);
  llama_model_free(model);
  free(prompt), free(prefill), free(ttft), free(decode), free(ids);
  return 0;
}
