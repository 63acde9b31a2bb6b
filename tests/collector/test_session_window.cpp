// WindowTracker: profile-from-start, cu(da)ProfilerStart/Stop, ignored duplicates, increasing ids.
#include <gtest/gtest.h>

#include "rfprof/collector/window.h"

namespace rf::collector {
namespace {

TEST(WindowTracker, ProfileFromStartOpensWindowZero) {
  WindowTracker w(true);
  EXPECT_FALSE(w.is_open());
  auto opened = w.process_start();
  ASSERT_TRUE(opened.has_value());
  EXPECT_EQ(*opened, 0u);
  EXPECT_TRUE(w.is_open());
  EXPECT_EQ(w.current(), std::optional<uint32_t>(0));
  EXPECT_FALSE(w.process_start().has_value());  // only once
  // A second context's start after cudaProfilerStop: the process started once, nothing reopens.
  EXPECT_EQ(w.close(), std::optional<uint32_t>(0));
  EXPECT_FALSE(w.process_start().has_value());
  EXPECT_FALSE(w.is_open());
  EXPECT_EQ(w.windows_opened(), 1u);
}

TEST(WindowTracker, ProfileFromStartOffCollectsNothingUntilStart) {
  WindowTracker w(false);
  EXPECT_FALSE(w.process_start().has_value());
  EXPECT_FALSE(w.is_open());
  EXPECT_FALSE(w.current().has_value());
  EXPECT_FALSE(w.close().has_value());  // stop without start: ignored
  auto first = w.open();
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(*first, 1u);  // 0 is reserved for the profile-from-start window
  EXPECT_TRUE(w.is_open());
}

TEST(WindowTracker, NestedAndDuplicateStartsAreIgnored) {
  WindowTracker w(false);
  w.process_start();
  // cudaProfilerStart arrives as the runtime call and its nested cuProfilerStart.
  EXPECT_EQ(w.open(), std::optional<uint32_t>(1));
  EXPECT_FALSE(w.open().has_value());
  EXPECT_FALSE(w.open().has_value());
  EXPECT_EQ(w.current(), std::optional<uint32_t>(1));
  EXPECT_EQ(w.close(), std::optional<uint32_t>(1));
  EXPECT_FALSE(w.close().has_value());  // the nested cuProfilerStop
  EXPECT_EQ(w.windows_opened(), 1u);
}

TEST(WindowTracker, SeveralWindowsGetIncreasingIds) {
  WindowTracker w(true);
  w.process_start();
  EXPECT_EQ(w.close(), std::optional<uint32_t>(0));
  std::vector<uint32_t> ids;
  for (int i = 0; i < 4; ++i) {
    auto o = w.open();
    ASSERT_TRUE(o.has_value());
    ids.push_back(*o);
    EXPECT_EQ(w.close(), o);
    EXPECT_FALSE(w.is_open());
  }
  EXPECT_EQ(ids, (std::vector<uint32_t>{1, 2, 3, 4}));
  EXPECT_EQ(w.windows_opened(), 5u);
}

TEST(WindowTracker, StartWhileProfilingFromStartIsIgnored) {
  // ncu semantics: with profile-from-start on, a cudaProfilerStart does not open a second window.
  WindowTracker w(true);
  w.process_start();
  EXPECT_FALSE(w.open().has_value());
  EXPECT_EQ(w.close(), std::optional<uint32_t>(0));
}

}  // namespace
}  // namespace rf::collector
