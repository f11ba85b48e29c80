// The test runner. Suites that need a process of their own ("fresh process": nothing may call
// cuInit before them) or a particular SWCUDA_* environment ("env", "deferred", "simulated
// time": SWCUDA_EVENT_TIME=simulated) are left out
// unless a test case or suite is named on the command line, which is how CMakeLists.txt runs
// each of them.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <string_view>

namespace {

int g_selected_test_cases = -1;

// Remembers how many test cases passed the filters, so that a CTest entry whose filter matches
// nothing (a renamed test) fails instead of passing silently.
struct SelectionListener : doctest::IReporter {
  explicit SelectionListener(const doctest::ContextOptions&) {}
  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats& stats) override {
    g_selected_test_cases = static_cast<int>(stats.numTestCasesPassingFilters);
  }
  void test_case_start(const doctest::TestCaseData&) override {}
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats&) override {}
  void test_case_exception(const doctest::TestCaseException&) override {}
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData&) override {}
  void log_message(const doctest::MessageData&) override {}
  void test_case_skipped(const doctest::TestCaseData&) override {}
};

REGISTER_LISTENER("selection", 1, SelectionListener);

bool names_tests(std::string_view arg) {
  for (const std::string_view option :
       {"--test-case=", "-tc=", "--test-suite=", "-ts=", "--dt-test-case=", "--dt-tc=",
        "--dt-test-suite=", "--dt-ts="}) {
    if (arg.starts_with(option)) return true;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  doctest::Context context;
  bool selected = false;
  for (int i = 1; i < argc; ++i) selected = selected || names_tests(argv[i]);
  if (!selected)
    context.addFilter("test-suite-exclude", "env,fresh process,deferred,simulated time");
  context.applyCommandLine(argc, argv);
  const int result = context.run();
  if (context.shouldExit()) return result;
  if (selected && g_selected_test_cases == 0) return 1;
  return result;
}
