// NvtxStyleTracker: push/pop versus start/end NVTX ranges from callbacks and marker records.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "rfprof/collector/nvtx_style.h"

namespace rf::collector {
namespace {

TEST(NvtxStyleTracker, WithoutAnyCallbackTheStyleIsUnknown) {
  NvtxStyleTracker t;
  EXPECT_EQ(t.on_start_marker(1), RangeStyle::kUnknown);
  EXPECT_EQ(t.on_end_marker(1), RangeStyle::kUnknown);
}

TEST(NvtxStyleTracker, PushesWithoutStartsArePushPop) {
  NvtxStyleTracker t;
  t.on_push_callback();
  t.on_push_callback();
  EXPECT_EQ(t.on_start_marker(1), RangeStyle::kPushPop);
  EXPECT_EQ(t.on_start_marker(2), RangeStyle::kPushPop);
  EXPECT_EQ(t.on_end_marker(2), RangeStyle::kPushPop);
  EXPECT_EQ(t.on_end_marker(1), RangeStyle::kPushPop);
}

TEST(NvtxStyleTracker, IdReportedByAStartCallbackIsStartEnd) {
  NvtxStyleTracker t;
  t.on_push_callback();
  t.on_start_callback(42);
  EXPECT_EQ(t.on_start_marker(42), RangeStyle::kStartEnd);
  // After one id matched, unreported ids are known to be pushes.
  EXPECT_EQ(t.on_start_marker(43), RangeStyle::kPushPop);
  EXPECT_EQ(t.on_end_marker(42), RangeStyle::kStartEnd);
  EXPECT_EQ(t.on_end_marker(43), RangeStyle::kPushPop);
}

TEST(NvtxStyleTracker, UnconfirmedStartIdsMakeOtherRangesUnknown) {
  NvtxStyleTracker t;
  t.on_push_callback();
  t.on_start_callback(0);  // id not reported by this CUPTI
  EXPECT_EQ(t.on_start_marker(7), RangeStyle::kUnknown);
  EXPECT_EQ(t.on_end_marker(7), RangeStyle::kUnknown);
  EXPECT_EQ(t.on_start_marker(0), RangeStyle::kUnknown) << "id 0 is 'not reported', never a start/end range's id";
}

// Reported ids wait in a fixed table until their marker comes: as many as half the table are all
// kept (consecutive ids, as CUPTI hands them out), confirmed or not.
TEST(NvtxStyleTracker, StartIdsWaitForTheirMarkersUpToTheTable) {
  constexpr uint64_t kHalf = NvtxStyleTracker::kIdSlots / 2;
  for (bool confirmed : {false, true}) {
    NvtxStyleTracker t;
    t.on_push_callback();
    if (confirmed) {
      t.on_start_callback(1);
      ASSERT_EQ(t.on_start_marker(1), RangeStyle::kStartEnd);
    }
    for (uint64_t id = 2; id < 2 + kHalf; ++id) t.on_start_callback(id);
    EXPECT_EQ(t.waiting_ids(), kHalf);
    for (uint64_t id = 2; id < 2 + kHalf; ++id) ASSERT_EQ(t.on_start_marker(id), RangeStyle::kStartEnd) << id;
    EXPECT_EQ(t.waiting_ids(), 0u);
  }
}

// Ids whose markers never come (CUPTI dropped them, or reports other ids) are forgotten as later
// ids need their slots: the table never grows, and recent ids still match. Until 2026-11-29 the
// ids were kept in a set, bounded only until one id matched: after that, for the whole run.
TEST(NvtxStyleTracker, IdsWhoseMarkersNeverComeAreForgottenAndMemoryStaysBounded) {
  NvtxStyleTracker t;
  t.on_push_callback();
  t.on_start_callback(1);
  ASSERT_EQ(t.on_start_marker(1), RangeStyle::kStartEnd);
  constexpr uint64_t kReported = 10 * NvtxStyleTracker::kIdSlots;
  for (uint64_t id = 2; id < 2 + kReported; ++id) t.on_start_callback(id);
  EXPECT_LE(t.waiting_ids(), NvtxStyleTracker::kIdSlots);
  EXPECT_EQ(t.on_start_marker(2), RangeStyle::kPushPop) << "the oldest ids were forgotten";
  for (uint64_t id = 2 + kReported - 1000; id < 2 + kReported; ++id)
    ASSERT_EQ(t.on_start_marker(id), RangeStyle::kStartEnd) << id;
}

// Start callbacks on many threads at once, no lock: every id is there for its marker.
TEST(NvtxStyleTracker, StartCallbacksFromManyThreadsAreAllSeen) {
  NvtxStyleTracker t;
  t.on_push_callback();
  constexpr int kThreads = 8;
  constexpr uint64_t kEach = NvtxStyleTracker::kIdSlots / 2 / kThreads;
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i)
    threads.emplace_back([&, i] {
      for (uint64_t n = 0; n < kEach; ++n) t.on_start_callback(1 + static_cast<uint64_t>(i) + n * kThreads);
    });
  for (auto& th : threads) th.join();
  for (uint64_t id = 1; id <= kEach * kThreads; ++id) ASSERT_EQ(t.on_start_marker(id), RangeStyle::kStartEnd) << id;
}

TEST(NvtxStyleTracker, AStartCallbacksIdMatchesOneMarkerOnly) {
  // A marker id seen again later (CUPTI's push/pop marker ids are not NVTX's start/end range ids)
  // is a push, not the start/end range that once had that id.
  NvtxStyleTracker t;
  t.on_push_callback();
  t.on_start_callback(7);
  EXPECT_EQ(t.on_start_marker(7), RangeStyle::kStartEnd);
  EXPECT_EQ(t.on_end_marker(7), RangeStyle::kStartEnd);
  EXPECT_EQ(t.on_start_marker(7), RangeStyle::kPushPop);
  EXPECT_EQ(t.on_end_marker(7), RangeStyle::kPushPop);
}

TEST(NvtxStyleTracker, EndWithoutStartIsUnknownAndEndIsConsumedOnce) {
  NvtxStyleTracker t;
  t.on_push_callback();
  EXPECT_EQ(t.on_end_marker(5), RangeStyle::kUnknown);
  EXPECT_EQ(t.on_start_marker(5), RangeStyle::kPushPop);
  EXPECT_EQ(t.on_end_marker(5), RangeStyle::kPushPop);
  EXPECT_EQ(t.on_end_marker(5), RangeStyle::kUnknown);
}

}  // namespace
}  // namespace rf::collector
