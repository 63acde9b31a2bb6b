// rf_test_pch (tests/CMakeLists.txt): a program that does nothing, built only so that the
// precompiled header of the tests' common headers exists for every test target to reuse.
int main() { return 0; }
