// Memory pools shared between processes (ipc.hpp): export, import, pointer data, errors, faults.
// The IPC of cuMemAlloc memory and events is tested in peer_test.cpp.
#include "cuwrap/ipc.hpp"

#include <dirent.h>
#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>

#include <numeric>
#include <string>
#include <vector>

#include "cuwrap/cuwrap.hpp"
#include "fault_sweep.hpp"
#include "ipc_parent.hpp"
#include "sw_fixture.hpp"

using cuwrap::testing::calls_made_by;
using cuwrap::testing::sw_fixture;
using cuwrap::testing::swcuda;

namespace {

// The descriptors this process has open (a leak shows as a larger count).
int open_descriptors() {
  DIR* const dir = opendir("/proc/self/fd");
  REQUIRE(dir != nullptr);
  int count = 0;
  while (readdir(dir) != nullptr) ++count;
  closedir(dir);
  return count;
}

cuwrap::memory_pool shareable_pool() {
  cuwrap::memory_pool_options options;
  options.sharing = cuwrap::pool_sharing::posix_fd;
  return cuwrap::memory_pool{cuwrap::device::get(0), options};
}

std::vector<int> iota(std::size_t count) {
  std::vector<int> values(count);
  std::iota(values.begin(), values.end(), 0);
  return values;
}

}  // namespace

TEST_SUITE("ipc") {
  TEST_CASE_FIXTURE(sw_fixture,
                    "a second process imports a pool and an allocation, reads and writes it") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    cuwrap::scoped_current_context current{ctx};
    cuwrap::stream s{ctx};
    const auto pool = shareable_pool();
    constexpr std::size_t count = 5000;  // more than a page
    auto shared = pool.allocate<int>(s, count);
    const auto values = iota(count);
    cuwrap::copy(s, shared, values);
    s.synchronize();  // the allocation and the data are there before the child looks
    const int before = open_descriptors();
    REQUIRE(cuwrap::testing::run_ipc_pool_child(pool, shared) == 0);
    CHECK(open_descriptors() == before);  // the exported descriptor was closed
    std::vector<int> back(count);
    cuwrap::copy(back, shared);
    for (std::size_t i = 0; i < count; ++i) REQUIRE(back[i] == static_cast<int>(2 * i + 1));
  }

  TEST_CASE_FIXTURE(sw_fixture, "a pool imported in its own process sees the same bytes") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    cuwrap::scoped_current_context current{ctx};
    cuwrap::stream s{ctx};
    const auto pool = shareable_pool();
    CHECK(pool.sharing() == cuwrap::pool_sharing::posix_fd);
    auto exported = pool.allocate<int>(s, 300);
    cuwrap::copy(s, exported, iota(300));
    s.synchronize();
    const cuwrap::file_descriptor fd = cuwrap::export_pool(pool);
    REQUIRE(fd);
    CHECK((fcntl(fd.get(), F_GETFD) & FD_CLOEXEC) != 0);
    fd.inherit_on_exec();
    CHECK((fcntl(fd.get(), F_GETFD) & FD_CLOEXEC) == 0);
    const auto imported_pool = cuwrap::import_pool(fd);
    CHECK(imported_pool.sharing() == cuwrap::pool_sharing::posix_fd);
    CHECK(imported_pool != pool);
    CHECK(swcuda().live_handles(SWCU_MEMORY_POOL) == 2);
    const auto data = cuwrap::export_pool_pointer(exported.span());
    CHECK(data == cuwrap::export_pool_pointer(exported.span()));  // plain, repeatable bytes
    {
      cuwrap::ipc_pool_memory<int> imported{ctx, imported_pool, data, 300};
      CHECK(imported.size() == 300);
      CHECK(imported.data() != exported.data());  // another mapping of the same memory
      std::vector<int> seen(300);
      cuwrap::copy(seen, imported);
      CHECK(seen == iota(300));
      cuwrap::fill(imported.span().first(10), -1);
      cuwrap::copy(seen, exported);
      CHECK(seen[9] == -1);
      CHECK(seen[10] == 10);
      auto moved = std::move(imported);
      CHECK(imported.empty());  // NOLINT(bugprone-use-after-move): moved-from is empty
      CHECK(swcuda().live_handles(SWCU_DEVICE_ALLOCATION) == 2);
    }
    CHECK(swcuda().live_handles(SWCU_DEVICE_ALLOCATION) == 1);  // the import was freed
    // An imported pool cannot allocate.
    CHECK_THROWS_AS((void)imported_pool.allocate<int>(s, 4), cuwrap::error);
  }

  TEST_CASE_FIXTURE(sw_fixture,
                    "exporting a pool that was not created shareable names its handle types") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    const cuwrap::memory_pool plain{cuwrap::device::get(0)};
    CHECK(plain.sharing() == cuwrap::pool_sharing::none);
    const auto refused = calls_made_by([&] {
      CHECK_THROWS_WITH_AS((void)cuwrap::export_pool(plain),
                           doctest::Contains("cuMemPoolExportToShareableHandle(the pool's handle "
                                             "types are CU_MEM_HANDLE_TYPE_NONE: create it with "
                                             "pool_sharing::posix_fd to export it)"),
                           cuwrap::error);
    });
    CHECK(refused.empty());  // before any driver call
    // Through a view the driver decides, and the message says what it needs.
    const cuwrap::memory_pool_ref view = plain;
    const auto asked = calls_made_by([&] {
      try {
        (void)cuwrap::export_pool(view);
        FAIL("exported a pool that is not shareable");
      } catch (const cuwrap::error& e) {
        CHECK(e.code() == cuwrap::make_error_code(CUDA_ERROR_INVALID_VALUE));
        CHECK(std::string{e.api()} == "cuMemPoolExportToShareableHandle");
        CHECK(std::string{e.what()}.find("pool_sharing::posix_fd") != std::string::npos);
      }
    });
    CHECK(asked == cuwrap::testing::call_counts{{"cuMemPoolExportToShareableHandle", 1}});
    CHECK_THROWS_AS(
        (void)cuwrap::export_pool(cuwrap::memory_pool::default_pool(cuwrap::device::get(0))),
        cuwrap::error);
  }

  TEST_CASE_FIXTURE(sw_fixture, "imported pool memory passes directly as a kernel argument") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    cuwrap::scoped_current_context current{ctx};
    cuwrap::stream s{ctx};
    const auto pool = shareable_pool();
    auto exported = pool.allocate<float>(s, 64);
    cuwrap::fill(s, exported, 1.5f);
    s.synchronize();
    const auto imported_pool = cuwrap::import_pool(cuwrap::export_pool(pool));
    cuwrap::ipc_pool_memory<float> imported{ctx, imported_pool,
                                            cuwrap::export_pool_pointer(exported.span()), 64};
    const auto mod =
        cuwrap::module::load_file(ctx, std::string{CUWRAP_TEST_KERNELS_DIR} + "/kernels.ptx");
    const auto scale = mod.kernel<void(float*, float, int)>("scale");
    s.launch(scale, cuwrap::launch_config::linear(64, 32), imported, 4.0f, 64);  // the import
    std::vector<float> seen(64);
    cuwrap::copy(s, seen, exported);  // the exporter's mapping sees what the kernel wrote
    s.synchronize();
    CHECK(seen == std::vector<float>(64, 6.0f));
    auto kept = std::move(imported);
    CHECK_THROWS_WITH_AS(s.launch(scale, cuwrap::launch_config::linear(64, 32), imported, 4.0f, 64),
                         doctest::Contains("kernel argument 0 (an ipc_pool_memory) was moved from"),
                         cuwrap::usage_error);
  }

  TEST_CASE_FIXTURE(sw_fixture, "pointer data is refused by a pool that did not import its pool") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    cuwrap::scoped_current_context current{ctx};
    cuwrap::stream s{ctx};
    const auto pool = shareable_pool();
    const auto other = shareable_pool();
    auto memory = pool.allocate<int>(s, 64);
    auto elsewhere = other.allocate<int>(s, 64);
    s.synchronize();
    const auto data = cuwrap::export_pool_pointer(memory.span());
    const auto imported_other = cuwrap::import_pool(cuwrap::export_pool(other));
    const int before = open_descriptors();
    // Not an imported pool: the exporter's own.
    CHECK_THROWS_WITH_AS(cuwrap::ipc_pool_memory<int>(ctx, pool, data, 64),
                         doctest::Contains("cuMemPoolImportPointer(the pool must be one "
                                           "import_pool opened"),
                         cuwrap::error);
    // The import of another pool.
    CHECK_THROWS_AS(cuwrap::ipc_pool_memory<int>(ctx, imported_other, data, 64), cuwrap::error);
    // Bytes that are no pointer data.
    cuwrap::ipc_pool_pointer garbage;
    garbage.bytes.fill(std::byte{0x5a});
    CHECK_THROWS_AS(cuwrap::ipc_pool_memory<int>(ctx, imported_other, garbage, 64), cuwrap::error);
    CHECK_THROWS_AS(cuwrap::ipc_pool_memory<int>(ctx, imported_other, {}, 64), cuwrap::error);
    // The right pool takes it.
    cuwrap::ipc_pool_memory<int> good{ctx, imported_other,
                                      cuwrap::export_pool_pointer(elsewhere.span()), 64};
    CHECK(good.size() == 64);
    CHECK(open_descriptors() == before);
    // Memory that is not a shareable pool's has no pointer data.
    cuwrap::device_buffer<int> plain{ctx, 16};
    CHECK_THROWS_WITH_AS((void)cuwrap::export_pool_pointer(plain.span()),
                         doctest::Contains("cuMemPoolExportPointer(the address must be the start "
                                           "of a live allocation"),
                         cuwrap::error);
    cuwrap::stream_ordered_buffer<int> ordered{s, 16};  // the default pool: not shareable
    CHECK_THROWS_AS((void)cuwrap::export_pool_pointer(ordered.span()), cuwrap::error);
  }

  TEST_CASE_FIXTURE(sw_fixture, "importing a descriptor that is no exported pool names it") {
    cuwrap::primary_context ctx{cuwrap::device::get(0)};
    int pipe_ends[2];
    REQUIRE(pipe2(pipe_ends, O_CLOEXEC) == 0);
    const cuwrap::file_descriptor read_end{pipe_ends[0]}, write_end{pipe_ends[1]};
    const std::string expected =
        "cuMemPoolImportFromShareableHandle(file descriptor " + std::to_string(read_end.get());
    CHECK_THROWS_WITH_AS((void)cuwrap::import_pool(read_end), doctest::Contains(expected.c_str()),
                         cuwrap::error);
    CHECK_THROWS_WITH_AS((void)cuwrap::import_pool(-1), doctest::Contains("is not open"),
                         cuwrap::error);
  }

  TEST_CASE_FIXTURE(sw_fixture, "a file descriptor is closed once, moved and released") {
    int pipe_ends[2];
    REQUIRE(pipe2(pipe_ends, O_CLOEXEC) == 0);
    {
      cuwrap::file_descriptor a{pipe_ends[0]};
      cuwrap::file_descriptor b{std::move(a)};
      CHECK_FALSE(a);  // NOLINT(bugprone-use-after-move): moved-from is empty
      CHECK(b.get() == pipe_ends[0]);
      a = std::move(b);
      CHECK(a.get() == pipe_ends[0]);
    }
    CHECK(fcntl(pipe_ends[0], F_GETFD) == -1);  // closed
    cuwrap::file_descriptor c{pipe_ends[1]};
    const int released = c.release();
    CHECK_FALSE(c);
    CHECK(fcntl(released, F_GETFD) != -1);  // still open: the caller's now
    close(released);
  }

  TEST_CASE_FIXTURE(sw_fixture, "fault sweep: exporting and importing a pool and an allocation") {
    const int before = open_descriptors();
    const int points = cuwrap::testing::fault_sweep([] {
      cuwrap::primary_context ctx{cuwrap::device::get(0)};
      cuwrap::stream s{ctx};
      const auto pool = shareable_pool();
      auto memory = pool.allocate<int>(s, 32);
      s.synchronize();
      const auto data = cuwrap::export_pool_pointer(memory.span());
      const auto imported_pool = cuwrap::import_pool(cuwrap::export_pool(pool));
      cuwrap::ipc_pool_memory<int> imported{ctx, imported_pool, data, 32};
      (void)imported.span();
    });
    CHECK(points >= 8);
    CHECK(open_descriptors() == before);  // no descriptor leaked on any failure
  }
}
