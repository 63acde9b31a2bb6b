// librfinject exports exactly InitializeInjection and InitializeInjectionNvtx2 (default
// visibility; a hidden entry point is skipped silently by CUDA), and no C++ symbol leaks.
#include <gtest/gtest.h>

#include <cstdio>
#include <set>
#include <sstream>
#include <string>

namespace {

struct Symbol {
  char type;
  std::string name;
};

/// Defined dynamic symbols of `lib`, from `nm -D --defined-only`.
std::vector<Symbol> defined_dynamic_symbols(const std::string& lib) {
  std::string cmd = std::string("'") + RFPROF_NM + "' -D --defined-only '" + lib + "' 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  EXPECT_NE(p, nullptr);
  std::vector<Symbol> out;
  if (!p) return out;
  char buf[4096];
  std::string text;
  while (fgets(buf, sizeof buf, p)) text += buf;
  int status = pclose(p);
  EXPECT_EQ(status, 0) << cmd << "\n" << text;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    // "<address> <type> <name>", e.g. "0000000000012340 T InitializeInjection"
    std::istringstream f(line);
    std::string addr, type, name;
    if (!(f >> addr >> type >> name) || type.size() != 1) {
      ADD_FAILURE() << "unexpected nm line: " << line;
      continue;
    }
    out.push_back({type[0], name});
  }
  return out;
}

TEST(InjectExports, ExactlyTheTwoEntryPoints) {
  auto symbols = defined_dynamic_symbols(RFINJECT_PATH);
  std::set<std::string> functions;
  for (const auto& s : symbols) {
    EXPECT_NE(s.name.rfind("_Z", 0), 0u) << "C++ symbol leaks: " << s.name;
    if (s.type == 'T') functions.insert(s.name);
    else if (s.type != 'A')  // version nodes are absolute symbols, if the linker adds one
      ADD_FAILURE() << "unexpected exported symbol " << s.type << " " << s.name;
  }
  EXPECT_EQ(functions, (std::set<std::string>{"InitializeInjection", "InitializeInjectionNvtx2"}));
}

}  // namespace
