// docs/external-memory.md: memory another API exported as a file descriptor (here a memfd the
// program made, as a Vulkan driver's vkGetMemoryFdKHR would give one), a kernel writing through
// the mapped buffer while the host reads the same file, and a timeline semaphore ordering two
// streams.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cuwrap/cuwrap.hpp>
#include <string_view>

#include "scale_ptx.hpp"

int main() try {
  constexpr int n = 256;
  constexpr std::size_t bytes = 4096;
  cuwrap::primary_context ctx{cuwrap::device::get(0)};
  cuwrap::stream producer{ctx}, consumer{ctx};
  const auto mod = cuwrap::module::load(ctx, std::string_view{examples::scale_ptx});
  const auto scale = mod.kernel<void(float*, float, int)>("scale");

  // The exporting side: a file of `bytes`, which the host also maps.
  const int fd = memfd_create("example", MFD_CLOEXEC);
  if (fd < 0 || ftruncate(fd, static_cast<off_t>(bytes)) != 0) return 1;
  void* const host = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (host == MAP_FAILED) return 1;
  auto* const values = static_cast<float*>(host);
  for (int i = 0; i < n; ++i) values[i] = static_cast<float>(i);

  // Import a duplicate: the driver owns what it imports and closes it when done.
  const auto memory = cuwrap::external_memory::import_fd(ctx, dup(fd), bytes);
  auto buffer = memory.mapped_buffer<float>(0, n);  // a device_buffer<float> over the file

  // A timeline semaphore: the consumer's kernel waits until the producer signals 1.
  const int sem_fd = memfd_create("example-semaphore", MFD_CLOEXEC);
  if (sem_fd < 0 || ftruncate(sem_fd, 8) != 0) return 1;
  const auto ready =
      cuwrap::external_semaphore::import_fd(ctx, sem_fd, cuwrap::external_semaphore_kind::timeline);
  ready.wait(consumer, 1);
  consumer.launch(scale, cuwrap::launch_config::linear(n, 128), buffer, 2.0f, n);
  producer.launch(scale, cuwrap::launch_config::linear(n, 128), buffer, 10.0f, n);
  ready.signal(producer, 1);  // the consumer's kernel runs after the producer's
  consumer.synchronize();

  std::printf("values[3] = %g (3 * 10 * 2)\n", static_cast<double>(values[3]));
  const bool ok = values[3] == 60.0f && values[n - 1] == 20.0f * static_cast<float>(n - 1);
  munmap(host, bytes);
  close(fd);
  return ok ? 0 : 1;
} catch (const cuwrap::error& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return 1;
} catch (const cuwrap::usage_error& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return 1;
}
