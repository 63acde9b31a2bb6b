// LaunchRangeMap: range i -> i-th launch since the image reset, or a refused mapping.
#include <gtest/gtest.h>

#include "rfprof/collector/launch_map.h"

namespace rf::collector {
namespace {

LaunchInfo kernel(uint32_t cid, std::string name = "_Z1kv") {
  LaunchInfo l;
  l.correlation_id = cid;
  l.kernel_name = std::move(name);
  l.grid = {static_cast<int32_t>(cid), 1, 1};
  l.block = {128, 1, 1};
  return l;
}

LaunchInfo graph(uint32_t cid) {
  LaunchInfo l;
  l.correlation_id = cid;
  l.is_graph = true;
  return l;
}

TEST(LaunchRangeMap, RecordReturnsIndexWithinImage) {
  LaunchRangeMap m;
  EXPECT_EQ(m.record(kernel(7)), 0u);
  EXPECT_EQ(m.record(kernel(9)), 1u);
  EXPECT_EQ(m.record(kernel(4)), 2u);
  EXPECT_EQ(m.size(), 3u);
  EXPECT_EQ(m.launches()[1].correlation_id, 9u);
  EXPECT_EQ(m.launches()[1].grid[0], 9);
}

TEST(LaunchRangeMap, EqualCountsMapRangeIToLaunchIInLaunchOrder) {
  LaunchRangeMap m;
  // Correlation ids deliberately not sorted: order of launches, not of ids, decides.
  for (uint32_t cid : {30u, 10u, 20u}) m.record(kernel(cid));
  RangeMapping r = m.map(3);
  ASSERT_TRUE(r.ok) << r.message;
  EXPECT_EQ(r.correlation_ids, (std::vector<uint32_t>{30, 10, 20}));
  EXPECT_EQ(r.expected_ranges, 3u);
  EXPECT_EQ(r.actual_ranges, 3u);
  EXPECT_TRUE(r.message.empty());
}

TEST(LaunchRangeMap, FewerRangesThanLaunchesIsRefusedNotShifted) {
  LaunchRangeMap m;
  for (uint32_t cid = 1; cid <= 5; ++cid) m.record(kernel(cid));
  RangeMapping r = m.map(4);
  EXPECT_FALSE(r.ok);
  ASSERT_EQ(r.correlation_ids.size(), 4u);
  for (uint32_t id : r.correlation_ids) EXPECT_EQ(id, 0u);
  EXPECT_EQ(r.expected_ranges, 5u);
  EXPECT_EQ(r.actual_ranges, 4u);
  EXPECT_NE(r.message.find("4 ranges"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("5 kernel launches"), std::string::npos) << r.message;
}

TEST(LaunchRangeMap, MoreRangesThanLaunchesIsRefused) {
  LaunchRangeMap m;
  m.record(kernel(1));
  RangeMapping r = m.map(3);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.correlation_ids, (std::vector<uint32_t>{0, 0, 0}));
  EXPECT_EQ(r.expected_ranges, 1u);
  EXPECT_EQ(r.actual_ranges, 3u);
}

TEST(LaunchRangeMap, GraphLaunchMakesTheCountUnknowableEvenWhenCountsAgree) {
  LaunchRangeMap m;
  m.record(kernel(1));
  m.record(graph(2));
  EXPECT_TRUE(m.has_graph());
  RangeMapping r = m.map(2);  // equal by accident: still refused
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.correlation_ids, (std::vector<uint32_t>{0, 0}));
  EXPECT_NE(r.message.find("graph"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("correlation id 2"), std::string::npos) << r.message;
}

TEST(LaunchRangeMap, TheGraphMessageCountsTheGraphLaunchesAndNamesTheFirst) {
  LaunchRangeMap m;
  m.record(kernel(1));
  m.record(graph(4));
  m.record(kernel(5));
  m.record(graph(8));
  RangeMapping r = m.map(9);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.message.find("contains 2 CUDA graph launch(es) (first: correlation id 4)"), std::string::npos)
      << r.message;
}

TEST(LaunchRangeMap, ResetStartsANewImage) {
  LaunchRangeMap m;
  m.record(graph(1));
  m.record(kernel(2));
  m.reset();
  EXPECT_TRUE(m.empty());
  EXPECT_FALSE(m.has_graph());
  EXPECT_EQ(m.record(kernel(3)), 0u);
  RangeMapping r = m.map(1);
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.correlation_ids, (std::vector<uint32_t>{3}));
}

TEST(LaunchRangeMap, EmptyImageWithNoRangesMapsTrivially) {
  LaunchRangeMap m;
  RangeMapping r = m.map(0);
  EXPECT_TRUE(r.ok);
  EXPECT_TRUE(r.correlation_ids.empty());
  RangeMapping bad = m.map(1);  // a range nobody launched
  EXPECT_FALSE(bad.ok);
  EXPECT_EQ(bad.correlation_ids, (std::vector<uint32_t>{0}));
}

// When kernel replay decodes the image before a launch: window change, full image, graphs apart,
// and an image older than the flush interval (so that a SIGKILL loses at most that much).
TEST(ImageMustBeDecoded, EachReason) {
  const uint64_t second = 1000000000;
  ImageState image{3, 10, 2000, false, second / 2};
  EXPECT_FALSE(image_must_be_decoded(image, 3, false, second));
  EXPECT_TRUE(image_must_be_decoded(image, 4, false, second));  // another window
  ImageState full = image;
  full.launches = 2000;
  EXPECT_TRUE(image_must_be_decoded(full, 3, false, second));
  ImageState graph = image;
  graph.has_graph = true;
  EXPECT_TRUE(image_must_be_decoded(graph, 3, false, second));
  EXPECT_TRUE(image_must_be_decoded(image, 3, true, second));  // a graph launch gets its own image
  ImageState old = image;
  old.age_ns = second;
  EXPECT_TRUE(image_must_be_decoded(old, 3, false, second));
  ImageState empty_old = old;  // nothing to decode yet: no reason to restart
  empty_old.launches = 0;
  EXPECT_FALSE(image_must_be_decoded(empty_old, 3, false, second));
  EXPECT_FALSE(image_must_be_decoded(empty_old, 3, true, second));
  // One launch is enough: a graph launch after it gets its own image, an old one is decoded.
  ImageState one = image;
  one.launches = 1;
  EXPECT_FALSE(image_must_be_decoded(one, 3, false, second));
  EXPECT_TRUE(image_must_be_decoded(one, 3, true, second));
  one.age_ns = second;
  EXPECT_TRUE(image_must_be_decoded(one, 3, false, second));
  // Full means max_ranges launches: one short of it, the next launch still fits.
  ImageState almost = image;
  almost.launches = almost.max_ranges - 1;
  EXPECT_FALSE(image_must_be_decoded(almost, 3, false, second));
}

}  // namespace
}  // namespace rf::collector
