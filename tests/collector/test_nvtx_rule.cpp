// NVTX rules in ncu's syntax (nvtx_rule.h): every example of ncu's "NVTX Filtering" tables, read
// as ncu reads it, matched against push/pop stacks and open start/end ranges through LaunchFilter.
#include "rfprof/collector/nvtx_rule.h"

#include <gtest/gtest.h>

#include <thread>

#include <string>
#include <vector>

#include "rfprof/collector/launch_filter.h"

namespace rf::collector {
namespace {

constexpr const char* kKernel = "_Z5scalePfffi";

/// The names of a rule's pattern, "*" and "+" for the quantifiers.
std::vector<std::string> names(const NvtxRule& r) {
  std::vector<std::string> out;
  for (const auto& e : r.pattern)
    out.push_back(e.kind == NvtxElement::Kind::kAny   ? "*"
                  : e.kind == NvtxElement::Kind::kOne ? "+"
                                                      : e.name.text);
  return out;
}

/// Whether `rule` holds on the default domain's push/pop `stack`.
bool on_stack(const char* rule, const std::vector<std::string>& stack) {
  NvtxRule r = NvtxRule::parse(rule);
  EXPECT_TRUE(r.push_pop) << rule;
  return stack_matches(r.pattern, r.bottom, r.top, stack);
}

std::string error_of(const char* rule) {
  try {
    (void)NvtxRule::parse(rule);
  } catch (const FilterError& e) {
    return e.what();
  }
  return "";
}

TEST(NvtxRule, PushPopSyntaxOfNcusTable) {
  NvtxRule r = NvtxRule::parse("A_range/");
  EXPECT_TRUE(r.push_pop);
  EXPECT_EQ(names(r), (std::vector<std::string>{"A_range"}));
  EXPECT_FALSE(r.bottom || r.top);
  r = NvtxRule::parse("[A_range");  // a '[' alone makes it push/pop, anchored at the bottom
  EXPECT_TRUE(r.push_pop && r.bottom && !r.top);
  EXPECT_EQ(names(r), (std::vector<std::string>{"A_range"}));
  r = NvtxRule::parse("Range Z]");
  EXPECT_TRUE(r.push_pop && r.top && !r.bottom);
  EXPECT_EQ(names(r), (std::vector<std::string>{"Range Z"}));
  r = NvtxRule::parse("[A_range/+/Range Z");
  EXPECT_TRUE(r.bottom);
  EXPECT_EQ(names(r), (std::vector<std::string>{"A_range", "+", "Range Z"}));
  r = NvtxRule::parse("Domain B@A_range/*/Range Z]");
  EXPECT_EQ(r.domain.text, "Domain B");
  EXPECT_TRUE(r.top);
  EXPECT_EQ(names(r), (std::vector<std::string>{"A_range", "*", "Range Z"}));
  r = NvtxRule::parse("Dom@[A/*/B]/");  // rfprof's earlier spelling: a '/' after ']'
  EXPECT_TRUE(r.bottom && r.top);
  EXPECT_EQ(names(r), (std::vector<std::string>{"A", "*", "B"}));
}

TEST(NvtxRule, StartEndSyntaxOfNcusTable) {
  NvtxRule r = NvtxRule::parse("Domain-A@A_range");
  EXPECT_FALSE(r.push_pop);
  EXPECT_EQ(r.domain.text, "Domain-A");
  EXPECT_EQ(names(r), (std::vector<std::string>{"A_range"}));
  r = NvtxRule::parse("B range,A_range,Range C");
  EXPECT_FALSE(r.push_pop);
  EXPECT_EQ(names(r), (std::vector<std::string>{"B range", "A_range", "Range C"}));
}

TEST(NvtxRule, EscapedQuantifiersArePartOfNames) {
  NvtxRule r = NvtxRule::parse("A_range\\[i\\]");  // ncu's example: the start/end range "A_range[i]"
  EXPECT_FALSE(r.push_pop);
  EXPECT_EQ(names(r), (std::vector<std::string>{"A_range[i]"}));
  r = NvtxRule::parse("a\\/b/c\\,d/");
  EXPECT_TRUE(r.push_pop);
  EXPECT_EQ(names(r), (std::vector<std::string>{"a/b", "c,d"}));
  r = NvtxRule::parse("x\\@y@\\*/");
  EXPECT_EQ(r.domain.text, "x@y");
  EXPECT_EQ(names(r), (std::vector<std::string>{"*"}));  // a range named "*", not a quantifier
  EXPECT_EQ(r.pattern[0].kind, NvtxElement::Kind::kName);
}

// A backslash makes '[' and '/' part of a name everywhere in a rule, also as its first character;
// outside regex: rules "/[" has no meaning of its own (a '/' with no range name before it).
TEST(NvtxRule, EscapedBracketsAndSlashesAreNamesNotSyntax) {
  NvtxRule r = NvtxRule::parse("\\[warmup\\]");  // the start/end range "[warmup]", not anchors
  EXPECT_FALSE(r.push_pop);
  EXPECT_FALSE(r.bottom || r.top);
  EXPECT_EQ(names(r), (std::vector<std::string>{"[warmup]"}));
  r = NvtxRule::parse("\\[a/");  // the range "[a" open at any depth
  EXPECT_TRUE(r.push_pop);
  EXPECT_FALSE(r.bottom);
  EXPECT_EQ(names(r), (std::vector<std::string>{"[a"}));
  EXPECT_TRUE(on_stack("\\[a/", {"outer", "[a"}));
  r = NvtxRule::parse("io\\/read");  // the start/end range "io/read": no unescaped '/', not push/pop
  EXPECT_FALSE(r.push_pop);
  EXPECT_EQ(names(r), (std::vector<std::string>{"io/read"}));
  const std::string e = error_of("/[A");
  EXPECT_NE(e.find("\"/[A\""), std::string::npos) << e;
  r = NvtxRule::parse("regex:/[ab]x");  // in a regex: rule, the expression's '['
  EXPECT_FALSE(r.bottom);
  EXPECT_EQ(names(r), (std::vector<std::string>{"[ab]x"}));
}

// NVTX names are case-sensitive, as ncu compares them: a rule for "Forward" does not select the
// launches inside a range "forward", and regular expressions are searched as written.
TEST(NvtxRule, NamesAndExpressionsAreCaseSensitive) {
  EXPECT_TRUE(on_stack("forward/", {"step", "forward"}));
  EXPECT_FALSE(on_stack("Forward/", {"step", "forward"}));
  EXPECT_FALSE(NvtxRule::parse("Epoch").pattern[0].name.matches("epoch"));
  EXPECT_TRUE(on_stack("regex:^step [0-9]/", {"step 3"}));
  EXPECT_FALSE(on_stack("regex:^Step [0-9]/", {"step 3"}));
  const NvtxRule d = NvtxRule::parse("regex:^Dom[0-9]@x/");
  EXPECT_TRUE(d.domain.matches("Dom1"));
  EXPECT_FALSE(d.domain.matches("dom1"));
}

TEST(NvtxRule, StackPatterns) {
  const std::vector<std::string> stack = {"step", "forward", "conv1", "aten::conv2d"};
  EXPECT_TRUE(on_stack("forward/", stack));
  EXPECT_TRUE(on_stack("forward/conv1", stack));
  EXPECT_FALSE(on_stack("forward/aten::conv2d", stack));  // not directly inside
  EXPECT_TRUE(on_stack("forward/*/aten::conv2d", stack));
  EXPECT_TRUE(on_stack("step/*/forward", stack));  // * spans no range too
  EXPECT_TRUE(on_stack("forward/+/aten::conv2d", stack));
  EXPECT_FALSE(on_stack("step/+/forward", stack));  // + is exactly one
  EXPECT_FALSE(on_stack("step/+/aten::conv2d", stack));
  EXPECT_TRUE(on_stack("[step", stack));
  EXPECT_FALSE(on_stack("[forward", stack));
  EXPECT_TRUE(on_stack("aten::conv2d]", stack));
  EXPECT_FALSE(on_stack("conv1]", stack));
  EXPECT_TRUE(on_stack("[step/*/aten::conv2d]", stack));
  EXPECT_TRUE(on_stack("[step/+/+/aten::conv2d]", stack));
  EXPECT_FALSE(on_stack("backward/", stack));
  EXPECT_FALSE(on_stack("[step/", {}));
  EXPECT_FALSE(on_stack("conv/", stack)) << "a name is matched whole, not as a prefix of conv1";
  EXPECT_FALSE(on_stack("forward/conv", stack));
}

TEST(NvtxRule, RegexRules) {
  NvtxRule r = NvtxRule::parse("regex:Domain[A-Z]@Range[0-9]/");  // ncu's example
  EXPECT_TRUE(r.push_pop);
  EXPECT_FALSE(r.bottom || r.top);  // the brackets are the expressions'
  EXPECT_TRUE(r.domain.matches("DomainQ"));
  EXPECT_FALSE(r.domain.matches("Domain7"));
  EXPECT_TRUE(stack_matches(r.pattern, r.bottom, r.top, std::vector<std::string>{"x", "Range4"}));
  EXPECT_FALSE(stack_matches(r.pattern, r.bottom, r.top, std::vector<std::string>{"RangeX"}));
  // ncu's example: "/[" and "/]" give the expression its leading '[' and trailing ']'.
  r = NvtxRule::parse("regex:[0-9]domainA@/[0-9]rangeA,RangeC[0-9/]");
  EXPECT_FALSE(r.push_pop);
  EXPECT_EQ(r.domain.text, "[0-9]domainA");
  EXPECT_EQ(names(r), (std::vector<std::string>{"[0-9]rangeA", "RangeC[0-9]"}));
  EXPECT_TRUE(r.pattern[1].name.matches("RangeC7"));
  // Regex escapes reach the expression; a bottom anchor and a regex name together.
  r = NvtxRule::parse("regex:[policy\\.model\\..*/");
  EXPECT_TRUE(r.push_pop && r.bottom);
  EXPECT_EQ(names(r), (std::vector<std::string>{"policy\\.model\\..*"}));
  EXPECT_TRUE(stack_matches(r.pattern, r.bottom, r.top, std::vector<std::string>{"policy.model.fc1"}));
  EXPECT_FALSE(stack_matches(r.pattern, r.bottom, r.top, std::vector<std::string>{"policyXmodel.fc1"}));
  // An escaped separator is the expression's plain character, without its backslash.
  r = NvtxRule::parse("regex:io\\/read/");
  EXPECT_EQ(names(r), (std::vector<std::string>{"io/read"}));
  EXPECT_TRUE(stack_matches(r.pattern, r.bottom, r.top, std::vector<std::string>{"disk io/read 2"}));
  r = NvtxRule::parse("regex:iter_[0-9]+/");  // '+' inside a name is the expression's
  EXPECT_EQ(r.pattern.size(), 1u);
  EXPECT_TRUE(stack_matches(r.pattern, r.bottom, r.top, std::vector<std::string>{"train", "iter_12"}));
}

TEST(NvtxRule, MalformedRulesAreRefusedNamingTheRule) {
  for (const char* bad : {"", "@A", "D@", "A//B", "/A", "*/A", "A/+", "[+/A", "A,,B", "A,*", "A/B,C",
                          "D1@D2@A", "A\\", "regex:(unclosed", "regex:D(@A/", "[", "]", "[]"}) {
    const std::string e = error_of(bad);
    EXPECT_NE(e.find(std::string("\"") + bad + "\""), std::string::npos) << "rule '" << bad << "': " << e;
  }
  EXPECT_NE(error_of("A/+").find("between two range names"), std::string::npos);
  EXPECT_NE(error_of("A/B,C").find("','"), std::string::npos);
  EXPECT_NE(error_of("regex:(x/").find("not a valid regular expression"), std::string::npos);
}

TEST(NvtxRule, FilterSelectsByNcuRules) {
  LaunchFilterOptions o;
  o.nvtx_include = {"[cutlass", "regex:^deepgemm/"};
  o.nvtx_exclude = {"warmup]"};
  LaunchFilter f(o);
  NvtxState& s = f.nvtx();
  EXPECT_FALSE(f.selects(kKernel, 1));
  s.push(1, "", "outer");
  s.push(1, "", "cutlass");
  EXPECT_FALSE(f.selects(kKernel, 1));  // cutlass is not at the bottom
  s.pop(1, "");
  s.pop(1, "");
  s.push(1, "", "cutlass");
  s.push(1, "", "gemm");
  EXPECT_TRUE(f.selects(kKernel, 1));
  s.push(1, "", "warmup");
  EXPECT_FALSE(f.selects(kKernel, 1));  // excluded while warmup is at the top
  s.push(1, "", "inner");
  EXPECT_TRUE(f.selects(kKernel, 1));
  s.push(2, "", "deepgemm_fp8");
  EXPECT_TRUE(f.selects(kKernel, 2));
  s.push(3, "", "x_deepgemm");  // ^ anchors the expression
  EXPECT_FALSE(f.selects(kKernel, 3));
}

TEST(NvtxRule, StartEndRulesNeedEveryNameOpenAndRegexDomainsSearchAll) {
  LaunchFilterOptions o;
  o.nvtx_include = {"A_range,B range", "regex:^Dom[0-9]@/[ab]]"};
  LaunchFilter f(o);
  NvtxState& s = f.nvtx();
  s.start(1, "", "A_range");
  EXPECT_FALSE(f.selects(kKernel, 1));  // B range is not open
  s.start(2, "", "B range");
  EXPECT_TRUE(f.selects(kKernel, 1));
  s.end(1);
  EXPECT_FALSE(f.selects(kKernel, 1));
  s.push(5, "Other", "a");
  EXPECT_FALSE(f.selects(kKernel, 5));
  s.push(5, "Dom3", "b");  // a domain the expression names, "b" at the top of its stack
  EXPECT_TRUE(f.selects(kKernel, 5));
  s.push(5, "Dom3", "c");
  EXPECT_FALSE(f.selects(kKernel, 5));

  LaunchFilterOptions se;
  se.nvtx_include = {"regex:D.*@epoch [0-9]+"};  // start/end names by expression: searched in the open ranges
  LaunchFilter g(se);
  g.nvtx().start(9, "Dx", "epoch 12");
  EXPECT_TRUE(g.selects(kKernel, 1));
  g.nvtx().end(9);
  EXPECT_FALSE(g.selects(kKernel, 1));
}

// A launch reads regex results that push() and start() recorded: they must follow the ranges as
// they are pushed, popped, started, ended and reused, on any thread.
TEST(NvtxRule, RegexResultsRecordedAtPushAndStartFollowTheRanges) {
  LaunchFilterOptions o;
  o.nvtx_include = {"regex:^fwd_[0-9]+$/", "regex:step_[0-9]+"};
  o.nvtx_exclude = {"regex:^Warm@^ge]"};  // a range starting "ge" at the top, in a domain Warm...
  LaunchFilter f(o);
  NvtxState& s = f.nvtx();
  EXPECT_FALSE(f.selects(kKernel, 1));
  s.push(1, "", "fwd_1");
  EXPECT_TRUE(f.selects(kKernel, 1));
  s.push(1, "", "fwd_x");  // not matched, but fwd_1 is still open below it
  EXPECT_TRUE(f.selects(kKernel, 1));
  s.pop(1, "");
  s.pop(1, "");
  EXPECT_FALSE(f.selects(kKernel, 1));
  EXPECT_FALSE(f.selects(kKernel, 2));
  s.start(7, "", "train step_3");  // started here, ended by another thread below
  EXPECT_TRUE(f.selects(kKernel, 2));
  s.start(7, "", "eval");  // the id reused by a range the rule does not name
  EXPECT_FALSE(f.selects(kKernel, 2));
  s.start(7, "", "step_4");
  std::thread([&] { s.end(7); }).join();
  EXPECT_FALSE(f.selects(kKernel, 2));
  s.push(3, "", "fwd_2");
  EXPECT_TRUE(f.selects(kKernel, 3));
  s.push(3, "Warmup", "aten::mm");  // another domain: its own stack; its top does not start "ge"
  EXPECT_TRUE(f.selects(kKernel, 3));
  s.push(3, "Warmup", "gemm");
  EXPECT_FALSE(f.selects(kKernel, 3));  // excluded
  s.push(3, "Cold", "gemm");
  EXPECT_FALSE(f.selects(kKernel, 3));  // still excluded by Warmup's stack
}

// One expression used both as a domain and as a range name shares a slot searched in both.
TEST(NvtxRule, AnExpressionForDomainAndRangeIsSearchedInBoth) {
  LaunchFilterOptions o;
  o.nvtx_include = {"regex:^L[0-9]$@^L[0-9]$/"};
  LaunchFilter f(o);
  f.nvtx().push(1, "L1", "x");
  EXPECT_FALSE(f.selects(kKernel, 1));  // the domain matches, the range does not
  f.nvtx().push(2, "M", "L2");
  EXPECT_FALSE(f.selects(kKernel, 2));  // the range matches, the domain does not
  f.nvtx().push(1, "L1", "L3");
  EXPECT_TRUE(f.selects(kKernel, 1));
  NvtxState s;
  const NvtxName l = NvtxRule::parse("regex:L/").pattern[0].name;
  EXPECT_EQ(s.watch_regex(l, /*domain=*/false), 0);
  EXPECT_EQ(s.watch_regex(l, /*domain=*/true), 0);
  // Start/end pairs: one counter per (domain, name), its index kept in the rule's name.
  const NvtxName d = NvtxRule::parse("D@x").domain, x = NvtxRule::parse("D@x").pattern[0].name;
  EXPECT_EQ(s.watch(d, x), 0);
  EXPECT_EQ(s.watch(d, l), 1);
  EXPECT_EQ(s.watch(d, x), 0);
  NvtxName indexed = x;
  indexed.watched = 0;
  s.start(5, "D", "x");
  EXPECT_TRUE(s.start_end_open(d, indexed));
  EXPECT_TRUE(s.start_end_open(d, x));  // looked up
  s.end(5);
  EXPECT_FALSE(s.start_end_open(d, indexed));
}

// A start/end rule parsed on its own (no counter index in its names) asked about any NvtxState:
// a pair the state counts is answered by its counter, open only while one of its ranges is; a
// pair it does not count, from the open ranges, in the rule's domain only.
TEST(NvtxRule, AStartEndRuleWithoutAnIndexAnswersForItsDomainOnly) {
  const NvtxRule r = NvtxRule::parse("D@x");
  NvtxState watched;
  watched.watch(r.domain, r.pattern[0].name);
  EXPECT_FALSE(r.matches(watched, 1));
  watched.start(1, "D", "x");
  EXPECT_TRUE(r.matches(watched, 1));
  watched.end(1);
  EXPECT_FALSE(r.matches(watched, 1));
  NvtxState unwatched;
  unwatched.start(1, "E", "x");  // x, but in another domain
  EXPECT_FALSE(r.matches(unwatched, 1));
  unwatched.start(2, "D", "x");
  EXPECT_TRUE(r.matches(unwatched, 1));
  unwatched.end(2);
  EXPECT_FALSE(r.matches(unwatched, 1));
}

// Names of any length with regex: rules (libstdc++'s std::regex recursed once per character: a
// 60,000-character name overflowed the stack, inside the application). Searched in their first
// 4096 bytes (regex_subject.h).
TEST(NvtxRule, RegexRulesOnHugeNamesNeitherCrashNorSeeBeyondTheBound) {
  const std::string huge(1 << 20, 'a');
  LaunchFilterOptions o;
  o.kernel_name = "regex:(a|b)*c";
  o.nvtx_include = {"regex:(a|b)*c/", "regex:^(a|b)*$/"};
  LaunchFilter f(o);
  f.nvtx().push(1, "", huge);
  EXPECT_FALSE(f.name_matches(huge));  // a symbol of 1 MiB: searched in 4096 bytes, no c there
  EXPECT_TRUE(f.nvtx().stack(1, "").size() == 1);
  EXPECT_FALSE(f.selects(huge, 1));
  LaunchFilterOptions anchored;
  anchored.nvtx_include = {"regex:^(a|b)*$/"};
  LaunchFilter g(anchored);
  g.nvtx().push(1, "", huge + "c");  // the c lies past the bound: the first 4096 bytes match ^(a|b)*$
  EXPECT_TRUE(g.selects("", 1));
  LaunchFilterOptions se;
  se.nvtx_include = {"regex:(x|y)*z"};
  LaunchFilter h(se);
  h.nvtx().start(1, "", std::string(1 << 20, 'x') + "z");  // z past the bound: not seen
  EXPECT_FALSE(h.selects("", 1));
}

// Past NvtxState::kRegexSlots expressions, the rest are searched at each launch: same answers.
TEST(NvtxRule, MoreRegexRulesThanSlotsStillMatch) {
  LaunchFilterOptions o;
  for (int i = 0; i < 70; ++i) o.nvtx_include.push_back("regex:^r" + std::to_string(i) + "$/");
  o.nvtx_include.push_back("regex:^r3$/");  // the same expression again shares a slot
  LaunchFilter f(o);
  for (int i : {0, 3, 63, 64, 69}) {
    const uint64_t thread = 100 + static_cast<uint64_t>(i);
    f.nvtx().push(thread, "", "r" + std::to_string(i));
    EXPECT_TRUE(f.selects(kKernel, thread)) << "r" << i;
  }
  f.nvtx().push(200, "", "r70");
  EXPECT_FALSE(f.selects(kKernel, 200));
  NvtxState s;
  NvtxName a = NvtxRule::parse("regex:a/").pattern[0].name;
  EXPECT_EQ(s.watch_regex(a), 0);
  EXPECT_EQ(s.watch_regex(NvtxRule::parse("regex:b/").pattern[0].name), 1);
  EXPECT_EQ(s.watch_regex(a), 0);
  EXPECT_EQ(s.watch_regex(NvtxRule::parse("a/").pattern[0].name), -1);  // literal: compared
  for (int i = 0; i < NvtxState::kRegexSlots; ++i)
    s.watch_regex(NvtxRule::parse("regex:x" + std::to_string(i) + "/").pattern[0].name);
  EXPECT_EQ(s.watch_regex(NvtxRule::parse("regex:y/").pattern[0].name), -1);
}

}  // namespace
}  // namespace rf::collector
