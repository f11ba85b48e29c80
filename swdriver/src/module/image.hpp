// What the driver reads from a module image: PTX text, an ELF cubin or a fatbin (a container of
// both). Nothing is compiled or executed: an image gives the names of its kernels with their
// parameter layouts and attributes, and its global variables.
//
// Free of cuda.h on purpose: errors are ImageError values, turned into CUresult codes by the
// module functions (module.cpp).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace swcu {

namespace ptx {
struct Program;
}

/// The simulated device's architecture (sm_90).
inline constexpr int kDeviceArch = 90;

/// Where one kernel parameter sits in the packed parameter buffer.
struct ParamLayout {
  std::size_t offset = 0;
  std::size_t size = 0;
};

/// One kernel (a PTX .entry, a cubin entry function).
struct KernelDesc {
  std::string name;  ///< as in the image: mangled for C++ kernels
  /// False for a cubin kernel without EIATTR_KPARAM_INFO records: no parameter layout.
  bool layout_known = true;
  std::vector<ParamLayout> params;
  std::size_t params_size = 0;     ///< end of the last parameter (0 without parameters)
  unsigned max_threads = 0;        ///< .maxntid/.reqntid product, EIATTR_MAX_THREADS; 0: none
  unsigned min_blocks_per_sm = 0;  ///< .minnctapersm
  int num_regs = 0;                ///< EIATTR_REGCOUNT; PTX: a fixed model (module.cpp)
  int max_regs = 0;                ///< .maxnreg; 0: none
  std::size_t static_shared = 0;   ///< statically allocated shared memory per block
  std::size_t local_bytes = 0;     ///< local memory per thread
  std::array<unsigned, 3> cluster{0, 0, 0};  ///< .reqnctapercluster; all 0: none
  bool explicit_cluster = false;             ///< .explicitcluster: a cluster size is required
};

/// One global variable (.global or .const in PTX; .nv.global*, .nv.constantN in a cubin).
struct GlobalDesc {
  std::string name;
  std::size_t size = 0;
  std::size_t align = 1;
  bool constant = false;
  bool managed = false;             ///< .attribute(.managed)
  std::vector<unsigned char> init;  ///< initial bytes (cubins); empty: all zero
};

enum class ImageCode { ptx, cubin };

/// A parsed image.
struct Image {
  ImageCode code = ImageCode::ptx;  ///< what was loaded (for a fatbin: the entry chosen)
  bool from_fatbin = false;
  int ptx_isa = 0;                 ///< PTX: .version as 10 * major + minor
  int arch = kDeviceArch;          ///< the binary architecture (PTX: the device's, after the "JIT")
  int virtual_arch = kDeviceArch;  ///< PTX: the .target; cubin: its architecture
  std::vector<KernelDesc> kernels;
  std::vector<GlobalDesc> globals;
  std::size_t const_bytes = 0;  ///< user constant memory (CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES)
  /// The decoded PTX the interpreter runs (ptx/program.hpp): the image's PTX, or a fatbin's PTX
  /// entry when the fatbin's cubin was chosen; nullptr when the image holds no PTX (SASS only).
  std::shared_ptr<const ptx::Program> program;

  [[nodiscard]] const KernelDesc* kernel(std::string_view name) const noexcept;
  [[nodiscard]] const GlobalDesc* global(std::string_view name) const noexcept;
};

/// Why an image did not load (the CUresult each becomes is in module.cpp).
enum class ImageError {
  none,
  not_an_image,             ///< CUDA_ERROR_INVALID_IMAGE
  invalid_ptx,              ///< CUDA_ERROR_INVALID_PTX
  unsupported_ptx_version,  ///< CUDA_ERROR_UNSUPPORTED_PTX_VERSION
  no_binary_for_gpu,        ///< CUDA_ERROR_NO_BINARY_FOR_GPU
  not_supported,            ///< CUDA_ERROR_NOT_SUPPORTED (LTO-IR, until nvJitLink links it)
};

/// How an image is loaded (JIT options that change what the driver reports).
struct LoadOptions {
  int max_ptx_isa = 90;            ///< newest PTX ISA the driver accepts (10 * major + minor)
  unsigned max_registers = 0;      ///< CU_JIT_MAX_REGISTERS; 0: none
  unsigned threads_per_block = 0;  ///< CU_JIT_THREADS_PER_BLOCK / _MAX_THREADS_PER_BLOCK
};

/// The outcome of parsing: the error and the messages for the JIT logs.
struct LoadLog {
  ImageError error = ImageError::none;
  std::string error_log;  ///< why it failed (one line)
  std::string info_log;   ///< what a successful PTX "compilation" reports
  /// LTO-IR to link into PTX first (error not_supported until then): the image itself, or the
  /// fatbin that holds it, within the caller's bytes; empty when there is none to link.
  std::span<const unsigned char> ltoir;
  std::string ltoir_name;  ///< what nvJitLink's messages call it
};

/// Parses an image in memory. `size` is its length when known (a file), else SIZE_MAX: PTX
/// then ends at its NUL, binary images at the end their headers give. LTO-IR, and a fatbin
/// with nothing for the device but LTO-IR, come back as not_supported with `ltoir` set: the
/// module layer links it with nvJitLink and loads the PTX (module.cpp).
[[nodiscard]] LoadLog load_image(const void* data, std::size_t size, const LoadOptions& options,
                                 Image& out);

/// PTX text (no NUL needed). `out` is complete only when the result has no error.
[[nodiscard]] LoadLog parse_ptx(std::string_view text, const LoadOptions& options, Image& out);

/// An ELF cubin of `size` bytes (SIZE_MAX: unknown, trusted to its headers).
[[nodiscard]] LoadLog parse_cubin(const unsigned char* data, std::size_t size, Image& out);

/// The device architecture of an ELF cubin (from e_flags), or 0 when it cannot tell.
[[nodiscard]] int cubin_arch(const unsigned char* data, std::size_t size) noexcept;

/// LTO-IR: `data` starts with the NVVM container's magic 0x7F4E43ED. A header that is cut short
/// or inconsistent is not_an_image; otherwise not_supported, with `ltoir` set when `size` is
/// known (SIZE_MAX: in memory, where the container gives no length, and the log says so).
[[nodiscard]] LoadLog parse_ltoir(const unsigned char* data, std::size_t size);

/// A fatbin: `data` starts with the fatbin magic 0xBA55ED50.
[[nodiscard]] LoadLog parse_fatbin(const unsigned char* data, std::size_t size,
                                   const LoadOptions& options, Image& out);

/// What the JIT linker (link.cpp) takes from a fatbin: the text of its newest PTX entry the
/// device can run (decompressed; empty when there is none) and which other code it holds.
struct FatbinCode {
  std::string ptx;
  int ptx_arch = 0;        ///< the PTX entry's compute_NN
  bool has_elf = false;    ///< SASS entries (any architecture)
  bool has_ltoir = false;  ///< LTO-IR entries (code=lto_NN)
  std::string error;       ///< not empty: the fatbin is invalid or its PTX entry unusable
};

/// Reads a fatbin (`size` SIZE_MAX: unknown, trusted to its headers) for the JIT linker.
[[nodiscard]] FatbinCode fatbin_code(const unsigned char* data, std::size_t size);

/// Decompresses a fatbin entry's payload (LZ4 block or zstd frame) into `out` of the expected
/// size; false when the format is unknown, the library for it is missing, or the data is bad.
[[nodiscard]] bool decompress(unsigned long long flags, const unsigned char* data, std::size_t size,
                              std::size_t expected, std::vector<unsigned char>& out,
                              std::string& why);

}  // namespace swcu
