#include "runtime/gpu/uploader.h"

#include <chrono>
#include <cstring>

#include "runtime/base/parallel.h"

namespace bs::gpu {

namespace {
using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }
}  // namespace

Uploader::Uploader(Device& device, uint64_t slot_bytes, int slots) : device_(device), slot_bytes_(slot_bytes) {
  for (int i = 0; i < slots; ++i) slots_.push_back({Buffer(device, {slot_bytes, BufferUsage::upload, "upload staging"})});
}

Uploader::~Uploader() {
  try {
    flush();
  } catch (...) {
  }
}

Uploader::Slot& Uploader::current() {
  Slot& s = slots_[cur_];
  if (!s.enc) {
    const auto t = Clock::now();
    if (s.fence) device_.queue().wait(s.fence);  // the GPU is done reading this staging buffer
    wait_s_ += since(t);
    s.keep.clear();
    s.cb.reset();
    s.used = 0;
    s.enc = std::make_unique<CommandEncoder>(device_, "upload");
  }
  return s;
}

void Uploader::submit_current() {
  Slot& s = slots_[cur_];
  if (!s.enc) return;
  s.cb = std::make_unique<CommandBuffer>(s.enc->finish());
  s.enc.reset();
  s.fence = device_.queue().submit(*s.cb);
  cur_ = (cur_ + 1) % slots_.size();
}

void Uploader::write(const Buffer& dst, uint64_t offset, const void* data, uint64_t size) {
  const char* p = static_cast<const char*>(data);
  write_with(dst, offset, size, 1, [p](char* out, uint64_t at, uint64_t n) { std::memcpy(out, p + at, n); });
}

void Uploader::write_with(const Buffer& dst, uint64_t offset, uint64_t size, uint64_t unit,
                          const std::function<void(char* out, uint64_t at, uint64_t n)>& fill) {
  if (unit == 0 || unit > slot_bytes_ || size % unit)
    fail_kind(ErrorKind::internal, "Uploader::write_with: {} bytes in units of {} (slots of {})", size, unit, slot_bytes_);
  for (uint64_t at = 0; at < size;) {
    Slot& s = current();
    const uint64_t n = std::min(size - at, (slot_bytes_ - s.used) / unit * unit);
    if (n == 0) {  // not a whole unit left in this slot
      submit_current();
      continue;
    }
    const auto t = Clock::now();
    char* out = s.staging.mapped_as<char>() + s.used;
    parallel_pieces(n, unit, [&](uint64_t a, uint64_t len) { fill(out + a, at + a, len); });
    fill_s_ += since(t);
    s.enc->copyBufferToBuffer(s.staging, s.used, dst, offset + at, n);
    s.used += (n + 255) & ~uint64_t(255);
    at += n;
    bytes_ += n;
    if (s.used >= slot_bytes_) submit_current();
  }
}

void Uploader::record(const std::function<void(CommandEncoder&)>& fn, std::shared_ptr<void> keep) {
  Slot& s = current();
  fn(*s.enc);
  if (keep) s.keep.push_back(std::move(keep));
}

void Uploader::flush() {
  submit_current();
  const auto t = Clock::now();
  for (auto& s : slots_) {
    if (s.fence) device_.queue().wait(s.fence);
    s.keep.clear();
  }
  wait_s_ += since(t);
}

}  // namespace bs::gpu
