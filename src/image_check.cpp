// Checking cubins, fatbins and LTO-IR containers against their size (image_check.hpp). Every offset
// and length is compared without overflow (within()), and every message says where the image goes
// wrong.
#include "image_check.hpp"

#include <elf.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <string_view>
#include <utility>

namespace cuwrap::detail {
namespace {

constexpr std::uint32_t kElfMagic = 0x464c457fU;      // "\x7fELF", little-endian
constexpr std::uint32_t kFatbinMagic = 0xba55ed50U;   // fatbin data
constexpr std::uint32_t kWrapperMagic = 0x466243b1U;  // __fatBinC_Wrapper_t (in memory only)
constexpr std::uint32_t kLtoIrMagic = 0x7f4e43edU;    // the LTO-IR container (NVVM IR, -dlto)
constexpr std::size_t kLtoIrHeader = 24;              // magic, versions, three offsets
constexpr std::size_t kFatbinHeader = 16;             // magic, version, header size, entries' size
constexpr std::size_t kFatbinEntryHeader = 64;        // the fields an entry header holds at least
constexpr std::uint64_t kCompressedFlags = 0x2000 | 0x8000;  // LZ4, zstd
constexpr unsigned kEntryElf = 2;

using problem = std::optional<std::string>;
using bytes = std::span<const std::byte>;

template <class T>
T read(bytes image, std::size_t offset) noexcept {
  T value;
  std::memcpy(&value, image.data() + offset, sizeof value);
  return value;
}

// [offset, offset + length) lies within `size` bytes.
bool within(std::uint64_t offset, std::uint64_t length, std::uint64_t size) noexcept {
  return offset <= size && length <= size - offset;
}

std::string num(std::uint64_t value) { return std::to_string(value); }

std::string entries(std::uint64_t count) {
  return num(count) + (count == 1 ? " entry" : " entries");
}

// "a 4096-byte", "an 8-byte", "an 11-byte".
std::string sized(std::uint64_t size) {
  const std::string digits = num(size);
  const bool eleven_or_eighteen =
      digits.size() % 3 == 2 && (digits.starts_with("11") || digits.starts_with("18"));
  return (digits.front() == '8' || eleven_or_eighteen ? "an " : "a ") + digits + "-byte";
}

// Where [offset, offset + length) ends, saturated: for messages.
std::uint64_t end_of(std::uint64_t offset, std::uint64_t length) noexcept {
  return length > std::numeric_limits<std::uint64_t>::max() - offset ? length : offset + length;
}

// Checks an ELF cubin. `what` names it in messages ("cubin", "fatbin entry 2 (ELF for sm_90)"),
// `unit` is what its bytes are ("image", "payload").
class elf_check {
 public:
  elf_check(bytes image, std::string what, const char* unit)
      : image_{image}, what_{std::move(what)}, unit_{unit} {}

  problem run() {
    if (image_.size() < sizeof(Elf64_Ehdr)) {
      return fail(sized(image_.size()) + " " + unit_ + " is shorter than the " +
                  num(sizeof(Elf64_Ehdr)) + "-byte ELF header");
    }
    header_ = read<Elf64_Ehdr>(image_, 0);
    if (header_.e_ident[EI_CLASS] != ELFCLASS64 || header_.e_ident[EI_DATA] != ELFDATA2LSB) {
      return fail("not a 64-bit little-endian ELF (class " + num(header_.e_ident[EI_CLASS]) +
                  ", data " + num(header_.e_ident[EI_DATA]) + ")");
    }
    if (auto p = program_headers()) return p;
    if (auto p = section_table()) return p;
    for (std::size_t i = 0; i < header_.e_shnum; ++i) {
      if (auto p = section(i)) return p;
    }
    return {};
  }

 private:
  problem fail(const std::string& why) const { return what_ + ": " + why; }

  std::string past_end(std::uint64_t offset, std::uint64_t length) const {
    return "extends to byte " + num(end_of(offset, length)) + " of " + sized(image_.size()) + " " +
           unit_;
  }

  problem program_headers() const {
    if (header_.e_phnum == 0) return {};
    if (header_.e_phnum == PN_XNUM) {
      return fail("extended program header numbering (e_phnum 0xffff) is not supported");
    }
    if (header_.e_phentsize != sizeof(Elf64_Phdr)) {
      return fail("program header size (e_phentsize) is " + num(header_.e_phentsize) + ", not " +
                  num(sizeof(Elf64_Phdr)));
    }
    const std::uint64_t table = std::uint64_t{header_.e_phnum} * sizeof(Elf64_Phdr);
    if (!within(header_.e_phoff, table, image_.size())) {
      return fail("the program header table (" + entries(header_.e_phnum) + " at byte " +
                  num(header_.e_phoff) + ") " + past_end(header_.e_phoff, table));
    }
    for (std::size_t i = 0; i < header_.e_phnum; ++i) {
      const auto segment = read<Elf64_Phdr>(image_, header_.e_phoff + i * sizeof(Elf64_Phdr));
      if (!within(segment.p_offset, segment.p_filesz, image_.size())) {
        return fail("segment " + num(i) + " " + past_end(segment.p_offset, segment.p_filesz));
      }
    }
    return {};
  }

  // The section header table, and the section-name table every message below relies on.
  problem section_table() {
    if (header_.e_shnum == 0) return fail("no section header table (e_shnum is 0)");
    if (header_.e_shentsize != sizeof(Elf64_Shdr)) {
      return fail("section header size (e_shentsize) is " + num(header_.e_shentsize) + ", not " +
                  num(sizeof(Elf64_Shdr)));
    }
    const std::uint64_t table = std::uint64_t{header_.e_shnum} * sizeof(Elf64_Shdr);
    if (!within(header_.e_shoff, table, image_.size())) {
      return fail("the section header table (" + entries(header_.e_shnum) + " at byte " +
                  num(header_.e_shoff) + ") " + past_end(header_.e_shoff, table));
    }
    if (header_.e_shstrndx == SHN_UNDEF || header_.e_shstrndx >= header_.e_shnum) {
      return fail("e_shstrndx " + num(header_.e_shstrndx) +
                  " is not a section-name table; the image has " + num(header_.e_shnum) +
                  " sections");
    }
    names_ = header(header_.e_shstrndx);
    if (names_.sh_type != SHT_STRTAB) {
      return fail("the section-name table (section " + num(header_.e_shstrndx) +
                  ") is not a string table (type " + num(names_.sh_type) + ")");
    }
    const std::string label = "the section-name table (section " + num(header_.e_shstrndx) + ")";
    if (auto p = string_table(names_, label)) return p;
    names_ok_ = true;
    return {};
  }

  // A string table lies within the image and ends with a NUL, so no string read from it runs on.
  problem string_table(const Elf64_Shdr& s, const std::string& label) const {
    if (!within(s.sh_offset, s.sh_size, image_.size())) {
      return fail(label + " " + past_end(s.sh_offset, s.sh_size));
    }
    if (s.sh_size > 0 && read<char>(image_, s.sh_offset + s.sh_size - 1) != '\0') {
      return fail(label + " does not end with a NUL byte");
    }
    return {};
  }

  Elf64_Shdr header(std::size_t index) const {
    return read<Elf64_Shdr>(image_, header_.e_shoff + index * sizeof(Elf64_Shdr));
  }

  std::string describe(std::size_t index, const Elf64_Shdr& s) const {
    std::string text = "section " + num(index);
    if (names_ok_ && s.sh_name < names_.sh_size) {
      const char* name =
          reinterpret_cast<const char*>(image_.data() + names_.sh_offset + s.sh_name);
      text += " ('" + std::string{name} + "')";  // the table ends with a NUL
    }
    return text;
  }

  problem section(std::size_t index) const {
    const Elf64_Shdr s = header(index);
    const std::string label = describe(index, s);
    if (s.sh_name >= names_.sh_size && s.sh_name != 0) {
      return fail(label + ": its name (byte " + num(s.sh_name) +
                  " of the section-name table) lies past the table's " + num(names_.sh_size) +
                  " bytes");
    }
    if (s.sh_type != SHT_NOBITS && !within(s.sh_offset, s.sh_size, image_.size())) {
      return fail(label + " " + past_end(s.sh_offset, s.sh_size));
    }
    if (s.sh_link >= header_.e_shnum) {
      return fail(label + " links to section " + num(s.sh_link) + " (sh_link); the image has " +
                  num(header_.e_shnum) + " sections");
    }
    if (s.sh_type == SHT_STRTAB) return string_table(s, "the string table in " + label);
    if (s.sh_type == SHT_SYMTAB || s.sh_type == SHT_DYNSYM) return symbols(label, s);
    if ((s.sh_type == SHT_REL || s.sh_type == SHT_RELA) && s.sh_info >= header_.e_shnum) {
      return fail(label + " relocates section " + num(s.sh_info) + " (sh_info); the image has " +
                  num(header_.e_shnum) + " sections");
    }
    return {};
  }

  // A symbol table: whole entries, names inside its string table, sections that exist.
  problem symbols(const std::string& label, const Elf64_Shdr& s) const {
    if (s.sh_entsize != sizeof(Elf64_Sym) || s.sh_size % sizeof(Elf64_Sym) != 0) {
      return fail(label + ", a symbol table, has " + num(s.sh_size) + " bytes of " +
                  num(s.sh_entsize) + "-byte entries; ELF64 symbols are " + num(sizeof(Elf64_Sym)) +
                  " bytes");
    }
    const Elf64_Shdr strings = header(s.sh_link);
    if (strings.sh_type != SHT_STRTAB) {
      return fail(label + ", a symbol table, links to section " + num(s.sh_link) +
                  ", which is not a string table");
    }
    for (std::size_t i = 0; i < s.sh_size / sizeof(Elf64_Sym); ++i) {
      const auto sym = read<Elf64_Sym>(image_, s.sh_offset + i * sizeof(Elf64_Sym));
      if (sym.st_name != 0 && sym.st_name >= strings.sh_size) {
        return fail("symbol " + num(i) + " of " + label + " names byte " + num(sym.st_name) +
                    " of " + sized(strings.sh_size) + " string table");
      }
      if (sym.st_shndx >= header_.e_shnum && sym.st_shndx < SHN_LORESERVE) {
        return fail("symbol " + num(i) + " of " + label + " is in section " + num(sym.st_shndx) +
                    "; the image has " + num(header_.e_shnum) + " sections");
      }
    }
    return {};
  }

  bytes image_;
  std::string what_;
  const char* unit_;
  Elf64_Ehdr header_{};
  Elf64_Shdr names_{};
  bool names_ok_ = false;
};

problem fatbin_entry(bytes image, std::size_t index, std::size_t offset, std::uint64_t total) {
  const std::string label = "fatbin: entry " + num(index) + " at byte " + num(offset);
  if (total - offset < kFatbinEntryHeader) {
    return label + ": its header is cut short (" + num(total - offset) +
           " bytes left of at least " + num(kFatbinEntryHeader) + ")";
  }
  const std::uint64_t header = read<std::uint32_t>(image, offset + 4);
  const auto payload = read<std::uint64_t>(image, offset + 8);
  if (header < kFatbinEntryHeader) {
    return label + ": header size " + num(header) + " is less than " + num(kFatbinEntryHeader);
  }
  if (!within(offset, header, total) || !within(offset + header, payload, total)) {
    return label + " (a " + num(header) + "-byte header and " + num(payload) +
           " bytes of code) extends to byte " + num(end_of(offset + header, payload)) +
           "; the fatbin ends at byte " + num(total);
  }
  const auto flags = read<std::uint64_t>(image, offset + 0x28);
  const std::uint64_t compressed = read<std::uint32_t>(image, offset + 0x10);
  if ((flags & kCompressedFlags) != 0 && (compressed == 0 || compressed > payload)) {
    return label + " is compressed to " + num(compressed) + " bytes, which is not within its " +
           num(payload) + "-byte payload";
  }
  if (read<std::uint16_t>(image, offset) == kEntryElf && (flags & kCompressedFlags) == 0) {
    const std::uint32_t arch = read<std::uint32_t>(image, offset + 0x1c);
    return elf_check{image.subspan(offset + header, payload),
                     "fatbin: entry " + num(index) + " (ELF for sm_" + num(arch) + ")", "payload"}
        .run();
  }
  return {};
}

problem fatbin(bytes image) {
  if (image.size() < kFatbinHeader) {
    return "fatbin: " + sized(image.size()) + " image is shorter than the " + num(kFatbinHeader) +
           "-byte fatbin header";
  }
  const std::uint64_t header = read<std::uint16_t>(image, 6);
  const auto body = read<std::uint64_t>(image, 8);
  if (header < kFatbinHeader) {
    return "fatbin: header size " + num(header) + " is less than " + num(kFatbinHeader);
  }
  if (!within(header, body, image.size())) {
    return "fatbin: its entries (" + num(body) + " bytes after the " + num(header) +
           "-byte header) extend to byte " + num(end_of(header, body)) + " of " +
           sized(image.size()) + " image";
  }
  const std::uint64_t total = header + body;
  std::size_t index = 0;
  for (std::uint64_t offset = header; offset < total; ++index) {
    if (auto p = fatbin_entry(image, index, offset, total)) return p;
    offset += read<std::uint32_t>(image, offset + 4) + read<std::uint64_t>(image, offset + 8);
  }
  return {};
}

// The LTO-IR container: a 24-byte header whose offsets (u16 at 12: the options; u32 at 16: their
// data; u32 at 20: the IR) are in order, and an IR that starts inside the image. The IR itself
// is opaque and runs to the end: the span's size is its length.
problem lto_ir(bytes image) {
  if (image.size() < kLtoIrHeader) {
    return "LTO-IR: " + sized(image.size()) + " image is shorter than the " + num(kLtoIrHeader) +
           "-byte container header";
  }
  const std::uint64_t options = read<std::uint16_t>(image, 12);
  const std::uint64_t option_data = read<std::uint32_t>(image, 16);
  const std::uint64_t ir = read<std::uint32_t>(image, 20);
  if (options < kLtoIrHeader || option_data < options || ir < option_data) {
    return "LTO-IR: its header's offsets (options at " + num(options) + ", their data at " +
           num(option_data) + ", the IR at " + num(ir) + ") are not in order after the " +
           num(kLtoIrHeader) + "-byte header";
  }
  if (ir >= image.size()) {
    return "LTO-IR: its IR starts at byte " + num(ir) + " of " + sized(image.size()) + " image";
  }
  return {};
}

}  // namespace

std::optional<std::string> image_problem(std::span<const std::byte> image) {
  std::uint32_t magic = 0;
  if (image.size() >= sizeof magic) std::memcpy(&magic, image.data(), sizeof magic);
  switch (magic) {
    case kElfMagic: return elf_check{image, "cubin", "image"}.run();
    case kFatbinMagic: return fatbin(image);
    case kLtoIrMagic: return lto_ir(image);
    case kWrapperMagic:
      return std::string{
          "a fatbin wrapper (magic 0x466243B1, __fatBinC_Wrapper_t) is not an image: it is a "
          "struct that points to a fatbin in the memory of the program that embeds it; load the "
          "fatbin itself (magic 0xBA55ED50)"};
    default: return {};  // PTX text: the driver gets a NUL-terminated copy
  }
}

}  // namespace cuwrap::detail
