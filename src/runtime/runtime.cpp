#include "cuwrap/runtime.hpp"

#include "cuwrap/detail/driver.hpp"

namespace cuwrap::runtime::detail {

cuwrap::kernel kernel_from_symbol(const void* symbol, std::source_location where) {
  cudaFunction_t function{};
  check(cudaGetFuncBySymbol(&function, symbol), "cudaGetFuncBySymbol", where);
  const auto f = reinterpret_cast<CUfunction>(function);  // the same driver object
  const char* name = nullptr;
  cuwrap::check(cuwrap::detail::driver().cuFuncGetName(&name, f), "cuFuncGetName", where);
  return cuwrap::kernel::from_function(f, name);
}

}  // namespace cuwrap::runtime::detail
