// NvtxStyleTracker: push/pop versus start/end NVTX ranges from callbacks and marker records.
#include <gtest/gtest.h>

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

TEST(NvtxStyleTracker, UnconfirmedStartIdsAreKeptUpTo4096) {
  NvtxStyleTracker t;
  for (uint64_t id = 1; id <= 4096; ++id) t.on_start_callback(id);  // no marker ever matches them
  t.on_start_callback(5000);  // the 4097th: the unconfirmed ids are dropped first
  EXPECT_EQ(t.on_start_marker(1), RangeStyle::kUnknown);
  EXPECT_EQ(t.on_start_marker(5000), RangeStyle::kStartEnd);
}

TEST(NvtxStyleTracker, ConfirmedStartIdsAreKeptHoweverManyAreOpen) {
  // Once an id matched a marker, this CUPTI reports them: ids waiting for their marker are never
  // dropped (the 4096 bound is for ids that may never match).
  NvtxStyleTracker t;
  t.on_push_callback();
  t.on_start_callback(1);
  ASSERT_EQ(t.on_start_marker(1), RangeStyle::kStartEnd);
  for (uint64_t id = 2; id <= 5001; ++id) t.on_start_callback(id);
  EXPECT_EQ(t.on_start_marker(2), RangeStyle::kStartEnd);
  EXPECT_EQ(t.on_start_marker(5001), RangeStyle::kStartEnd);
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
