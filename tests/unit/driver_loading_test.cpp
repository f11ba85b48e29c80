// Loading the driver library: every way it can go wrong gets its own clear error. These use
// load_driver(spec) directly, so they need no driver and do not touch the process's table.
#include <doctest/doctest.h>

#include <cstdlib>
#include <source_location>
#include <string>

#include "cuwrap/detail/driver.hpp"
#include "cuwrap/device.hpp"
#include "cuwrap/driver.hpp"
#include "cuwrap/error.hpp"
#include "cuwrap/software_driver.hpp"

namespace {

cuwrap::error load_error(const char* spec) {
  try {
    (void)cuwrap::detail::load_driver(spec);
  } catch (const cuwrap::error& e) {
    return e;
  }
  FAIL("loading '" << spec << "' did not fail");
  throw;
}

// The cuwrap::error `f` throws (a failed check if none).
template <class F>
cuwrap::error error_of(F&& f) {
  try {
    f();
  } catch (const cuwrap::error& e) {
    return e;
  }
  FAIL("no cuwrap::error was thrown");
  throw;
}

// Sets CUWRAP_DRIVER for one test case, then puts back what was there.
class driver_setting {
 public:
  explicit driver_setting(const char* value) {
    const char* old = std::getenv("CUWRAP_DRIVER");
    had_ = old != nullptr;
    saved_ = had_ ? old : "";
    REQUIRE(setenv("CUWRAP_DRIVER", value, 1) == 0);
  }
  driver_setting(const driver_setting&) = delete;
  driver_setting& operator=(const driver_setting&) = delete;
  ~driver_setting() {
    if (had_) {
      setenv("CUWRAP_DRIVER", saved_.c_str(), 1);
    } else {
      unsetenv("CUWRAP_DRIVER");
    }
  }

 private:
  bool had_ = false;
  std::string saved_;
};

}  // namespace

TEST_SUITE("driver loading") {
  TEST_CASE("an unknown CUWRAP_DRIVER path gives the dlerror text and a hint") {
    const auto e = load_error("/nonexistent/libcuda.so.1");
    const std::string what = e.what();
    CHECK(e.code() == cuwrap::make_error_code(CUDA_ERROR_SHARED_OBJECT_INIT_FAILED));
    CHECK(e.code() == cuwrap::errc::driver_unavailable);
    CHECK(what.find("cannot load '/nonexistent/libcuda.so.1'") != std::string::npos);
    CHECK(what.find("No such file or directory") != std::string::npos);
    CHECK(what.find("CUWRAP_DRIVER") != std::string::npos);
  }

  TEST_CASE("a library that is not a driver is named as such") {
    const auto e = load_error("libm.so.6");
    CHECK(e.code() == cuwrap::make_error_code(CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND));
    CHECK(std::string{e.what()}.find("is not a CUDA driver") != std::string::npos);
  }

  TEST_CASE("the toolkit's stub library is recognised") {
    const auto e = load_error(CUWRAP_TEST_STUB_DRIVER);
    CHECK(e.code() == cuwrap::make_error_code(CUDA_ERROR_STUB_LIBRARY));
    CHECK(std::string{e.what()}.find("stub library, not a driver") != std::string::npos);
  }

  TEST_CASE("until the driver loads, every entry of the process table tries to load it") {
    // CTest runs each case in a process of its own, so this is the process's first driver call.
    const char* old = std::getenv("CUWRAP_DRIVER");
    const std::string saved = old != nullptr ? old : "";
    REQUIRE(setenv("CUWRAP_DRIVER", "/nonexistent/libcuda.so.1", 1) == 0);
    const auto& process = cuwrap::detail::driver();
    int count = -1;
    for (int attempt = 0; attempt < 2; ++attempt) {  // a failed load is not remembered
      CHECK_THROWS_WITH_AS(process.cuDeviceGetCount(&count),
                           doctest::Contains("cannot load '/nonexistent/libcuda.so.1'"),
                           cuwrap::error);
    }
    CHECK_THROWS_WITH_AS(process.cuStreamQuery(nullptr), doctest::Contains("no CUDA driver"),
                         cuwrap::error);
    CHECK(count == -1);
    if (old != nullptr) {
      setenv("CUWRAP_DRIVER", saved.c_str(), 1);
    } else {
      unsetenv("CUWRAP_DRIVER");
    }
  }

  TEST_CASE("a public query that loads the driver reports the caller's line when it cannot") {
    // CTest runs each case in a process of its own, and a failed load is tried again on the
    // next call: each query below loads (and fails) anew.
    const driver_setting missing{"/nonexistent/libcuda.so.1"};
    const auto check_here = [](const cuwrap::error& e, int line) {
      CHECK(std::string{e.what()}.find("cannot load '/nonexistent/libcuda.so.1'") !=
            std::string::npos);
      CHECK(std::string{e.where().file_name()} == __FILE__);
      CHECK(e.where().line() == static_cast<unsigned>(line));
    };
    int line = __LINE__ + 1;
    check_here(error_of([] { (void)cuwrap::driver_version(); }), line);
    line = __LINE__ + 1;
    check_here(error_of([] { (void)cuwrap::driver_path(); }), line);
    line = __LINE__ + 1;
    check_here(error_of([] { (void)cuwrap::is_software_driver(); }), line);
    line = __LINE__ + 1;
    check_here(error_of([] { (void)cuwrap::software_driver::is_loaded(); }), line);
    line = __LINE__ + 1;
    check_here(error_of([] { (void)cuwrap::software_driver::control(); }), line);
    line = __LINE__ + 1;
    check_here(error_of([] { (void)cuwrap::device::count(); }), line);
    line = __LINE__ + 1;
    check_here(error_of([] { (void)cuwrap::device::get(0); }), line);
    // load_driver() itself: the location it is given.
    const auto site = std::source_location::current();
    check_here(
        error_of([&] { (void)cuwrap::detail::load_driver("/nonexistent/libcuda.so.1", site); }),
        static_cast<int>(site.line()));
  }

  TEST_CASE("every table entry is requested by its base name") {
    for (const auto& entry : cuwrap::detail::driver_entries()) {
      CAPTURE(entry.exported_name);
      CHECK(std::string{entry.exported_name}.starts_with(entry.base_name));
      CHECK(entry.version >= 2000);
    }
  }
}

TEST_SUITE("driver loading") {
  TEST_CASE("a driver older than CUDA 12.0, or reporting no version, is refused at load") {
    for (const int version : {11080, 0, -1}) {
      CAPTURE(version);
      try {
        cuwrap::detail::check_driver_version(version, "/some/libcuda.so.1");
        FAIL("accepted");
      } catch (const cuwrap::error& e) {
        const std::string what = e.what();
        CHECK(e.code() == cuwrap::make_error_code(CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER));
        CHECK(e.code() == cuwrap::errc::driver_unavailable);
        CHECK(what.find("'/some/libcuda.so.1'") != std::string::npos);
        CHECK(what.find("needs a driver for CUDA 12.0 (12000) or newer") != std::string::npos);
      }
    }
    CHECK_THROWS_WITH((cuwrap::detail::check_driver_version(11080, "d")),
                      doctest::Contains("reports CUDA 11.8 (11080)"));
    CHECK_NOTHROW(cuwrap::detail::check_driver_version(12000, "d"));
    CHECK_NOTHROW(cuwrap::detail::check_driver_version(13000, "d"));
  }
}
