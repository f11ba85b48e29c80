// Fatbins: a container of PTX, ELF and LTO-IR entries, each for one architecture, as nvcc
// -fatbin and the host object's embedded device code make them.
//
//   header (16 bytes): u32 magic 0xBA55ED50, u16 version, u16 header size, u64 size of entries
//   entry: u16 kind (1 PTX, 2 ELF, 8 LTO-IR), u16 version, u32 header size, u64 payload size
//   (padded),
//          u32 compressed size at 0x10, u32 architecture at 0x1c, u64 flags at 0x28 (0x2000 LZ4,
//          0x8000 zstd), u64 uncompressed size at 0x38; the payload follows the entry header.
//
// Like the driver on an sm_90 device, the loader takes an ELF entry for the device's
// architecture first, then the newest PTX entry it can "compile" (not newer than the device).
// A compressed entry it cannot decompress (zstd needs libzstd.so.1 at run time) is passed over.
// A fatbin with neither but LTO-IR for the device (code=lto_NN) goes whole to nvJitLink, which
// reads its entries itself (parse_fatbin hands it back in LoadLog::ltoir; module.cpp).
// The JIT linker (link.cpp) takes the PTX entry alone (fatbin_code).
#include <dlfcn.h>

#include <algorithm>
#include <cstring>

#include "module/image.hpp"

namespace swcu {
namespace {

constexpr std::uint32_t kFatbinMagic = 0xBA55ED50;
constexpr std::size_t kEntryHeaderMin = 0x40;
constexpr unsigned long long kFlagLz4 = 0x2000;
constexpr unsigned long long kFlagZstd = 0x8000;
constexpr std::size_t kMaxUnknownExtent = std::size_t{1} << 30;
constexpr int kEntryLtoIr = 8;  // an LTO-IR entry (nvcc -gencode ...,code=lto_NN)

template <class T>
T read(const unsigned char* p) noexcept {
  T value;
  std::memcpy(&value, p, sizeof value);
  return value;
}

// An LZ4 block (no frame): sequences of literals and back references.
bool lz4_block(const unsigned char* in, std::size_t size, std::size_t expected,
               std::vector<unsigned char>& out) {
  out.clear();
  out.reserve(expected);
  const unsigned char* const end = in + size;
  const auto length = [&](std::size_t base, std::size_t& value) {
    value = base;
    if (base != 15) return true;
    for (;;) {
      if (in == end) return false;
      const unsigned char b = *in++;
      value += b;
      if (b != 255) return true;
    }
  };
  while (in < end) {
    const unsigned char token = *in++;
    std::size_t literals = 0;
    if (!length(token >> 4, literals) || literals > static_cast<std::size_t>(end - in) ||
        out.size() + literals > expected) {
      return false;
    }
    out.insert(out.end(), in, in + literals);
    in += literals;
    if (in == end) break;  // the last sequence has literals only
    if (end - in < 2) return false;
    const std::size_t offset = read<std::uint16_t>(in);
    in += 2;
    std::size_t match = 0;
    if (offset == 0 || offset > out.size() || !length(token & 15, match)) return false;
    match += 4;
    if (out.size() + match > expected) return false;
    for (std::size_t k = 0; k < match; ++k) out.push_back(out[out.size() - offset]);
  }
  return out.size() == expected;
}

// zstd through the system's libzstd.so.1, when there is one (the driver links nothing but the
// C and C++ runtimes).
struct Zstd {
  using Decompress = std::size_t (*)(void*, std::size_t, const void*, std::size_t);
  using IsError = unsigned (*)(std::size_t);
  Decompress decompress = nullptr;
  IsError is_error = nullptr;

  static const Zstd& get() {
    static const Zstd z = [] {
      Zstd found;
      if (void* lib = dlopen("libzstd.so.1", RTLD_NOW | RTLD_LOCAL)) {
        found.decompress = reinterpret_cast<Decompress>(dlsym(lib, "ZSTD_decompress"));
        found.is_error = reinterpret_cast<IsError>(dlsym(lib, "ZSTD_isError"));
        if (found.decompress == nullptr || found.is_error == nullptr) found = Zstd{};
      }
      return found;
    }();
    return z;
  }
};

struct Entry {
  int kind = 0;  // 1 PTX, 2 ELF, 8 LTO-IR
  int arch = 0;
  const unsigned char* payload = nullptr;
  std::size_t size = 0;  // stored bytes
  unsigned long long flags = 0;
  std::size_t uncompressed = 0;
};

// "PTX for compute_90", "ELF for sm_80", "LTO-IR for lto_100": for messages.
std::string describe(const Entry& e) {
  const std::string arch = std::to_string(e.arch);
  switch (e.kind) {
    case 1: return "PTX for compute_" + arch;
    case 2: return "ELF for sm_" + arch;
    case kEntryLtoIr: return "LTO-IR for lto_" + arch;
    default: return "an entry of kind " + std::to_string(e.kind) + " for " + arch;
  }
}

bool compatible_elf(int arch) noexcept {
  return arch / 10 == kDeviceArch / 10 && arch % 10 <= kDeviceArch % 10;
}

// The entries of the fatbin at `data` (size SIZE_MAX: unknown) and where it ends (`total`:
// header and entries); false with why it is invalid.
bool read_entries(const unsigned char* data, std::size_t size, std::vector<Entry>& entries,
                  std::size_t& total, std::string& why) {
  const std::size_t limit = size == SIZE_MAX ? kMaxUnknownExtent : size;
  if (limit < 16 || read<std::uint32_t>(data) != kFatbinMagic) {
    why = "bad header";
    return false;
  }
  const std::size_t header = read<std::uint16_t>(data + 6);
  const auto body = read<std::uint64_t>(data + 8);
  if (header < 16 || header > limit || body > limit - header) {
    why = "bad size";
    return false;
  }
  total = header + body;
  for (std::size_t off = header; off < total;) {
    if (total - off < kEntryHeaderMin) {
      why = "truncated entry at " + std::to_string(off);
      return false;
    }
    const unsigned char* e = data + off;
    Entry entry;
    entry.kind = read<std::uint16_t>(e);
    const std::size_t entry_header = read<std::uint32_t>(e + 4);
    const auto padded = read<std::uint64_t>(e + 8);
    if (entry_header < kEntryHeaderMin || entry_header > total - off ||
        padded > total - off - entry_header) {
      why = "entry at " + std::to_string(off) + " overruns the fatbin";
      return false;
    }
    const std::size_t compressed = read<std::uint32_t>(e + 0x10);
    entry.arch = static_cast<int>(read<std::uint32_t>(e + 0x1c));
    entry.flags = read<std::uint64_t>(e + 0x28);
    entry.uncompressed = read<std::uint64_t>(e + 0x38);
    entry.payload = e + entry_header;
    const bool packed = (entry.flags & (kFlagLz4 | kFlagZstd)) != 0;
    entry.size = packed ? std::min<std::size_t>(compressed, padded) : padded;
    entries.push_back(entry);
    off += entry_header + padded;
  }
  return true;
}

}  // namespace

bool decompress(unsigned long long flags, const unsigned char* data, std::size_t size,
                std::size_t expected, std::vector<unsigned char>& out, std::string& why) {
  // An entry's declared size is checked before anything is allocated: neither LZ4 (at most
  // 255:1) nor zstd on code reaches this ratio, so a larger claim is a corrupt header.
  constexpr std::size_t kMaxRatio = 1024;
  if (expected > (size + 64) * kMaxRatio) {
    why = "it claims " + std::to_string(expected) + " bytes uncompressed from " +
          std::to_string(size) + " compressed bytes";
    return false;
  }
  if ((flags & kFlagLz4) != 0) {
    if (lz4_block(data, size, expected, out)) return true;
    why = "its LZ4 data is corrupt";
    return false;
  }
  if ((flags & kFlagZstd) != 0) {
    const Zstd& z = Zstd::get();
    if (z.decompress == nullptr) {
      why = "it is zstd-compressed and libzstd.so.1 is not available";
      return false;
    }
    out.assign(expected, 0);
    const std::size_t n = z.decompress(out.data(), out.size(), data, size);
    if (z.is_error(n) != 0 || n != expected) {
      why = "its zstd data is corrupt";
      return false;
    }
    return true;
  }
  why = "it uses an unknown compression";
  return false;
}

namespace {

// The bytes of entry `e`, decompressed into `plain` when it is compressed; false with why not.
bool entry_bytes(const Entry& e, std::vector<unsigned char>& plain, std::string_view& bytes,
                 std::string& why) {
  if ((e.flags & (kFlagLz4 | kFlagZstd)) == 0) {
    bytes = {reinterpret_cast<const char*>(e.payload), e.size};
    return true;
  }
  if (!decompress(e.flags, e.payload, e.size, e.uncompressed, plain, why)) return false;
  bytes = {reinterpret_cast<const char*>(plain.data()), plain.size()};
  return true;
}

// A PTX entry's text: its bytes up to the first NUL (entries are padded with zeros).
std::string_view ptx_text(std::string_view bytes) { return bytes.substr(0, bytes.find('\0')); }

// A cubin was chosen: the interpreter runs the fatbin's best PTX entry for it, when it has one
// that decodes (its kernels and globals carry the same names).
void attach_ptx(const std::vector<const Entry*>& ptx, const LoadOptions& options, Image& out) {
  for (const Entry* e : ptx) {
    std::vector<unsigned char> plain;
    std::string_view bytes;
    std::string why;
    if (!entry_bytes(*e, plain, bytes, why)) continue;
    Image parsed;
    if (parse_ptx(ptx_text(bytes), options, parsed).error == ImageError::none) {
      out.program = std::move(parsed.program);
      return;
    }
  }
}

}  // namespace

LoadLog parse_fatbin(const unsigned char* data, std::size_t size, const LoadOptions& options,
                     Image& out) {
  LoadLog log;
  const auto invalid = [&log](std::string why) {
    log.error = ImageError::not_an_image;
    log.error_log = "invalid fatbin: " + std::move(why);
    return log;
  };
  std::vector<Entry> entries;
  std::size_t total = 0;
  std::string bad;
  if (!read_entries(data, size, entries, total, bad)) return invalid(std::move(bad));

  // ELF entries for the device first, then PTX entries, newest first.
  std::vector<const Entry*> order;
  for (const Entry& e : entries) {
    if (e.kind == 2 && compatible_elf(e.arch)) order.push_back(&e);
  }
  std::vector<const Entry*> ptx;
  for (const Entry& e : entries) {
    if (e.kind == 1 && e.arch <= kDeviceArch) ptx.push_back(&e);
  }
  std::stable_sort(ptx.begin(), ptx.end(),
                   [](const Entry* a, const Entry* b) { return a->arch > b->arch; });
  order.insert(order.end(), ptx.begin(), ptx.end());
  if (order.empty()) {
    for (const Entry& e : entries) {
      if (e.kind == kEntryLtoIr && e.arch <= kDeviceArch) {
        log.error = ImageError::not_supported;
        log.error_log = "the fatbin's code for the device is LTO-IR only (lto_" +
                        std::to_string(e.arch) + "): it needs nvJitLink to become PTX";
        log.ltoir = {data, total};
        log.ltoir_name = "fatbin with LTO-IR for lto_" + std::to_string(e.arch);
        return log;
      }
    }
    log.error = ImageError::no_binary_for_gpu;
    std::string found;
    for (const Entry& e : entries) {
      found += std::string(found.empty() ? "" : ", ") + describe(e);
    }
    log.error_log = "the fatbin has no code for sm_" + std::to_string(kDeviceArch) + " (it has " +
                    (found.empty() ? std::string("nothing") : found) + ")";
    return log;
  }
  std::string passed_over;
  LoadLog last;
  for (const Entry* e : order) {
    std::vector<unsigned char> plain;
    std::string_view bytes;
    std::string why;
    if (!entry_bytes(*e, plain, bytes, why)) {
      passed_over += std::string(passed_over.empty() ? "" : "; ") + (e->kind == 1 ? "PTX" : "ELF") +
                     " entry for sm_" + std::to_string(e->arch) + " passed over: " + why;
      continue;
    }
    if (e->kind == 2) {
      last = parse_cubin(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), out);
    } else {
      last = parse_ptx(ptx_text(bytes), options, out);
    }
    if (last.error == ImageError::none) {
      out.from_fatbin = true;
      if (e->kind == 2) attach_ptx(ptx, options, out);
      if (!passed_over.empty()) {
        last.info_log += (last.info_log.empty() ? "" : "\n") + ("swcuda: " + passed_over);
      }
      return last;
    }
  }
  if (last.error == ImageError::none) {  // every entry was passed over
    log.error = ImageError::not_an_image;
    log.error_log = "no usable entry in the fatbin: " + passed_over;
    return log;
  }
  return last;
}

FatbinCode fatbin_code(const unsigned char* data, std::size_t size) {
  FatbinCode out;
  std::vector<Entry> entries;
  std::size_t total = 0;
  if (!read_entries(data, size, entries, total, out.error)) {
    out.error = "invalid fatbin: " + out.error;
    return out;
  }
  const Entry* best = nullptr;
  for (const Entry& e : entries) {
    if (e.kind == 2) out.has_elf = true;
    if (e.kind == kEntryLtoIr) out.has_ltoir = true;
    if (e.kind == 1 && e.arch <= kDeviceArch && (best == nullptr || e.arch > best->arch)) best = &e;
  }
  if (best == nullptr) return out;
  std::vector<unsigned char> plain;
  std::string_view bytes;
  std::string why;
  if (!entry_bytes(*best, plain, bytes, why)) {
    out.error = "the PTX entry for compute_" + std::to_string(best->arch) + " is unusable: " + why;
    return out;
  }
  out.ptx = ptx_text(bytes);
  out.ptx_arch = best->arch;
  return out;
}

}  // namespace swcu
