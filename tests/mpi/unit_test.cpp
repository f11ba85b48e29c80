// cuwrap::mpi's parts that need no MPI run and no driver: the device choice, the data-path
// choice, the timeout text, the datatype mapping and the error text.
#include <doctest/doctest.h>

#include <complex>
#include <cstdint>
#include <cuwrap/mpi.hpp>
#include <string>

namespace mpi = cuwrap::mpi;

TEST_CASE(
    "mpi choose_device: node_rank gives the node-local rank, and fails past the device count") {
  const mpi::device_policy by_rank;
  CHECK(mpi::choose_device(by_rank, 5, 1, 2, 2) == 1);
  try {
    (void)mpi::choose_device(by_rank, 2, 2, 3, 2);
    FAIL("three ranks on two devices should fail");
  } catch (const mpi::configuration_error& e) {
    CHECK(std::string{e.what()} ==
          "cuwrap::mpi::select_device(this node has 3 ranks but 2 devices: start at most one rank "
          "per device, or allow sharing) at " +
              std::string{e.where().file_name()} + ":" + std::to_string(e.where().line()));
    CHECK(e.code() == MPI_SUCCESS);
  }
  CHECK(mpi::choose_device({mpi::device_strategy::node_rank, {}, true}, 2, 2, 3, 2) == 0);
}

TEST_CASE("mpi choose_device: round robin is rank modulo count, explicit reads the list") {
  const mpi::device_policy rr{mpi::device_strategy::round_robin, {}, false};
  CHECK(mpi::choose_device(rr, 7, 0, 1, 3) == 1);
  const mpi::device_policy list{mpi::device_strategy::explicit_list, {3, 0}, false};
  CHECK(mpi::choose_device(list, 9, 0, 2, 4) == 3);
  CHECK(mpi::choose_device(list, 9, 1, 2, 4) == 0);
  CHECK_THROWS_WITH_AS(
      (void)mpi::choose_device(list, 9, 2, 3, 4),
      doctest::Contains("the explicit list has 2 ordinals, none for node-local rank 2"),
      mpi::configuration_error);
  CHECK_THROWS_WITH_AS(
      (void)mpi::choose_device(list, 0, 0, 2, 2),
      doctest::Contains("explicit ordinal 3 for node-local rank 0, but the node has 2 devices"),
      mpi::configuration_error);
  CHECK_THROWS_WITH_AS((void)mpi::choose_device(rr, 0, 0, 1, 0),
                       doctest::Contains("this node has no device"), mpi::configuration_error);
}

TEST_CASE("mpi first_shared finds the first two ranks on one device") {
  CHECK_FALSE(mpi::first_shared({0, 1, 2}).has_value());
  CHECK(mpi::first_shared({0, 1, 0, 1}) == std::pair{0, 2});
  CHECK(mpi::first_shared({2, 1, 1}) == std::pair{1, 2});
}

TEST_CASE("mpi resolve_cuda_aware: an explicit choice wins, then the variable, then MPI") {
  using mpi::cuda_aware;
  CHECK(mpi::resolve_cuda_aware(cuda_aware::trust, "0", false));
  CHECK_FALSE(mpi::resolve_cuda_aware(cuda_aware::stage, "1", true));
  CHECK(mpi::resolve_cuda_aware(cuda_aware::detect, "1", false));
  CHECK(mpi::resolve_cuda_aware(cuda_aware::detect, "trust", false));
  CHECK_FALSE(mpi::resolve_cuda_aware(cuda_aware::detect, "stage", true));
  CHECK(mpi::resolve_cuda_aware(cuda_aware::detect, nullptr, true));
  CHECK_FALSE(mpi::resolve_cuda_aware(cuda_aware::detect, "", false));
  CHECK_THROWS_WITH_AS(
      (void)mpi::resolve_cuda_aware(cuda_aware::detect, "maybe", true),
      doctest::Contains("CUWRAP_MPI_CUDA_AWARE='maybe', expected 1 or trust, 0 or stage"),
      mpi::configuration_error);
}

TEST_CASE("mpi parse_timeout reads milliseconds and names bad text") {
  CHECK(mpi::parse_timeout("2500") == std::chrono::milliseconds{2500});
  CHECK(mpi::parse_timeout("0") == std::chrono::milliseconds{0});
  CHECK_THROWS_WITH_AS((void)mpi::parse_timeout("5s"),
                       doctest::Contains("CUWRAP_MPI_TIMEOUT_MS='5s', expected milliseconds"),
                       mpi::configuration_error);
  CHECK_THROWS_AS((void)mpi::parse_timeout("-1"), mpi::configuration_error);
}

TEST_CASE("mpi datatype maps each arithmetic type to the MPI type of its size and kind") {
  CHECK(mpi::datatype<float>() == MPI_FLOAT);
  CHECK(mpi::datatype<const double>() == MPI_DOUBLE);
  CHECK(mpi::datatype<std::int32_t>() == MPI_INT32_T);
  CHECK(mpi::datatype<std::uint64_t>() == MPI_UINT64_T);
  CHECK(mpi::datatype<long long>() == MPI_INT64_T);
  CHECK(mpi::datatype<unsigned char>() == MPI_UINT8_T);
  CHECK(mpi::datatype<char>() == MPI_CHAR);
  CHECK(mpi::datatype<std::complex<double>>() == MPI_C_DOUBLE_COMPLEX);
  static_assert(!mpi::mpi_type<bool>);
  static_assert(!mpi::mpi_type<int*>);
  static_assert(mpi::type_code<float>() != mpi::type_code<std::int32_t>());
  static_assert(mpi::type_code<std::int32_t>() != mpi::type_code<std::uint32_t>());
  static_assert(mpi::type_code<double>() == (8 | 2 << 8));
}
