// The image validator (src/image_check.hpp) on cubins and fatbins built here, byte by byte: it
// needs no driver. Real images from nvcc are checked by the sw tests (image_validation_test).
#include "../../src/image_check.hpp"

#include <doctest/doctest.h>
#include <elf.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace {

using image = std::vector<std::byte>;

template <class T>
void put(image& out, std::size_t offset, const T& value) {
  if (out.size() < offset + sizeof value) out.resize(offset + sizeof value);
  std::memcpy(out.data() + offset, &value, sizeof value);
}
template <class T>
T get(const image& in, std::size_t offset) {
  T value;
  std::memcpy(&value, in.data() + offset, sizeof value);
  return value;
}
void put_text(image& out, std::size_t offset, std::string_view text) {
  if (out.size() < offset + text.size()) out.resize(offset + text.size());
  std::memcpy(out.data() + offset, text.data(), text.size());
}

// A small, valid cubin: ELF header, one program header, the sections below, and the section
// header table last (so every shorter prefix lacks part of it).
enum section : std::size_t { null_section, shstrtab, strtab, symtab, info, bss, section_count };
constexpr std::size_t kPhoff = sizeof(Elf64_Ehdr);
constexpr std::string_view kSectionNames{"\0.shstrtab\0.strtab\0.symtab\0.nv.info\0.nv.bss\0", 44};
constexpr std::string_view kSymbolNames{"\0kernel\0", 8};

std::size_t shdr_offset(const image& elf, std::size_t index) {
  return get<Elf64_Ehdr>(elf, 0).e_shoff + index * sizeof(Elf64_Shdr);
}

Elf64_Shdr shdr(const image& elf, std::size_t index) {
  return get<Elf64_Shdr>(elf, shdr_offset(elf, index));
}
void set_shdr(image& elf, std::size_t index, const Elf64_Shdr& s) {
  put(elf, shdr_offset(elf, index), s);
}

image make_cubin() {
  image out;
  const std::size_t names_at = kPhoff + sizeof(Elf64_Phdr);
  put_text(out, names_at, kSectionNames);
  const std::size_t strings_at = names_at + kSectionNames.size();
  put_text(out, strings_at, kSymbolNames);
  const std::size_t symbols_at = (strings_at + kSymbolNames.size() + 7) / 8 * 8;
  Elf64_Sym kernel{};
  kernel.st_name = 1;
  kernel.st_shndx = info;
  put(out, symbols_at, Elf64_Sym{});
  put(out, symbols_at + sizeof(Elf64_Sym), kernel);
  const std::size_t info_at = symbols_at + 2 * sizeof(Elf64_Sym);
  put(out, info_at, std::uint64_t{0x0004'0017'0000'0000});
  const std::size_t shoff = info_at + 8;

  Elf64_Ehdr h{};
  std::memcpy(h.e_ident, ELFMAG, SELFMAG);
  h.e_ident[EI_CLASS] = ELFCLASS64;
  h.e_ident[EI_DATA] = ELFDATA2LSB;
  h.e_ident[EI_VERSION] = EV_CURRENT;
  h.e_type = ET_EXEC;
  h.e_machine = 190;  // EM_CUDA
  h.e_version = EV_CURRENT;
  h.e_phoff = kPhoff;
  h.e_shoff = shoff;
  h.e_ehsize = sizeof(Elf64_Ehdr);
  h.e_phentsize = sizeof(Elf64_Phdr);
  h.e_phnum = 1;
  h.e_shentsize = sizeof(Elf64_Shdr);
  h.e_shnum = section_count;
  h.e_shstrndx = shstrtab;
  put(out, 0, h);
  Elf64_Phdr segment{};
  segment.p_type = PT_LOAD;
  segment.p_offset = info_at;
  segment.p_filesz = 8;
  put(out, kPhoff, segment);

  const auto section_header = [](std::uint32_t name, std::uint32_t type, std::size_t offset,
                                 std::size_t size) {
    Elf64_Shdr s{};
    s.sh_name = name;
    s.sh_type = type;
    s.sh_offset = offset;
    s.sh_size = size;
    return s;
  };
  out.resize(shoff + section_count * sizeof(Elf64_Shdr));
  set_shdr(out, null_section, Elf64_Shdr{});
  set_shdr(out, shstrtab, section_header(1, SHT_STRTAB, names_at, kSectionNames.size()));
  set_shdr(out, strtab, section_header(11, SHT_STRTAB, strings_at, kSymbolNames.size()));
  Elf64_Shdr symbols = section_header(19, SHT_SYMTAB, symbols_at, 2 * sizeof(Elf64_Sym));
  symbols.sh_link = strtab;
  symbols.sh_entsize = sizeof(Elf64_Sym);
  set_shdr(out, symtab, symbols);
  Elf64_Shdr records = section_header(27, SHT_LOPROC, info_at, 8);
  records.sh_link = symtab;
  set_shdr(out, info, records);
  set_shdr(out, bss, section_header(36, SHT_NOBITS, 0, std::size_t{1} << 40));
  return out;
}

// A fatbin of two entries: the cubin above (sm_90) and LZ4-compressed PTX (compute_90).
constexpr std::size_t kEntryHeader = 0x48;

void put_entry(image& out, std::size_t at, std::uint16_t kind, const image& payload,
               std::uint64_t flags, std::uint32_t compressed) {
  put(out, at, kind);
  put(out, at + 2, std::uint16_t{0x0101});
  put(out, at + 4, static_cast<std::uint32_t>(kEntryHeader));
  put(out, at + 8, static_cast<std::uint64_t>(payload.size()));
  put(out, at + 0x10, compressed);
  put(out, at + 0x1c, std::uint32_t{90});
  put(out, at + 0x28, flags);
  put(out, at + 0x38, std::uint64_t{compressed != 0 ? 4 * payload.size() : 0});
  put(out, at + kEntryHeader - 1, std::uint8_t{0});
  out.insert(out.begin() + static_cast<std::ptrdiff_t>(at + kEntryHeader), payload.begin(),
             payload.end());
}

constexpr std::size_t kFirstEntry = 16;
std::size_t second_entry() { return kFirstEntry + kEntryHeader + make_cubin().size(); }

image make_fatbin() {
  image out;
  put(out, 0, std::uint32_t{0xBA55ED50});
  put(out, 4, std::uint16_t{1});
  put(out, 6, std::uint16_t{16});
  put(out, 8, std::uint64_t{0});
  put_entry(out, kFirstEntry, 2, make_cubin(), 0, 0);
  put_entry(out, out.size(), 1, image(64, std::byte{'x'}), 0x2000, 40);
  put(out, 8, static_cast<std::uint64_t>(out.size() - 16));
  return out;
}

// The validator's verdict: empty when the image is accepted.
std::string problem(const image& bytes) {
  return cuwrap::detail::image_problem(bytes).value_or(std::string{});
}
std::string problem_of_prefix(const image& bytes, std::size_t size) {
  return problem(image(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(size)));
}

}  // namespace

TEST_SUITE("image validation") {
  TEST_CASE("well-formed cubins and fatbins, PTX text and tiny spans are accepted") {
    CHECK(problem(make_cubin()).empty());
    CHECK(problem(make_fatbin()).empty());
    const std::string_view ptx = ".version 8.0\n.target sm_90\n.address_size 64\n";
    CHECK(problem(image(reinterpret_cast<const std::byte*>(ptx.data()),
                        reinterpret_cast<const std::byte*>(ptx.data() + ptx.size())))
              .empty());
    CHECK(problem(image{}).empty());
    CHECK(problem(image{std::byte{0x7f}, std::byte{'E'}, std::byte{'L'}}).empty());
  }

  TEST_CASE("every truncated cubin or fatbin is refused") {
    const image cubin = make_cubin();
    for (std::size_t size = 4; size < cubin.size(); ++size) {
      CAPTURE(size);
      CHECK(problem_of_prefix(cubin, size).starts_with("cubin: "));
    }
    const image fatbin = make_fatbin();
    for (std::size_t size = 4; size < fatbin.size(); ++size) {
      CAPTURE(size);
      CHECK(problem_of_prefix(fatbin, size).starts_with("fatbin: "));
    }
  }

  TEST_CASE("a cubin's header is checked against its size and kind") {
    const image cubin = make_cubin();
    CHECK(problem_of_prefix(cubin, 40) ==
          "cubin: a 40-byte image is shorter than the 64-byte ELF header");
    CHECK(problem_of_prefix(cubin, 8) ==
          "cubin: an 8-byte image is shorter than the 64-byte ELF header");
    const std::string header_only = problem_of_prefix(cubin, 64);
    CHECK(header_only.starts_with("cubin: "));
    CHECK(header_only.find("of a 64-byte image") != std::string::npos);

    image wrong_class = cubin;
    put(wrong_class, EI_CLASS, std::uint8_t{ELFCLASS32});
    CHECK(problem(wrong_class).find("not a 64-bit little-endian ELF") != std::string::npos);
  }

  TEST_CASE("a cubin's section and program header tables lie within it") {
    image sections = make_cubin();
    auto h = get<Elf64_Ehdr>(sections, 0);
    h.e_shnum = 200;
    put(sections, 0, h);
    CHECK(problem(sections).find("the section header table (200 entries at byte ") !=
          std::string::npos);

    image wrapped = make_cubin();
    h = get<Elf64_Ehdr>(wrapped, 0);
    h.e_shoff = std::numeric_limits<std::uint64_t>::max() - 64;  // offset + size wraps around
    put(wrapped, 0, h);
    CHECK(problem(wrapped).find("the section header table") != std::string::npos);

    image entry_size = make_cubin();
    h = get<Elf64_Ehdr>(entry_size, 0);
    h.e_shentsize = 40;
    put(entry_size, 0, h);
    CHECK(problem(entry_size) == "cubin: section header size (e_shentsize) is 40, not 64");

    image no_sections = make_cubin();
    h = get<Elf64_Ehdr>(no_sections, 0);
    h.e_shnum = 0;
    put(no_sections, 0, h);
    CHECK(problem(no_sections) == "cubin: no section header table (e_shnum is 0)");

    image programs = make_cubin();
    h = get<Elf64_Ehdr>(programs, 0);
    h.e_phoff = programs.size() - 8;
    put(programs, 0, h);
    CHECK(problem(programs).find("the program header table (1 entry at byte ") !=
          std::string::npos);

    image segment = make_cubin();
    auto p = get<Elf64_Phdr>(segment, kPhoff);
    p.p_filesz = 100000;
    put(segment, kPhoff, p);
    CHECK(problem(segment).starts_with("cubin: segment 0 extends to byte "));
  }

  TEST_CASE("every section's extent, names and links are checked") {
    image cubin = make_cubin();
    const std::size_t size = cubin.size();
    auto s = shdr(cubin, info);
    s.sh_size = 9000;
    set_shdr(cubin, info, s);
    CHECK(problem(cubin) == "cubin: section 4 ('.nv.info') extends to byte " +
                                std::to_string(s.sh_offset + 9000) + " of a " +
                                std::to_string(size) + "-byte image");

    image names = make_cubin();
    auto h = get<Elf64_Ehdr>(names, 0);
    h.e_shstrndx = section_count;
    put(names, 0, h);
    CHECK(problem(names) ==
          "cubin: e_shstrndx 6 is not a section-name table; the image has 6 sections");

    image unterminated = make_cubin();
    s = shdr(unterminated, shstrtab);
    s.sh_size -= 1;
    set_shdr(unterminated, shstrtab, s);
    CHECK(problem(unterminated) ==
          "cubin: the section-name table (section 1) does not end with a NUL byte");

    image name = make_cubin();
    s = shdr(name, info);
    s.sh_name = 5000;
    set_shdr(name, info, s);
    CHECK(problem(name).starts_with("cubin: section 4: its name (byte 5000 "));

    image link = make_cubin();
    s = shdr(link, info);
    s.sh_link = 77;
    set_shdr(link, info, s);
    CHECK(problem(link) ==
          "cubin: section 4 ('.nv.info') links to section 77 (sh_link); the image has 6 sections");

    image strings = make_cubin();
    s = shdr(strings, strtab);
    s.sh_offset = size;
    set_shdr(strings, strtab, s);
    CHECK(problem(strings).starts_with("cubin: section 2 ('.strtab') extends to byte "));

    image strings_end = make_cubin();
    const std::size_t last_name_byte =
        shdr(strings_end, strtab).sh_offset + kSymbolNames.size() - 1;
    put(strings_end, last_name_byte, 'x');
    CHECK(problem(strings_end) ==
          "cubin: the string table in section 2 ('.strtab') does not end with a NUL byte");
  }

  TEST_CASE("symbol tables have whole entries, names in their string table, real sections") {
    image entries = make_cubin();
    auto s = shdr(entries, symtab);
    s.sh_entsize = 16;
    set_shdr(entries, symtab, s);
    CHECK(problem(entries).find("ELF64 symbols are 24 bytes") != std::string::npos);

    image name = make_cubin();
    s = shdr(name, symtab);
    auto sym = get<Elf64_Sym>(name, s.sh_offset + sizeof(Elf64_Sym));
    sym.st_name = 4000;
    put(name, s.sh_offset + sizeof(Elf64_Sym), sym);
    CHECK(problem(name) ==
          "cubin: symbol 1 of section 3 ('.symtab') names byte 4000 of an 8-byte string table");

    image section = make_cubin();
    sym.st_name = 1;
    sym.st_shndx = 60;
    put(section, s.sh_offset + sizeof(Elf64_Sym), sym);
    CHECK(problem(section) ==
          "cubin: symbol 1 of section 3 ('.symtab') is in section 60; the image has 6 sections");
    sym.st_shndx = SHN_ABS;
    put(section, s.sh_offset + sizeof(Elf64_Sym), sym);
    CHECK(problem(section).empty());

    image link = make_cubin();
    s.sh_link = info;
    set_shdr(link, symtab, s);
    CHECK(problem(link).find("links to section 4, which is not a string table") !=
          std::string::npos);
  }

  TEST_CASE("a fatbin's header, entries and compressed sizes lie within it") {
    const image fatbin = make_fatbin();
    CHECK(problem_of_prefix(fatbin, 12) ==
          "fatbin: a 12-byte image is shorter than the 16-byte fatbin header");
    CHECK(problem_of_prefix(fatbin, 16) ==
          "fatbin: its entries (" + std::to_string(fatbin.size() - 16) +
              " bytes after the 16-byte header) extend to byte " + std::to_string(fatbin.size()) +
              " of a 16-byte image");

    image header = fatbin;
    put(header, 6, std::uint16_t{8});
    CHECK(problem(header) == "fatbin: header size 8 is less than 16");

    image payload = fatbin;
    put(payload, second_entry() + 8, std::uint64_t{1} << 62);
    CHECK(problem(payload).starts_with("fatbin: entry 1 at byte " + std::to_string(second_entry()) +
                                       " (a 72-byte header and 4611686018427387904 bytes"));

    image entry_header = fatbin;
    put(entry_header, second_entry() + 4, std::uint32_t{16});
    CHECK(problem(entry_header).ends_with(": header size 16 is less than 64"));

    image compressed = fatbin;
    put(compressed, second_entry() + 0x10, std::uint32_t{65});
    CHECK(problem(compressed) == "fatbin: entry 1 at byte " + std::to_string(second_entry()) +
                                     " is compressed to 65 bytes, which is not within its "
                                     "64-byte payload");

    image short_body = fatbin;
    put(short_body, 8, std::uint64_t{kEntryHeader + make_cubin().size() + 10});
    CHECK(problem(short_body).find("its header is cut short (10 bytes left") != std::string::npos);
  }

  TEST_CASE("the ELF inside a fatbin entry is checked against the entry") {
    image fatbin = make_fatbin();
    const std::size_t cubin_at = kFirstEntry + kEntryHeader;
    const image cubin = make_cubin();
    const std::size_t info_header =
        cubin_at + get<Elf64_Ehdr>(cubin, 0).e_shoff + info * sizeof(Elf64_Shdr);
    auto s = get<Elf64_Shdr>(fatbin, info_header);
    s.sh_size = cubin.size();  // still inside the fatbin, but past the entry
    put(fatbin, info_header, s);
    CHECK(problem(fatbin).starts_with(
        "fatbin: entry 0 (ELF for sm_90): section 4 ('.nv.info') extends to byte "));
    CHECK(problem(fatbin).ends_with("-byte payload"));
  }

  TEST_CASE("the in-memory fatbin wrapper is refused, saying what it is") {
    image wrapper;
    put(wrapper, 0, std::uint32_t{0x466243B1});
    put(wrapper, 4, std::uint32_t{1});
    put(wrapper, 8, std::uint64_t{0xdeadbeef});  // a pointer, meaningless here
    const std::string why = problem(wrapper);
    CHECK(why.find("fatbin wrapper (magic 0x466243B1") != std::string::npos);
    CHECK(why.find("points to a fatbin in the memory of the program") != std::string::npos);
  }
}
