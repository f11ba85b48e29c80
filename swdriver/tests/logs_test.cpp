// Driver logs (cuLogs*, CUDA 12.9): the messages the driver prints on stderr are log entries,
// read back with cuLogsDumpToMemory/File from an iterator and handed to registered callbacks.
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "module_support.hpp"
#include "sched_support.hpp"

namespace {

constexpr const char* kMessage =
    "cuTensorMapReplaceAddress: tensorMap is NULL or not 64-byte aligned";

// Makes the driver log one error: a refused tensor map call (exec/tensor_map.cpp).
void log_one_error() {
  const swcu::test::StderrCapture err;  // keep the test output clean
  CHECK(swcu::test::mod().cuTensorMapReplaceAddress(nullptr, nullptr) == CUDA_ERROR_INVALID_VALUE);
}

struct Received {
  std::vector<std::pair<CUlogLevel, std::string>> messages;
  static void CUDA_CB callback(void* data, CUlogLevel level, char* message, size_t length) {
    static_cast<Received*>(data)->messages.emplace_back(level, std::string{message, length});
  }
};

std::string dump_from(CUlogIterator* it, std::size_t capacity = 4096) {
  std::string buffer(capacity, '\xff');
  size_t size = capacity;
  REQUIRE(swcu::test::api().cuLogsDumpToMemory(it, buffer.data(), &size, 0) == CUDA_SUCCESS);
  if (size > 0) CHECK(buffer[size] == '\0');  // "The driver will always null terminate"
  buffer.resize(size);
  return buffer;
}

}  // namespace

TEST_SUITE("logs") {
  TEST_CASE_FIXTURE(swcu::test::DriverTest, "an error the driver prints is a log entry") {
    const CUcontext ctx = swcu::test::create_context();
    CUlogIterator it = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuLogsCurrent(&it, 0));
    CHECK(dump_from(&it).empty());  // "If there are no messages to dump, *size will be set to 0"
    log_one_error();
    log_one_error();
    const CUlogIterator first = it;
    CHECK(dump_from(&it) == std::string{kMessage} + "\n" + kMessage + "\n");
    CHECK(it == first + 2);  // "iterator is auto-advancing"
    CHECK(dump_from(&it).empty());
    CHECK(dump_from(nullptr).find(kMessage) != std::string::npos);  // NULL: all kept logs
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  // "If the provided buffer is not large enough to hold any messages, *size will be set to 0
  // and the function will return CUDA_ERROR_INVALID_VALUE ... If the provided value in *size is
  // not large enough to hold all buffered messages, a message will be added at the head of the
  // buffer indicating this ... The final message in buffer will always be the most recent".
  TEST_CASE_FIXTURE(swcu::test::DriverTest, "a dump that does not fit keeps the newest entries") {
    const CUcontext ctx = swcu::test::create_context();
    CUlogIterator it = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuLogsCurrent(&it, 0));
    for (int i = 0; i < 3; ++i) log_one_error();
    char tiny[8];
    size_t size = sizeof tiny;
    CUlogIterator copy = it;
    SWCU_TEST_CHECK_RESULT(cu.cuLogsDumpToMemory(&copy, tiny, &size, 0), CUDA_ERROR_INVALID_VALUE);
    CHECK(size == 0);
    const std::string line = std::string{kMessage} + "\n";
    const std::string two = dump_from(&it, 2 * line.size() + 60);
    CHECK(two.find("left out") != std::string::npos);
    CHECK(two.size() >= line.size());
    CHECK(two.substr(two.size() - line.size()) == line);
    SWCU_TEST_CHECK_RESULT(cu.cuLogsDumpToMemory(&it, tiny, nullptr, 0), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_CHECK_RESULT(cu.cuLogsCurrent(&it, 1), CUDA_ERROR_INVALID_VALUE);  // flags
    SWCU_TEST_CHECK_RESULT(cu.cuLogsCurrent(nullptr, 0), CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "registered callbacks receive each entry") {
    const CUcontext ctx = swcu::test::create_context();
    Received received;
    CUlogsCallbackHandle handle = nullptr;
    SWCU_TEST_CHECK_RESULT(cu.cuLogsRegisterCallback(nullptr, nullptr, &handle),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuLogsRegisterCallback(&Received::callback, &received, &handle));
    log_one_error();
    REQUIRE(received.messages.size() == 1);
    CHECK(received.messages[0].first == CU_LOG_LEVEL_ERROR);
    CHECK(received.messages[0].second == kMessage);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuLogsUnregisterCallback(handle));
    SWCU_TEST_CHECK_RESULT(cu.cuLogsUnregisterCallback(handle), CUDA_ERROR_INVALID_VALUE);
    log_one_error();
    CHECK(received.messages.size() == 1);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }

  TEST_CASE_FIXTURE(swcu::test::DriverTest, "logs dump to a file") {
    const CUcontext ctx = swcu::test::create_context();
    CUlogIterator it = 0;
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuLogsCurrent(&it, 0));
    log_one_error();
    const std::string path = "swdriver_logs_test.txt";
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuLogsDumpToFile(&it, path.c_str(), 0));
    std::ifstream in{path};
    std::stringstream text;
    text << in.rdbuf();
    CHECK(text.str() == std::string{kMessage} + "\n");
    std::remove(path.c_str());
    SWCU_TEST_CHECK_RESULT(cu.cuLogsDumpToFile(&it, "/nonexistent/dir/x", 0),
                           CUDA_ERROR_INVALID_VALUE);
    SWCU_TEST_REQUIRE_SUCCESS(cu.cuCtxDestroy_v2(ctx));
  }
}
