// CSV quoting (RFC 4180) and number formatting of the analyzer outputs.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <sstream>
#include <string>

#include "rfprof/analyzer/csv.h"

namespace rf::analyzer {
namespace {

TEST(CsvEscape, PlainFieldsAreUnchanged) {
  EXPECT_EQ(csv_escape("ffma_loop"), "ffma_loop");
  EXPECT_EQ(csv_escape(""), "");
  EXPECT_EQ(csv_escape("train/forward"), "train/forward");
}

TEST(CsvEscape, CommaQuoteAndLineBreaksAreQuoted) {
  EXPECT_EQ(csv_escape("1024,1,1"), "\"1024,1,1\"");
  EXPECT_EQ(csv_escape("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_escape("a\nb"), "\"a\nb\"");
  EXPECT_EQ(csv_escape("a\rb"), "\"a\rb\"");
  EXPECT_EQ(csv_escape("\""), "\"\"\"\"");
}

TEST(CsvEscape, RowJoinsEscapedFields) {
  std::ostringstream out;
  write_csv_row(out, {"1", "ffma_loop(float*, int)", "", "x\"y"});
  EXPECT_EQ(out.str(), "1,\"ffma_loop(float*, int)\",,\"x\"\"y\"\n");
}

TEST(CsvEscape, AppendedFieldEqualsEscapedString) {
  for (const char* f : {"", "plain", "\"", "\"\"", "a\"", "\"a", "a,b", "x\"y\"z", "a\nb\"", "\r"}) {
    std::string out = "kept,";
    append_csv_field(out, f);
    EXPECT_EQ(out, "kept," + csv_escape(f)) << "field: " << f;
  }
}

TEST(CsvEscape, RowsWrittenOneAfterAnotherKeepNothingOfTheLast) {
  std::ostringstream out;
  write_csv_row(out, {"a long first row, quoted", "x"});
  write_csv_row(out, {"2"});
  EXPECT_EQ(out.str(), "\"a long first row, quoted\",x\n2\n");
}

TEST(FormatNumber, AppendsToWhatIsThereAndNothingForNaN) {
  std::string out = "id,";
  append_number(out, 0.5);
  append_number(out, std::nan(""));
  append_number(out, -3.0);
  EXPECT_EQ(out, "id,0.5-3");
}

TEST(CsvEscape, NcuRowsQuoteEveryFieldAndDoubleQuotesInside) {
  std::ostringstream out;
  write_ncu_csv_row(out, {"ID", "", "say \"hi\"", "\"", "a,b\nc"});
  write_ncu_csv_row(out, {"1"});
  EXPECT_EQ(out.str(), R"("ID","","say ""hi""","""","a,b)" "\n" R"(c")" "\n" R"("1")" "\n");
  std::string appended = "kept\n";
  append_ncu_csv_row(appended, {"x\"y"});
  EXPECT_EQ(appended, "kept\n\"x\"\"y\"\n");
}

TEST(FormatNumber, IntegralValuesAreIntegers) {
  EXPECT_EQ(format_number(2000.0), "2000");
  EXPECT_EQ(format_number(0.0), "0");
  EXPECT_EQ(format_number(-5.0), "-5");
  EXPECT_EQ(format_number(9007199254740993.0), "9007199254740992");  // nearest double
  EXPECT_EQ(format_number(1e18), "1000000000000000000");
  // 2^63 is whole but no int64_t: written as a double, not wrapped to a negative integer.
  EXPECT_EQ(std::stod(format_number(9223372036854775808.0)), 9223372036854775808.0);
}

TEST(FormatNumber, FractionsRoundTrip) {
  for (double v : {0.1, 1.0 / 3.0, 2.5e-9, 6.02214076e23 + 0.5, 1e300, -7.25}) {
    std::string s = format_number(v);
    EXPECT_EQ(std::stod(s), v) << s;
  }
  EXPECT_EQ(format_number(0.5), "0.5");
}

TEST(FormatNumber, NotFiniteIsEmpty) {
  EXPECT_EQ(format_number(std::numeric_limits<double>::quiet_NaN()), "");
  EXPECT_EQ(format_number(std::numeric_limits<double>::infinity()), "");
  EXPECT_EQ(format_optional(std::nullopt), "");
  EXPECT_EQ(format_optional(12.0), "12");
}

}  // namespace
}  // namespace rf::analyzer
