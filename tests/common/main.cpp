// gtest main shared by every test executable: prints the random seed so a failure can be replayed
// with BS_TEST_SEED=<seed>. (Printed from an Environment so that --gtest_list_tests stays clean.)
// It also fails the executable when the Vulkan validation layer reports anything during a test (a test that
// provokes a report on purpose resets the count: Runtime.ValidationLayerCatchesMisuse).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>

#include "tests/common/testing.h"

namespace bs::gpu {
// The validation layer's report count (runtime/gpu/instance.cpp). Weak: executables that do not link the GPU runtime
// link without it, and read no reports.
[[gnu::weak]] uint64_t validation_message_count();
}  // namespace bs::gpu

namespace {
struct SeedPrinter : ::testing::Environment {
  void SetUp() override {
    std::printf("random seed: %llu (set BS_TEST_SEED to replay)\n",
                (unsigned long long)bs::testing::test_seed());
  }
};

// Reports counted between a test's start and end name the test, and make main's exit status 1. (A listener cannot
// fail the test itself: its result is final by then.)
struct ValidationWatch : ::testing::EmptyTestEventListener {
  static uint64_t count() { return bs::gpu::validation_message_count ? bs::gpu::validation_message_count() : 0; }
  void OnTestStart(const ::testing::TestInfo&) override { at_start = count(); }
  void OnTestEnd(const ::testing::TestInfo& info) override {
    const uint64_t now = count();
    if (now <= at_start) return;
    std::fprintf(stderr, "[  FAILED  ] %s.%s: %llu Vulkan validation report(s), printed above\n", info.test_suite_name(),
                 info.name(), (unsigned long long)(now - at_start));
    reported = true;
  }
  uint64_t at_start = 0;
  bool reported = false;
};
}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new SeedPrinter);
  auto* watch = new ValidationWatch;  // owned by gtest's listener list, which lives until exit
  ::testing::UnitTest::GetInstance()->listeners().Append(watch);
  const int rc = RUN_ALL_TESTS();
  return rc != 0 ? rc : watch->reported ? 1 : 0;
}
