// NVTX-range windows for replay across steps (step_range_windows.h): which push/pop or start/end
// opens and closes the window, nested and concurrent ranges, and the name rule.
#include "rfprof/collector/step_range_windows.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace rf::collector {
namespace {

using E = StepRangeEvent;

// examples/imagenet/main.py: "step i" holding "forward", "backward", "optimizer".
TEST(StepRangeWindows, EachStepRangeIsOneWindow) {
  StepRangeWindows w("regex:^step ");
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(w.push(1, "step " + std::to_string(i)), E::kOpen);
    EXPECT_TRUE(w.open());
    EXPECT_EQ(w.push(1, "forward"), E::kNone);
    EXPECT_EQ(w.pop(1), E::kNone);  // forward
    EXPECT_EQ(w.push(1, "backward"), E::kNone);
    EXPECT_EQ(w.pop(1), E::kNone);
    EXPECT_EQ(w.pop(1), E::kClose);  // step i
    EXPECT_FALSE(w.open());
  }
}

TEST(StepRangeWindows, NestedOrOtherThreadsRangesDoNotCloseIt) {
  StepRangeWindows w("step");
  EXPECT_EQ(w.push(1, "epoch"), E::kNone);
  EXPECT_EQ(w.push(1, "step"), E::kOpen);
  EXPECT_EQ(w.push(1, "step"), E::kNone);  // a step inside the step: not a second window
  EXPECT_EQ(w.pop(1), E::kNone);
  EXPECT_EQ(w.push(2, "step"), E::kNone);  // another thread's step while one is open
  EXPECT_EQ(w.pop(2), E::kNone);
  EXPECT_EQ(w.pop(2), E::kNone);           // a pop without a push
  EXPECT_EQ(w.pop(1), E::kClose);
  EXPECT_EQ(w.pop(1), E::kNone);           // epoch
  EXPECT_EQ(w.push(2, "step"), E::kOpen);  // now the other thread's step opens one
  EXPECT_EQ(w.pop(2), E::kClose);
}

TEST(StepRangeWindows, StartEndRangesById) {
  StepRangeWindows w("train_step");
  EXPECT_EQ(w.start(7, "warmup"), E::kNone);
  EXPECT_EQ(w.start(8, "train_step"), E::kOpen);
  EXPECT_EQ(w.end(7), E::kNone);
  EXPECT_EQ(w.push(1, "x"), E::kNone);
  EXPECT_EQ(w.pop(1), E::kNone);  // a pop never closes a start/end window
  EXPECT_EQ(w.end(8), E::kClose);
  EXPECT_EQ(w.end(8), E::kNone);
}

TEST(StepRangeWindows, OneWindowAtATimeWhateverKindOpenedIt) {
  StepRangeWindows w("step");
  EXPECT_EQ(w.start(1, "step"), E::kOpen);
  EXPECT_EQ(w.start(2, "step"), E::kNone);  // a second step range while one is open: not taken over
  EXPECT_EQ(w.end(2), E::kNone);
  EXPECT_TRUE(w.open());
  EXPECT_EQ(w.end(1), E::kClose);
  EXPECT_EQ(w.push(5, "step"), E::kOpen);  // a push/pop window opened by thread 5
  EXPECT_EQ(w.start(6, "step"), E::kNone);
  EXPECT_EQ(w.end(5), E::kNone);  // range id 5 is not thread 5's pushed range
  EXPECT_TRUE(w.open());
  EXPECT_EQ(w.pop(5), E::kClose);  // after a start/end window, a push/pop one closes at its pop
  EXPECT_FALSE(w.open());
}

// NVTX keeps one push/pop stack per domain and thread: another domain's pushes and pops never
// open, close or shift the step's window, whichever order they come in.
TEST(StepRangeWindows, EachDomainHasItsOwnStack) {
  const uint64_t lib = 0x1234;  // a domain handle; 0 is the default domain
  StepRangeWindows w("step");
  EXPECT_EQ(w.push(7, "prefetch", lib), E::kNone);
  EXPECT_EQ(w.push(7, "step"), E::kOpen);
  EXPECT_EQ(w.pop(7, lib), E::kNone);  // the other domain's range ends inside the step
  EXPECT_TRUE(w.open());
  EXPECT_EQ(w.push(7, "io", lib), E::kNone);
  EXPECT_EQ(w.pop(7), E::kClose);  // the step ends; the other domain's range is still open
  EXPECT_EQ(w.pop(7, lib), E::kNone);
  EXPECT_EQ(w.push(7, "step", lib), E::kOpen);  // a step range in another domain is a step too
  EXPECT_EQ(w.push(7, "x"), E::kNone);
  EXPECT_EQ(w.pop(7), E::kNone);  // the default domain's pop is not the step's
  EXPECT_EQ(w.pop(7, lib), E::kClose);
  EXPECT_EQ(w.pop(7, lib), E::kNone);  // a pop without a push
}

TEST(StepRangeWindows, NameRule) {
  StepRangeWindows exact("step");
  EXPECT_TRUE(exact.matches("step"));
  EXPECT_FALSE(exact.matches("step 1"));
  StepRangeWindows re("regex:^step [0-9]+$");
  EXPECT_TRUE(re.matches("step 12"));
  EXPECT_FALSE(re.matches("substep 12"));
  EXPECT_FALSE(re.matches("Step 12"));  // case-sensitive, as NVTX names are
  EXPECT_FALSE(exact.matches("Step"));
  // A huge range name is searched in its first 4096 bytes (regex_subject.h): no stack overflow.
  StepRangeWindows rep("regex:^(a|b)*$");
  EXPECT_TRUE(rep.matches(std::string(1 << 20, 'a') + "c"));  // the c lies past the bound
  EXPECT_THROW(StepRangeWindows(""), std::invalid_argument);
  try {
    StepRangeWindows bad("regex:(");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("not a valid regular expression"), std::string::npos);
  }
}

}  // namespace
}  // namespace rf::collector
