// docs/green-contexts.md: split device 0's SMs, make a green context of each half, run a kernel
// in each on its own stream, and check both results.
#include <cstdio>
#include <cuwrap/cuwrap.hpp>
#include <string_view>
#include <vector>

#include "scale_ptx.hpp"

int main() try {
  const auto dev = cuwrap::device::get(0);
  const auto all = cuwrap::sm_resource::of(dev);
  const cuwrap::sm_split split = all.split(all.count() / 2 - 8, 2);  // two equal groups
  cuwrap::green_context a{dev, split.groups.at(0)};
  cuwrap::green_context b{dev, split.groups.at(1)};
  std::printf("%u SMs: two green contexts of %u and %u, %u left over\n", all.count(),
              a.sms().count(), b.sms().count(), split.remainder.count());

  const auto mod_a = cuwrap::module::load(a, std::string_view{examples::scale_ptx});
  const auto mod_b = cuwrap::module::load(b, std::string_view{examples::scale_ptx});
  cuwrap::stream sa = a.create_stream();
  cuwrap::stream sb = b.create_stream();
  std::vector<float> host(1024, 1.0f);
  cuwrap::device_buffer<float> da{a, host.size()};
  cuwrap::device_buffer<float> db{b, host.size()};
  cuwrap::copy(sa, da, host);
  cuwrap::copy(sb, db, host);
  const auto config = cuwrap::launch_config::linear(host.size(), 256);
  sa.launch(mod_a.kernel<void(float*, float, int)>("scale"), config, da.data(), 2.0f, 1024);
  sb.launch(mod_b.kernel<void(float*, float, int)>("scale"), config, db.data(), 3.0f, 1024);
  std::vector<float> ra(host.size());
  std::vector<float> rb(host.size());
  cuwrap::copy(sa, ra, da);
  cuwrap::copy(sb, rb, db);
  sa.synchronize();
  sb.synchronize();
  const bool ok = ra == std::vector<float>(1024, 2.0f) && rb == std::vector<float>(1024, 3.0f);
  std::puts(ok ? "both partitions computed their results" : "WRONG");
  return ok ? 0 : 1;
} catch (const cuwrap::error& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return 1;
}
