// external_memory and external_semaphore on the software driver: a memfd imported as external
// memory, a kernel writing through the mapped buffer while the host reads the file, timeline and
// binary semaphores ordering streams, moved-from owners, and a fault sweep over the imports.
#include "cuwrap/external_memory.hpp"

#include <dirent.h>
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cuwrap/cuwrap.hpp"
#include "fault_sweep.hpp"
#include "kernels_fixture.hpp"
#include "moved_from_checks.hpp"

using cuwrap::testing::check_moved_from;
using cuwrap::testing::moved_from_message;
using cuwrap::testing::sw_fixture;
using cuwrap::testing::swcuda;

namespace {

using fixture = cuwrap::testing::kernels_fixture;

// A memfd of `bytes` (what a Vulkan driver's vkGetMemoryFdKHR would give).
int memfd(std::size_t bytes) {
  const int fd = memfd_create("cuwrap-external-test", MFD_CLOEXEC);
  REQUIRE(fd >= 0);
  REQUIRE(ftruncate(fd, static_cast<off_t>(bytes)) == 0);
  return fd;
}

// The host's mapping of a file, unmapped when it goes.
struct host_mapping {
  host_mapping(int fd, std::size_t bytes)
      : bytes_{bytes}, p_{mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)} {
    REQUIRE(p_ != MAP_FAILED);
  }
  ~host_mapping() { munmap(p_, bytes_); }
  host_mapping(const host_mapping&) = delete;
  host_mapping& operator=(const host_mapping&) = delete;
  template <class T>
  T* as() const {
    return static_cast<T*>(p_);
  }

 private:
  std::size_t bytes_;
  void* p_;
};

bool is_open(int fd) { return fcntl(fd, F_GETFD) != -1; }

int open_descriptors() {
  DIR* const dir = opendir("/proc/self/fd");
  REQUIRE(dir != nullptr);
  int count = 0;
  while (readdir(dir) != nullptr) ++count;
  closedir(dir);
  return count;
}

// NOLINTBEGIN(bugprone-use-after-move): using moved-from objects is what some tests do.

}  // namespace

TEST_SUITE("external memory") {
  TEST_CASE_FIXTURE(fixture,
                    "a kernel writes through the mapped buffer and the host reads the file") {
    constexpr int n = 1000;
    const std::size_t bytes = 8192;
    const int fd = memfd(bytes);
    const host_mapping host{fd, bytes};
    auto* const values = host.as<float>() + 256;  // the buffer starts 1 KiB in
    for (int i = 0; i < n; ++i) values[i] = static_cast<float>(i);

    const int given = dup(fd);
    const auto memory = cuwrap::external_memory::import_fd(ctx, given, bytes, true);
    CHECK(memory.size() == bytes);
    auto buffer = memory.mapped_buffer<float>(1024, n);
    CHECK(buffer.size() == n);
    CHECK(cuwrap::pointer_attributes(buffer.address()).type == cuwrap::memory_type::device);

    const auto k = mod.kernel<void(float*, float, int)>("scale");
    s.launch(k, cuwrap::launch_config::linear(n, 128), buffer, 3.0f, n);
    s.synchronize();
    for (int i = 0; i < n; ++i) REQUIRE(values[i] == 3.0f * static_cast<float>(i));

    // A copy into the buffer lands in the file as well.
    std::vector<float> ones(4, 1.0f);
    cuwrap::copy(s, buffer.span().subspan(0, 4), ones);
    s.synchronize();
    CHECK(values[0] == 1.0f);
    CHECK(values[3] == 1.0f);
    CHECK(is_open(given));  // the driver's now; closed when the memory is destroyed
  }

  TEST_CASE_FIXTURE(fixture, "the mapped buffer outlives the external memory object") {
    const int fd = memfd(4096);
    const host_mapping host{fd, 4096};
    const int given = dup(fd);
    cuwrap::device_buffer<int> buffer = [&] {
      const auto memory = cuwrap::external_memory::import_fd(ctx, given, 4096);
      return memory.mapped_buffer<int>(0, 16);
    }();  // cuDestroyExternalMemory: the descriptor is closed, the mapping stays (cuda.h)
    CHECK_FALSE(is_open(given));
    cuwrap::fill(s, buffer, 0x01010101);
    s.synchronize();
    CHECK(host.as<int>()[15] == 0x01010101);
  }

  TEST_CASE_FIXTURE(fixture, "ranges and arguments are checked before the driver, naming them") {
    const int fd = memfd(4096);
    const auto calls = cuwrap::testing::calls_made_by([&] {
      CHECK_THROWS_WITH_AS((void)cuwrap::external_memory::import_fd(ctx, -1, 4096),
                           doctest::Contains("file descriptor -1 is not valid"),
                           cuwrap::usage_error);
      CHECK_THROWS_WITH_AS((void)cuwrap::external_memory::import_fd(ctx, fd, 0),
                           doctest::Contains("the size is 0"), cuwrap::usage_error);
    });
    CHECK(calls.empty());
    // More than the file holds: the driver refuses it, and the descriptor is still ours.
    CHECK_THROWS_WITH_AS((void)cuwrap::external_memory::import_fd(ctx, fd, 8192),
                         doctest::Contains("cuImportExternalMemory"), cuwrap::error);
    CHECK(is_open(fd));
    const auto memory = cuwrap::external_memory::import_fd(ctx, fd, 4096);
    const auto none = cuwrap::testing::calls_made_by([&] {
      CHECK_THROWS_WITH_AS((void)memory.mapped_buffer<int>(4000, 100),
                           doctest::Contains("400 bytes at offset 4000 are not inside the imported "
                                             "4096 bytes"),
                           cuwrap::usage_error);
      CHECK_THROWS_WITH_AS((void)memory.mapped_buffer<double>(4, 2),
                           doctest::Contains("offset 4 is not aligned to the element's 8 bytes"),
                           cuwrap::usage_error);
      CHECK_THROWS_AS((void)memory.mapped_buffer(0, 0), cuwrap::usage_error);
    });
    CHECK(none.empty());
  }

  TEST_CASE_FIXTURE(fixture, "a timeline wait holds a stream until another stream signals") {
    const int fd = memfd(8);
    const host_mapping word{fd, 8};
    const auto sem = cuwrap::external_semaphore::import_fd(
        ctx, dup(fd), cuwrap::external_semaphore_kind::timeline);
    CHECK(sem.kind() == cuwrap::external_semaphore_kind::timeline);
    cuwrap::stream consumer{ctx};
    cuwrap::device_buffer<float> data{ctx, 64};
    cuwrap::fill(s, data, 1.0f);
    s.synchronize();
    sem.wait(consumer, 2);
    const auto k = mod.kernel<void(float*, float, int)>("scale");
    consumer.launch(k, cuwrap::launch_config::linear(64, 64), data, 5.0f, 64);
    CHECK_FALSE(consumer.is_done());
    sem.signal(s, 1);
    s.synchronize();
    CHECK(std::atomic_ref<std::uint64_t>(*word.as<std::uint64_t>()).load() == 1);
    CHECK_FALSE(consumer.is_done());  // 1 < 2: the kernel has not run
    std::vector<float> out(64);
    sem.signal(s, 2);
    cuwrap::copy(consumer, out, data);
    consumer.synchronize();
    CHECK(out[63] == 5.0f);
  }

  TEST_CASE_FIXTURE(fixture, "binary semaphores in a batch are one driver call each way") {
    const auto a = cuwrap::external_semaphore::import_fd(ctx, memfd(8),
                                                         cuwrap::external_semaphore_kind::binary);
    const auto b = cuwrap::external_semaphore::import_fd(ctx, memfd(8),
                                                         cuwrap::external_semaphore_kind::binary);
    const cuwrap::semaphore_value both[] = {{a}, {b}};
    auto calls = cuwrap::testing::calls_made_by([&] { cuwrap::signal(s, both); });
    CHECK(cuwrap::testing::total(calls) == 1);
    CHECK(calls.count("cuSignalExternalSemaphoresAsync") == 1);
    cuwrap::stream other{ctx};
    calls = cuwrap::testing::calls_made_by([&] { cuwrap::wait(other, both); });
    CHECK(calls.count("cuWaitExternalSemaphoresAsync") == 1);
    other.synchronize();
    // A binary semaphore takes no value: refused before the driver.
    const cuwrap::semaphore_value valued[] = {{a, 3}};
    CHECK_THROWS_WITH_AS(cuwrap::signal(s, valued),
                         doctest::Contains("value 3 given for a binary semaphore"),
                         cuwrap::usage_error);
  }

  TEST_CASE_FIXTURE(fixture, "moved-from external objects throw usage_error before the driver") {
    auto memory = cuwrap::external_memory::import_fd(ctx, memfd(4096), 4096);
    const auto taken = std::move(memory);
    check_moved_from(moved_from_message("external_memory", "mapped_buffer"),
                     [&] { (void)memory.mapped_buffer(0, 16); });
    CHECK(memory.size() == 0);
    auto sem = cuwrap::external_semaphore::import_fd(ctx, memfd(8),
                                                     cuwrap::external_semaphore_kind::timeline);
    const auto kept = std::move(sem);
    check_moved_from(moved_from_message("external_semaphore", "signal"), [&] { sem.signal(s, 1); });
    check_moved_from(moved_from_message("external_semaphore", "wait"), [&] { sem.wait(s, 1); });
    cuwrap::stream gone{ctx};
    const cuwrap::stream moved = std::move(gone);
    check_moved_from(
        cuwrap::testing::moved_from_argument_message("external_semaphore", "signal", "stream"),
        [&] { kept.signal(gone, 1); });
  }

  TEST_CASE_FIXTURE(fixture, "graph nodes wait for and signal external semaphores") {
    const int fd = memfd(8);
    const host_mapping word{fd, 8};
    const auto sem = cuwrap::external_semaphore::import_fd(
        ctx, dup(fd), cuwrap::external_semaphore_kind::timeline);
    cuwrap::device_buffer<float> data{ctx, 32};
    cuwrap::fill(s, data, 2.0f);
    s.synchronize();
    const auto k = mod.kernel<void(float*, float, int)>("scale");
    cuwrap::graph g{ctx};
    const cuwrap::semaphore_value wait_for[] = {{sem, 1}};
    const auto waited = cuwrap::add_semaphore_wait(g, wait_for);
    const auto scaled =
        g.add_kernel(k, cuwrap::launch_config::linear(32, 32), waited, data, 4.0f, 32);
    const cuwrap::semaphore_value done[] = {{sem, 2}};
    const auto signaled = cuwrap::add_semaphore_signal(g, done, scaled);
    auto exec = g.instantiate();
    exec.launch(s);
    CHECK_FALSE(s.is_done());  // the wait for 1 holds the graph back
    cuwrap::stream other{ctx};
    sem.signal(other, 1);
    other.synchronize();
    s.synchronize();
    CHECK(std::atomic_ref<std::uint64_t>(*word.as<std::uint64_t>()).load() == 2);
    std::vector<float> out(32);
    cuwrap::copy(s, out, data);
    s.synchronize();
    CHECK(out[31] == 8.0f);
    // The executable graph's signal takes another value without re-instantiating.
    const cuwrap::semaphore_value later[] = {{sem, 7}};
    cuwrap::set_semaphore_signal(exec, signaled, later);
    exec.launch(s);
    s.synchronize();
    CHECK(std::atomic_ref<std::uint64_t>(*word.as<std::uint64_t>()).load() == 7);
    // A binary semaphore takes no value, checked before the driver.
    const auto binary = cuwrap::external_semaphore::import_fd(
        ctx, memfd(8), cuwrap::external_semaphore_kind::binary);
    const cuwrap::semaphore_value valued[] = {{binary, 4}};
    CHECK_THROWS_WITH_AS((void)cuwrap::add_semaphore_signal(g, valued),
                         doctest::Contains("add_semaphore_signal: value 4 given for a binary"),
                         cuwrap::usage_error);
  }

  TEST_CASE_FIXTURE(fixture, "a captured signal and wait become external semaphore nodes") {
    // The driver records cuWaitExternalSemaphoresAsync and cuSignalExternalSemaphoresAsync made
    // while a stream captures as CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT and _SIGNAL nodes.
    const int fd = memfd(8);
    const host_mapping word{fd, 8};
    const auto sem = cuwrap::external_semaphore::import_fd(
        ctx, dup(fd), cuwrap::external_semaphore_kind::timeline);
    const auto value = [&] {
      return std::atomic_ref<std::uint64_t>(*word.as<std::uint64_t>()).load();
    };
    auto capture = s.begin_capture();
    sem.wait(s, 1);
    sem.signal(s, 3);
    cuwrap::graph g = capture.end();
    const auto nodes = g.nodes();
    REQUIRE(nodes.size() == 2);
    CHECK(nodes[0].kind() == cuwrap::node_kind::semaphore_wait);
    CHECK(nodes[1].kind() == cuwrap::node_kind::semaphore_signal);
    CHECK(value() == 0);  // captured, not run
    auto exec = g.instantiate();
    exec.launch(s);
    CHECK_FALSE(s.is_done());  // the captured wait for 1 holds the launch back
    cuwrap::stream other{ctx};
    sem.signal(other, 1);
    other.synchronize();
    s.synchronize();
    CHECK(value() == 3);
    // The captured signal node takes another value in the executable graph.
    const cuwrap::semaphore_value later[] = {{sem, 8}};
    cuwrap::set_semaphore_signal(exec, nodes[1], later);
    exec.launch(s);
    s.synchronize();
    CHECK(value() == 8);
  }

  TEST_CASE_FIXTURE(sw_fixture, "fault sweep: importing, mapping, signaling, waiting") {
    const int before = open_descriptors();
    const int points = cuwrap::testing::fault_sweep([] {
      cuwrap::primary_context ctx{cuwrap::device::get(0)};
      cuwrap::stream s{ctx};
      const int memory_fd = memfd(4096);
      std::optional<cuwrap::external_memory> memory;
      try {
        memory.emplace(cuwrap::external_memory::import_fd(ctx, memory_fd, 4096));
      } catch (...) {
        close(memory_fd);  // a failed import leaves the descriptor to the caller
        throw;
      }
      const auto buffer = memory->mapped_buffer<int>(0, 8);
      const int sem_fd = memfd(8);
      std::optional<cuwrap::external_semaphore> sem;
      try {
        sem.emplace(cuwrap::external_semaphore::import_fd(
            ctx, sem_fd, cuwrap::external_semaphore_kind::timeline));
      } catch (...) {
        close(sem_fd);
        throw;
      }
      sem->signal(s, 1);
      sem->wait(s, 1);
      s.synchronize();
    });
    CHECK(points >= 6);
    CHECK(open_descriptors() == before);  // every descriptor closed, on every path
  }

  TEST_CASE_FIXTURE(fixture, "a mapped mipmapped array owns its levels over the imported memory") {
    // Level 0 of 16 x 8 float2 at offset 1024, level 1 (8 x 4) at the next multiple of 512
    // bytes: the software driver's layout (docs/software-driver.md; the real one is opaque).
    constexpr std::size_t bytes = 8192, offset = 1024;
    const int fd = memfd(bytes);
    const host_mapping host{fd, bytes};
    using texel = std::array<float, 2>;
    auto* const level0 = reinterpret_cast<texel*>(host.as<unsigned char>() + offset);
    auto* const level1 = reinterpret_cast<texel*>(host.as<unsigned char>() + offset + 1024);
    for (int i = 0; i < 16 * 8; ++i) level0[i] = {static_cast<float>(i), -1.0f};
    for (int i = 0; i < 8 * 4; ++i) level1[i] = {static_cast<float>(i) * 0.5f, 2.0f};
    const int given = dup(fd);
    std::optional<cuwrap::mipmapped_array<float, 2>> mip;
    {
      const auto memory = cuwrap::external_memory::import_fd(ctx, given, bytes);
      mip.emplace(memory.mapped_mipmapped_array<float, 2>(offset, {16, 8}, 9));
    }  // the array outlives the memory object
    // clamped as cuMipmappedArrayCreate clamps: 1 + log2(16)
    CHECK(mip->levels() == 5);
    CHECK(mip->extent() == cuwrap::array_extent{16, 8, 0});
    const auto desc = mip->level(1).descriptor();
    CHECK(desc.format == CU_AD_FORMAT_FLOAT);
    CHECK(desc.channels == 2);
    CHECK(desc.extent == cuwrap::array_extent{8, 4, 0});
    std::vector<texel> got(8 * 4);
    cuwrap::copy_3d(s, cuwrap::volume_of(got, {8, 4, 1}),
                    cuwrap::volume<const texel>(mip->level(1)));
    s.synchronize();
    CHECK(got == std::vector<texel>(level1, level1 + 8 * 4));
    // A copy into level 0 lands in the file.
    const std::vector<texel> ones(16 * 8, texel{1.0f, 1.0f});
    cuwrap::copy_3d(s, cuwrap::volume<texel>(mip->level(0)), cuwrap::volume_of(ones, {16, 8, 1}));
    s.synchronize();
    CHECK(level0[127] == texel{1.0f, 1.0f});
    const auto live = swcuda().live_handles(SWCU_MIPMAPPED_ARRAY);
    CHECK(live == 1);
    mip.reset();  // cuMipmappedArrayDestroy
    CHECK(swcuda().live_handles(SWCU_MIPMAPPED_ARRAY) == 0);
  }

  TEST_CASE_FIXTURE(fixture, "a mapped mipmapped array's arguments are checked, naming them") {
    const auto memory = cuwrap::external_memory::import_fd(ctx, memfd(4096), 4096);
    const auto none = cuwrap::testing::calls_made_by([&] {
      CHECK_THROWS_WITH_AS((void)memory.mapped_mipmapped_array<float>(4096, {4, 4}, 1),
                           doctest::Contains("mapped_mipmapped_array: offset 4096 is not inside "
                                             "the imported 4096 bytes"),
                           cuwrap::usage_error);
      CHECK_THROWS_WITH_AS((void)memory.mapped_mipmapped_array<float>(0, {4, 4}, 0),
                           doctest::Contains("0 levels"), cuwrap::usage_error);
    });
    CHECK(none.empty());
    // 64 x 64 floats (16 KiB) do not fit 4 KiB: the driver refuses, the error names the request.
    CHECK_THROWS_WITH_AS((void)memory.mapped_mipmapped_array<float>(0, {64, 64}, 1),
                         doctest::Contains("cuExternalMemoryGetMappedMipmappedArray(1 levels of "
                                           "64 x 64 x 0 elements of 1 channels at offset 0 of "
                                           "4096 bytes)"),
                         cuwrap::error);
    auto moved = cuwrap::external_memory::import_fd(ctx, memfd(4096), 4096);
    const auto taken = std::move(moved);
    check_moved_from(moved_from_message("external_memory", "mapped_mipmapped_array"), [&] {
      (void)moved.mapped_mipmapped_array<float>(0, {4, 4}, 1);
    });
  }

  TEST_CASE_FIXTURE(sw_fixture, "fault sweep: mapping a mipmapped array") {
    const int before = open_descriptors();
    const int points = cuwrap::testing::fault_sweep([] {
      cuwrap::primary_context ctx{cuwrap::device::get(0)};
      const int fd = memfd(4096);
      std::optional<cuwrap::external_memory> memory;
      try {
        memory.emplace(cuwrap::external_memory::import_fd(ctx, fd, 4096));
      } catch (...) {
        close(fd);
        throw;
      }
      const auto mip = memory->mapped_mipmapped_array<std::uint8_t, 4>(512, {8, 8}, 2);
      (void)mip.level(1);
    });
    CHECK(points >= 3);
    CHECK(open_descriptors() == before);
  }
}

// NOLINTEND(bugprone-use-after-move)
