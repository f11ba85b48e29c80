// Merging PTX texts into one module, as the JIT linker (link.cpp) does at cuLinkComplete: the
// rules are described at the top of link.cpp.
#pragma once

#include <string>
#include <vector>

#include "core/cuda_api.hpp"

namespace swcu {

/// One PTX input of the merge.
struct PtxInput {
  std::string name;
  std::string text;
};

/// The result of a merge: the text, or the error and its log lines.
struct Merged {
  CUresult result = CUDA_SUCCESS;
  std::string text;
  std::vector<std::string> errors;
  std::size_t resolved = 0;
};

/// Merges the inputs into one PTX text (CUDA_ERROR_INVALID_IMAGE with errors when they cannot be
/// linked).
[[nodiscard]] Merged merge(const std::vector<PtxInput>& inputs);

}  // namespace swcu
