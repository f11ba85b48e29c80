// ELF cubins: kernels from the symbol table, their parameter layouts and attributes from the
// .nv.info sections, and globals from the .nv.global / .nv.constantN sections.
//
// A kernel is an STT_FUNC symbol, not local, defined in the section ".text.<name>" (and marked
// as an entry, st_other & 0x10, when the image marks any symbol so). Its ".nv.info.<name>"
// section holds attribute records: one byte format, one byte attribute, then a 16-bit value,
// or (format 4) a 16-bit size and that many bytes. EIATTR_KPARAM_INFO (0x17) records give each
// parameter's ordinal, offset and size; a kernel without a .nv.info.<name> section has no
// known layout.
#include <elf.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "module/image.hpp"

namespace swcu {
namespace {

constexpr std::uint16_t kMachineCuda = 190;  // EM_CUDA
constexpr unsigned char kEntryFlag = 0x10;   // st_other of kernel entry points

// Attribute records (EIATTR_*) the driver reads.
constexpr unsigned char kMaxThreads = 0x05;
constexpr unsigned char kReqNtid = 0x10;
constexpr unsigned char kFrameSize = 0x11;
constexpr unsigned char kKparamInfo = 0x17;
constexpr unsigned char kRegCount = 0x2f;
constexpr unsigned char kCtaPerCluster = 0x3d;
constexpr unsigned char kExplicitCluster = 0x3e;

// Reserved shared memory that sm_90 cubins fold into every .nv.shared.<kernel> section.
constexpr std::size_t kReservedShared = 1024;

// Offsets this large in an image of unknown size mean garbage.
constexpr std::size_t kMaxUnknownExtent = std::size_t{1} << 30;

template <class T>
T read(const unsigned char* p) noexcept {
  T value;
  std::memcpy(&value, p, sizeof value);
  return value;
}

class Elf {
 public:
  Elf(const unsigned char* data, std::size_t size) : data_(data), size_(size) {}

  // Checks the header and section table; false with `why`.
  bool open(std::string& why) {
    if (!within(0, sizeof(Elf64_Ehdr))) return bad(why, "truncated ELF header");
    header_ = read<Elf64_Ehdr>(data_);
    if (header_.e_ident[EI_CLASS] != ELFCLASS64 || header_.e_ident[EI_DATA] != ELFDATA2LSB) {
      return bad(why, "not a 64-bit little-endian ELF image");
    }
    if (header_.e_machine != kMachineCuda) return bad(why, "an ELF image, but not a CUDA cubin");
    if (header_.e_shnum == 0 || header_.e_shentsize != sizeof(Elf64_Shdr) ||
        header_.e_shstrndx >= header_.e_shnum ||
        !within(header_.e_shoff, std::size_t{header_.e_shnum} * sizeof(Elf64_Shdr))) {
      return bad(why, "the cubin's section table is invalid");
    }
    for (std::size_t i = 0; i < header_.e_shnum; ++i) {
      auto s = read<Elf64_Shdr>(data_ + header_.e_shoff + i * sizeof(Elf64_Shdr));
      if (s.sh_type == SHT_NULL) {
        // An inactive header: its other members are undefined (ELF gABI), so it has no bytes.
        s.sh_offset = 0;
        s.sh_size = 0;
      } else if (s.sh_type != SHT_NOBITS && !within(s.sh_offset, s.sh_size)) {
        return bad(why, "section " + std::to_string(i) + " lies outside the cubin");
      }
      sections_.push_back(s);
    }
    // Tables that other sections name must be sections with bytes in the file.
    const auto has_bytes = [this](std::size_t i) {
      return i < sections_.size() && sections_[i].sh_type != SHT_NULL &&
             sections_[i].sh_type != SHT_NOBITS;
    };
    if (!has_bytes(header_.e_shstrndx)) {
      return bad(why, "the cubin's section-name table (e_shstrndx " +
                          std::to_string(header_.e_shstrndx) + ") is not a section with contents");
    }
    for (std::size_t i = 0; i < sections_.size(); ++i) {
      const std::size_t link = sections_[i].sh_link;
      if (link != 0 && !has_bytes(link)) {  // 0: no link
        return bad(why, "section " + std::to_string(i) + " links to section " +
                            std::to_string(link) + ", which is not a section with contents");
      }
    }
    const Elf64_Shdr& names = sections_[header_.e_shstrndx];
    for (std::size_t i = 0; i < sections_.size(); ++i) {
      section_names_.push_back(string_at(names, sections_[i].sh_name));
      section_index_.emplace(section_names_.back(), i);  // the first of a name wins
    }
    return true;
  }

  [[nodiscard]] const Elf64_Ehdr& header() const noexcept { return header_; }
  [[nodiscard]] std::size_t count() const noexcept { return sections_.size(); }
  [[nodiscard]] const Elf64_Shdr& section(std::size_t i) const noexcept { return sections_[i]; }
  [[nodiscard]] std::string_view name(std::size_t i) const noexcept { return section_names_[i]; }
  [[nodiscard]] const unsigned char* bytes(const Elf64_Shdr& s) const noexcept {
    return data_ + s.sh_offset;
  }
  // The index of the first section named `name`, or count() (a hash lookup: a cubin with many
  // kernels looks up a few sections per kernel).
  [[nodiscard]] std::size_t find(std::string_view name) const noexcept {
    const auto it = section_index_.find(name);
    return it == section_index_.end() ? count() : it->second;
  }
  // A NUL-terminated string inside a string table section ("" when out of range).
  [[nodiscard]] std::string_view string_at(const Elf64_Shdr& table, std::size_t offset) const {
    if (table.sh_type == SHT_NOBITS || offset >= table.sh_size) return {};
    const char* begin = reinterpret_cast<const char*>(data_ + table.sh_offset + offset);
    const std::size_t room = table.sh_size - offset;
    return {begin, strnlen(begin, room)};
  }

 private:
  bool within(std::size_t offset, std::size_t length) const noexcept {
    const std::size_t limit = size_ == SIZE_MAX ? kMaxUnknownExtent : size_;
    return offset <= limit && length <= limit - offset;
  }
  static bool bad(std::string& why, std::string text) {
    why = std::move(text);
    return false;
  }

  const unsigned char* data_;
  std::size_t size_;
  Elf64_Ehdr header_{};
  std::vector<Elf64_Shdr> sections_;
  std::vector<std::string_view> section_names_;
  std::unordered_map<std::string_view, std::size_t> section_index_;
};

// Calls f(attribute, value bytes, value size) for each record of a .nv.info section. 16-bit
// values are passed as 2 bytes.
template <class F>
void for_each_record(const unsigned char* p, std::size_t size, F f) {
  std::size_t pos = 0;
  while (pos + 4 <= size) {
    const unsigned char format = p[pos];
    const unsigned char attribute = p[pos + 1];
    if (format == 4) {
      const std::size_t n = read<std::uint16_t>(p + pos + 2);
      if (pos + 4 + n > size) return;
      f(attribute, p + pos + 4, n);
      pos += 4 + n;
    } else if (format >= 1 && format <= 3) {
      f(attribute, p + pos + 2, std::size_t{2});
      pos += 4;
    } else {
      return;  // unknown format: the rest cannot be read
    }
  }
}

bool is_global_section(std::string_view name, bool& constant) noexcept {
  constant = false;
  if (name == ".nv.global" || name == ".nv.global.init") return true;
  if (name.starts_with(".nv.constant") && name.size() > 12) {
    const std::string_view bank = name.substr(12);
    // .nv.constant0.<kernel> holds parameters; banks without a suffix are the module's.
    if (std::all_of(bank.begin(), bank.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
        bank != "0") {
      constant = true;
      return true;
    }
  }
  return false;
}

void read_kernel_info(const Elf& elf, std::size_t info, KernelDesc& k) {
  const Elf64_Shdr& s = elf.section(info);
  if (s.sh_type == SHT_NOBITS) return;
  struct Param {
    std::size_t ordinal, offset, size;
  };
  std::vector<Param> params;
  for_each_record(
      elf.bytes(s), s.sh_size, [&](unsigned char attribute, const unsigned char* v, std::size_t n) {
        if (attribute == kKparamInfo && n >= 12) {
          const auto word = read<std::uint32_t>(v + 8);
          params.push_back(
              {read<std::uint16_t>(v + 4), read<std::uint16_t>(v + 6), (word >> 18) & 0x3fff});
        } else if ((attribute == kMaxThreads || attribute == kReqNtid) && n >= 12) {
          const unsigned long long threads = 1ULL * read<std::uint32_t>(v) *
                                             read<std::uint32_t>(v + 4) *
                                             read<std::uint32_t>(v + 8);
          if (threads > 0 && threads <= 1024 && (k.max_threads == 0 || threads < k.max_threads)) {
            k.max_threads = static_cast<unsigned>(threads);
          }
        } else if (attribute == kCtaPerCluster && n >= 12) {
          for (std::size_t i = 0; i < 3; ++i) k.cluster[i] = read<std::uint32_t>(v + 4 * i);
        } else if (attribute == kExplicitCluster) {
          k.explicit_cluster = true;
        }
      });
  std::sort(params.begin(), params.end(),
            [](const Param& a, const Param& b) { return a.ordinal < b.ordinal; });
  k.layout_known = true;
  std::size_t end = 0;  // of the previous parameter
  for (std::size_t i = 0; i < params.size(); ++i) {
    const bool overlaps = static_cast<std::size_t>(params[i].offset) < end;
    end = static_cast<std::size_t>(params[i].offset) + static_cast<std::size_t>(params[i].size);
    if (params[i].ordinal != i || overlaps) {
      k.layout_known = false;  // ordinals must be 0..n-1, in increasing, disjoint offsets
      k.params.clear();
      k.params_size = 0;
      return;
    }
    k.params.push_back({params[i].offset, params[i].size});
    k.params_size = std::max(k.params_size, params[i].offset + params[i].size);
  }
}

}  // namespace

int cubin_arch(const unsigned char* data, std::size_t size) noexcept {
  if (size < sizeof(Elf64_Ehdr)) return 0;
  const auto h = read<Elf64_Ehdr>(data);
  if (h.e_machine != kMachineCuda) return 0;
  // From ABI version 8 (CUDA 12) the architecture is in bits 8..15, before in bits 0..7.
  const unsigned arch = h.e_ident[EI_ABIVERSION] >= 8 ? (h.e_flags >> 8) & 0xff : h.e_flags & 0xff;
  return static_cast<int>(arch);
}

LoadLog parse_cubin(const unsigned char* data, std::size_t size, Image& out) {
  out = Image{};
  out.code = ImageCode::cubin;
  LoadLog log;
  Elf elf(data, size);
  if (!elf.open(log.error_log)) {
    log.error = ImageError::not_an_image;
    return log;
  }
  const int arch = cubin_arch(data, sizeof(Elf64_Ehdr));
  if (arch != 0 && (arch / 10 != kDeviceArch / 10 || arch % 10 > kDeviceArch % 10)) {
    log.error = ImageError::no_binary_for_gpu;
    log.error_log = "the cubin is for sm_" + std::to_string(arch) + "; the device is sm_" +
                    std::to_string(kDeviceArch);
    return log;
  }
  out.arch = out.virtual_arch = arch != 0 ? arch : kDeviceArch;

  std::size_t symtab = elf.count();
  for (std::size_t i = 0; i < elf.count(); ++i) {
    if (elf.section(i).sh_type == SHT_SYMTAB) symtab = i;
  }
  if (symtab == elf.count()) return log;  // no symbols: no kernels, no globals
  const Elf64_Shdr& symbols = elf.section(symtab);
  if (symbols.sh_link >= elf.count() || elf.section(symbols.sh_link).sh_type != SHT_STRTAB ||
      symbols.sh_entsize != sizeof(Elf64_Sym)) {
    log.error = ImageError::not_an_image;
    log.error_log = "the cubin's symbol table is invalid";
    return log;
  }
  const Elf64_Shdr& strings = elf.section(symbols.sh_link);
  const std::size_t n = symbols.sh_size / sizeof(Elf64_Sym);
  std::vector<Elf64_Sym> syms(n);
  bool any_entry = false;
  for (std::size_t i = 0; i < n; ++i) {
    syms[i] = read<Elf64_Sym>(elf.bytes(symbols) + i * sizeof(Elf64_Sym));
    any_entry = any_entry || (ELF64_ST_TYPE(syms[i].st_info) == STT_FUNC &&
                              (syms[i].st_other & kEntryFlag) != 0);
  }
  std::map<std::size_t, std::size_t> kernel_of_symbol;  // symbol index -> kernels index
  const bool reserved_shared = elf.find(".nv.shared.reserved.0") != elf.count();
  std::unordered_set<std::string_view> kernel_names;  // linear time for many symbols
  std::unordered_set<std::string_view> global_names;
  for (std::size_t i = 0; i < n; ++i) {
    const Elf64_Sym& sym = syms[i];
    const std::string_view name = elf.string_at(strings, sym.st_name);
    if (name.empty() || sym.st_shndx == SHN_UNDEF || sym.st_shndx >= elf.count()) continue;
    const std::string_view section = elf.name(sym.st_shndx);
    const int type = ELF64_ST_TYPE(sym.st_info);
    if (type == STT_FUNC) {
      if (ELF64_ST_BIND(sym.st_info) == STB_LOCAL) continue;
      if (any_entry && (sym.st_other & kEntryFlag) == 0) continue;  // a device function
      if (section.size() != 6 + name.size() || !section.starts_with(".text.") ||
          !section.ends_with(name)) {
        continue;
      }
      if (!kernel_names.insert(name).second) continue;
      KernelDesc k;
      k.name = std::string(name);
      k.layout_known = false;
      const std::string suffix(name);
      if (const std::size_t info = elf.find(".nv.info." + suffix); info != elf.count()) {
        read_kernel_info(elf, info, k);
      }
      if (const std::size_t shared = elf.find(".nv.shared." + suffix); shared != elf.count()) {
        const std::size_t bytes = elf.section(shared).sh_size;
        k.static_shared = reserved_shared ? bytes - std::min(bytes, kReservedShared) : bytes;
      }
      kernel_of_symbol[i] = out.kernels.size();
      out.kernels.push_back(std::move(k));
    } else if (type == STT_OBJECT) {
      bool constant = false;
      if (!is_global_section(section, constant) || !global_names.insert(name).second) continue;
      const Elf64_Shdr& s = elf.section(sym.st_shndx);
      GlobalDesc g;
      g.name = std::string(name);
      g.size = sym.st_size;
      g.align = std::max<std::size_t>(1, s.sh_addralign);
      g.constant = constant;
      if (s.sh_type == SHT_PROGBITS && sym.st_value <= s.sh_size &&
          sym.st_size <= s.sh_size - sym.st_value) {
        const unsigned char* p = elf.bytes(s) + sym.st_value;
        if (std::any_of(p, p + sym.st_size, [](unsigned char c) { return c != 0; })) {
          g.init.assign(p, p + sym.st_size);
        }
      }
      if (constant) out.const_bytes += g.size;
      out.globals.push_back(std::move(g));
    }
  }
  // Per-kernel records of the module-wide .nv.info section: register count, frame size.
  if (const std::size_t info = elf.find(".nv.info"); info != elf.count()) {
    const Elf64_Shdr& s = elf.section(info);
    if (s.sh_type != SHT_NOBITS) {
      for_each_record(elf.bytes(s), s.sh_size,
                      [&](unsigned char attribute, const unsigned char* v, std::size_t len) {
                        if ((attribute != kRegCount && attribute != kFrameSize) || len < 8) return;
                        const auto it = kernel_of_symbol.find(read<std::uint32_t>(v));
                        if (it == kernel_of_symbol.end()) return;
                        KernelDesc& k = out.kernels[it->second];
                        const auto value = read<std::uint32_t>(v + 4);
                        if (attribute == kRegCount) {
                          k.num_regs = static_cast<int>(value);
                        } else {
                          k.local_bytes = value;
                        }
                      });
    }
  }
  return log;
}

}  // namespace swcu
