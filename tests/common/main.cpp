// gtest main shared by every test executable: prints the random seed so a failure can be replayed
// with BS_TEST_SEED=<seed>. (Printed from an Environment so that --gtest_list_tests stays clean.)
#include <gtest/gtest.h>

#include <cstdio>

#include "tests/common/testing.h"

namespace {
struct SeedPrinter : ::testing::Environment {
  void SetUp() override {
    std::printf("random seed: %llu (set BS_TEST_SEED to replay)\n",
                (unsigned long long)bs::testing::test_seed());
  }
};
}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new SeedPrinter);
  return RUN_ALL_TESTS();
}
