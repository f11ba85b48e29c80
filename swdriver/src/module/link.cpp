// The JIT linker: cuLinkCreate, cuLinkAddData, cuLinkAddFile, cuLinkComplete, cuLinkDestroy.
//
// The software driver compiles nothing to SASS, so the linked image is PTX text: cuLinkComplete
// merges the PTX of every input into one module, which cuModuleLoadData then loads as PTX.
//
// Inputs (what each CUjitInputType gives):
//   PTX        the text (up to its NUL), checked like a module load at cuLinkAddData.
//   FATBINARY  its newest PTX entry the device can run (fatbin_code, fatbin.cpp); a fatbin with
//              only LTO-IR goes to nvJitLink like NVVM; one with only SASS is refused.
//   OBJECT,    every fatbin embedded in the host object or archive (found by their magic
//   LIBRARY    number), taken as above.
//   NVVM       LTO-IR (raw, in a fatbin or in a host object): at cuLinkComplete all of them are
//              linked together by nvJitLink (libnvJitLink.so, dlopen'ed: SWCUDA_NVJITLINK names
//              the library, else $CUDA_HOME/lib64, $CUDA_PATH/lib64, then the soname) with
//              -lto -ptx, and its PTX output is one more input. nvJitLink optimizes the LTO-IR as
//              a whole program: a device function defined in LTO-IR that only PTX inputs call is
//              dropped, which then shows as an undefined reference.
//   CUBIN      refused: SASS cannot run here (CUDA_ERROR_INVALID_IMAGE, with the reason in the
//              error log).
//
// Merging: one header (the highest .version, the .target of the newest input, .address_size
// 64), then each input's top-level statements in order. A symbol defined with internal linkage
// (no .visible/.weak/.extern) that another input also names is renamed in its input
// (NAME$swlinkK for input K; nvcc's $str string literals, static functions). For symbols with
// external linkage: two .visible definitions are a duplicate-definition error; a .visible one
// wins over .weak/.common ones, else the first; the others are dropped. An `.extern` function
// declaration of a defined symbol is dropped when the definition comes earlier, else it becomes
// a prototype (`.visible .func ...;`); an `.extern` variable declaration is replaced by the
// definition itself when that comes later (so it is defined before its first use). An `.extern`
// function that nothing defines is allowed only for the driver's built-ins (vprintf,
// __assertfail, malloc, free), kept once; anything else unresolved is an "undefined reference"
// error. Link errors return CUDA_ERROR_INVALID_IMAGE (no image can be made) and name the symbol
// and the input in the error log. `.extern .shared` (dynamic shared memory) is kept, once per
// name. Debug file numbers (.file/.loc) of input K are offset by 1000 * K. The merged text is
// then parsed like a module load (CUDA_ERROR_INVALID_PTX if it fails).
//
// Logs: the CU_JIT_INFO/ERROR_LOG_BUFFER options of cuLinkCreate accumulate lines for the life
// of the link state (the option arrays must stay valid, as cuda.h says); they are rewritten after
// every cuLinkAddData/cuLinkAddFile/cuLinkComplete. cuLinkAddData refuses the options cuda.h
// says it does not accept (the log buffers, the wall time, the targets) with
// CUDA_ERROR_INVALID_VALUE.
#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "module/module.hpp"

namespace swcu {
namespace {

constexpr std::string_view kBuiltins[] = {"vprintf", "__assertfail", "malloc", "free"};
constexpr std::uint32_t kFatbinMagic = 0xBA55ED50;
constexpr std::string_view kRefuseSass =
    "the software driver runs PTX; compile with -ptx or keep PTX in the fatbin";

// ---------------------------------------------------------------------------------------------
// nvJitLink, loaded on first use.

struct NvJitLink {
  using Handle = void*;
  int (*create)(Handle*, std::uint32_t, const char**) = nullptr;
  int (*destroy)(Handle*) = nullptr;
  int (*add_data)(Handle, int, const void*, std::size_t, const char*) = nullptr;
  int (*complete)(Handle) = nullptr;
  int (*ptx_size)(Handle, std::size_t*) = nullptr;
  int (*ptx)(Handle, char*) = nullptr;
  int (*error_log_size)(Handle, std::size_t*) = nullptr;
  int (*error_log)(Handle, char*) = nullptr;
  std::string path;
};

constexpr int kNvJitLinkInputAny = 10;  // NVJITLINK_INPUT_ANY

// A function of the library: the versioned names of CUDA 13 and 12 first, then the plain one.
template <class F>
bool resolve(void* lib, const char* base, F& out) {
  const std::string names[] = {std::string("__") + base + "_13_0",
                               std::string("__") + base + "_12_0", base};
  for (const std::string& name : names) {
    if (void* p = dlsym(lib, name.c_str())) {
      out = reinterpret_cast<F>(p);
      return true;
    }
  }
  return false;
}

// The loaded library, or nullptr with why (a failed search is retried on the next use).
const NvJitLink* nvjitlink(std::string& why) {
  static std::optional<NvJitLink> loaded;  // used under the state lock
  if (loaded) return &*loaded;
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("SWCUDA_NVJITLINK"); env != nullptr && *env != '\0') {
    candidates.emplace_back(env);
  } else {
    for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
      if (const char* dir = std::getenv(var); dir != nullptr && *dir != '\0') {
        candidates.push_back(std::string(dir) + "/lib64/libnvJitLink.so");
      }
    }
    candidates.insert(candidates.end(),
                      {"libnvJitLink.so.13", "libnvJitLink.so.12", "libnvJitLink.so"});
  }
  for (const std::string& path : candidates) {
    void* const lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) continue;
    NvJitLink f;
    f.path = path;
    if (resolve(lib, "nvJitLinkCreate", f.create) && resolve(lib, "nvJitLinkDestroy", f.destroy) &&
        resolve(lib, "nvJitLinkAddData", f.add_data) &&
        resolve(lib, "nvJitLinkComplete", f.complete) &&
        resolve(lib, "nvJitLinkGetLinkedPtxSize", f.ptx_size) &&
        resolve(lib, "nvJitLinkGetLinkedPtx", f.ptx) &&
        resolve(lib, "nvJitLinkGetErrorLogSize", f.error_log_size) &&
        resolve(lib, "nvJitLinkGetErrorLog", f.error_log)) {
      loaded = std::move(f);  // never unloaded
      return &*loaded;
    }
    dlclose(lib);
  }
  why = "LTO-IR needs nvJitLink to become PTX, and no libnvJitLink.so was found (tried";
  for (const std::string& path : candidates) why += " " + path;
  why += "; set SWCUDA_NVJITLINK or CUDA_HOME)";
  return nullptr;
}

// One LTO-IR input (raw, fatbin or host object: nvJitLink tells them apart).
struct LtoInput {
  std::string name;
  std::vector<unsigned char> bytes;
};

// Links every LTO-IR input into PTX; false with the reason.
// Runs without the state lock: `lib` was loaded under it (and is never unloaded).
bool lto_to_ptx(const NvJitLink* lib, const std::vector<LtoInput>& inputs, std::string& ptx,
                std::string& why) {
  const std::string arch = "-arch=sm_" + std::to_string(kDeviceArch);
  const char* options[] = {arch.c_str(), "-lto", "-ptx"};
  NvJitLink::Handle h = nullptr;
  if (const int r = lib->create(&h, 3, options); r != 0) {
    why = "nvJitLinkCreate failed (nvJitLinkResult " + std::to_string(r) + ")";
    return false;
  }
  const auto log = [&]() {
    std::size_t n = 0;
    std::string text;
    if (lib->error_log_size(h, &n) == 0 && n > 1) {
      text.assign(n, '\0');
      if (lib->error_log(h, text.data()) != 0) text.clear();
      text.resize(strnlen(text.c_str(), text.size()));
    }
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    return text;
  };
  bool ok = true;
  for (const LtoInput& in : inputs) {
    if (const int r =
            lib->add_data(h, kNvJitLinkInputAny, in.bytes.data(), in.bytes.size(), in.name.c_str());
        r != 0) {
      why = in.name + ": nvJitLink refused the LTO-IR (nvJitLinkResult " + std::to_string(r) +
            ") " + log();
      ok = false;
      break;
    }
  }
  if (ok) {
    if (const int r = lib->complete(h); r != 0) {
      why = "nvJitLink could not link the LTO-IR (nvJitLinkResult " + std::to_string(r) + ") " +
            log();
      ok = false;
    }
  }
  std::size_t size = 0;
  if (ok && lib->ptx_size(h, &size) == 0 && size > 0) {
    ptx.assign(size, '\0');
    if (lib->ptx(h, ptx.data()) != 0) ok = false;
    ptx.resize(strnlen(ptx.c_str(), ptx.size()));
  } else if (ok) {
    ok = false;
  }
  if (!ok && why.empty()) why = "nvJitLink produced no PTX";
  lib->destroy(&h);
  return ok;
}

// ---------------------------------------------------------------------------------------------
// PTX text: top-level statements and the symbols they define or declare.

bool ident_start(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$' || c == '%';
}
bool ident_char(char c) noexcept { return ident_start(c) || (c >= '0' && c <= '9'); }
bool space(char c) noexcept {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

// Skips a comment or string literal at text[i]; false when there is none. An unterminated one
// runs to the end.
bool skip_comment_or_string(std::string_view t, std::size_t& i) noexcept {
  if (t[i] == '/' && i + 1 < t.size() && t[i + 1] == '/') {
    while (i < t.size() && t[i] != '\n') ++i;
    return true;
  }
  if (t[i] == '/' && i + 1 < t.size() && t[i + 1] == '*') {
    const std::size_t end = t.find("*/", i + 2);
    i = end == std::string_view::npos ? t.size() : end + 2;
    return true;
  }
  if (t[i] == '"') {
    for (++i; i < t.size() && t[i] != '"'; ++i) {
      if (t[i] == '\\') ++i;
    }
    i = std::min(i + 1, t.size());
    return true;
  }
  return false;
}

// A directive that ends at the end of its line, without a ';'.
bool line_directive(std::string_view t) noexcept {
  for (const std::string_view d : {".version", ".target", ".address_size", ".file"}) {
    if (t.starts_with(d) && (t.size() == d.size() || !ident_char(t[d.size()]))) return true;
  }
  return false;
}

// Splits PTX into its top-level statements: each ends at a ';' outside braces, or at the '}'
// that closes a body (not an initializer `= {...}`); .version, .target, .address_size and
// .file end with their line. False with why for a truncated statement.
bool split_statements(std::string_view t, std::vector<std::string_view>& out, std::string& why) {
  std::size_t i = 0;
  while (i < t.size()) {
    if (space(t[i]) || t[i] == ';') {
      ++i;
      continue;
    }
    if (skip_comment_or_string(t, i)) continue;
    const std::size_t start = i;
    if (line_directive(t.substr(i))) {
      while (i < t.size() && t[i] != '\n' &&
             !(t[i] == '/' && i + 1 < t.size() && (t[i + 1] == '/' || t[i + 1] == '*'))) {
        ++i;
      }
      out.push_back(t.substr(start, i - start));
      continue;
    }
    int depth = 0;
    bool initializer = false;
    bool done = false;
    while (i < t.size() && !done) {
      if (skip_comment_or_string(t, i)) continue;
      const char c = t[i++];
      if (c == '{') {
        ++depth;
      } else if (c == '}') {
        if (--depth < 0) {
          why = "unbalanced '}'";
          return false;
        }
        done = depth == 0 && !initializer;
      } else if (depth == 0 && c == '=') {
        initializer = true;
      } else if (depth == 0 && c == ';') {
        done = true;
      }
    }
    if (!done) {
      why = "the text ends inside a statement";
      return false;
    }
    out.push_back(t.substr(start, i - start));
  }
  return true;
}

// The leading words of a statement (up to its body, initializer or end): directives (".x"),
// identifiers, numbers and single punctuation characters, with where each starts.
struct Word {
  std::string_view text;
  std::size_t at = 0;
};

std::vector<Word> leading_words(std::string_view t) {
  std::vector<Word> words;
  std::size_t i = 0;
  while (i < t.size()) {
    if (space(t[i])) {
      ++i;
      continue;
    }
    if (t[i] != '"' && skip_comment_or_string(t, i)) continue;
    const std::size_t start = i;
    const char c = t[i];
    if (c == '{' || c == '=' || c == ';') break;
    if ((c == '.' && i + 1 < t.size() && ident_char(t[i + 1])) || ident_start(c) ||
        (c >= '0' && c <= '9')) {
      ++i;
      while (i < t.size() && (ident_char(t[i]) || t[i] == '.')) ++i;
    } else if (c == '"') {
      skip_comment_or_string(t, i);
    } else {
      ++i;
    }
    words.push_back({t.substr(start, i - start), start});
  }
  return words;
}

enum class What { header, entry, func, variable, other };
enum class Linkage { internal, visible, weak, external, common };

struct Statement {
  std::string_view text;
  What what = What::other;
  Linkage linkage = Linkage::internal;
  std::string name;
  std::string directive;  // header: .version/.target/.address_size; variable: its space
  std::string argument;   // header: the rest of the statement
  bool body = false;      // entry/func: has a body
  std::size_t extern_at = std::string_view::npos;  // where `.extern` is, to rewrite it

  [[nodiscard]] bool defines() const noexcept {
    if (what == What::entry || what == What::func) return body && linkage != Linkage::external;
    return what == What::variable && linkage != Linkage::external && directive != ".shared";
  }
};

bool is_ident(std::string_view w) noexcept { return !w.empty() && ident_start(w[0]); }

Statement classify(std::string_view text) {
  Statement s;
  s.text = text;
  const std::vector<Word> w = leading_words(text);
  std::size_t i = 0;
  for (; i < w.size(); ++i) {
    const std::string_view d = w[i].text;
    if (d == ".visible") {
      s.linkage = Linkage::visible;
    } else if (d == ".weak") {
      s.linkage = Linkage::weak;
    } else if (d == ".common") {
      s.linkage = Linkage::common;
    } else if (d == ".extern") {
      s.linkage = Linkage::external;
      s.extern_at = w[i].at;
    } else {
      break;
    }
  }
  if (i >= w.size()) return s;
  const std::string_view d = w[i].text;
  if (d == ".version" || d == ".target" || d == ".address_size") {
    s.what = What::header;
    s.directive = std::string(d);
    std::string_view rest = text.substr(w[i].at + d.size());
    while (!rest.empty() && (space(rest.back()) || rest.back() == ';')) rest.remove_suffix(1);
    while (!rest.empty() && space(rest.front())) rest.remove_prefix(1);
    s.argument = std::string(rest);
    return s;
  }
  std::size_t j = i + 1;
  if (d == ".entry" || d == ".func") {
    s.what = d == ".entry" ? What::entry : What::func;
    if (s.what == What::func && j < w.size() && w[j].text == "(") {  // return parameters
      int parens = 0;
      for (; j < w.size(); ++j) {
        if (w[j].text == "(") ++parens;
        if (w[j].text == ")" && --parens == 0) {
          ++j;
          break;
        }
      }
    }
    if (j < w.size() && is_ident(w[j].text)) s.name = std::string(w[j].text);
    s.body = !text.empty() && text.back() == '}';  // a statement that ends with its body
    return s;
  }
  if (d == ".global" || d == ".const" || d == ".shared" || d == ".local" || d == ".tex" ||
      d == ".surfref" || d == ".texref" || d == ".samplerref") {
    s.what = What::variable;
    s.directive = std::string(d);
    for (; j < w.size(); ++j) {
      if (is_ident(w[j].text)) {
        s.name = std::string(w[j].text);
        break;
      }
    }
  }
  return s;
}

// Debug file numbers (.file N, .loc N, inlined_at N) of input K are offset by K * this, so the
// inputs' files stay apart.
constexpr int kFileOffset = 1000;

// The statement's text with identifiers renamed, file numbers offset by `file_offset`, and its
// `.extern` replaced when asked.
std::string render(std::string_view t,
                   const std::map<std::string, std::string, std::less<>>& renames,
                   std::size_t extern_at, std::string_view extern_replacement, int file_offset) {
  if (renames.empty() && extern_replacement.empty() && file_offset == 0) return std::string(t);
  std::string out;
  out.reserve(t.size() + 16);
  bool file_number_next = false;  // after .file, .loc or inlined_at
  std::size_t i = 0;
  while (i < t.size()) {
    const std::size_t start = i;
    if (skip_comment_or_string(t, i)) {
      out.append(t.substr(start, i - start));
      continue;
    }
    const char c = t[i];
    if (c == '.' && i + 1 < t.size() && ident_char(t[i + 1])) {
      ++i;
      while (i < t.size() && ident_char(t[i])) ++i;
      const std::string_view word = t.substr(start, i - start);
      out.append(start == extern_at && !extern_replacement.empty() ? extern_replacement : word);
      file_number_next = word == ".file" || word == ".loc";
    } else if (c >= '0' && c <= '9') {
      while (i < t.size() && (ident_char(t[i]) || t[i] == '.')) ++i;
      const std::string_view number = t.substr(start, i - start);
      if (file_number_next && file_offset != 0 &&
          std::all_of(number.begin(), number.end(), [](char d) { return d >= '0' && d <= '9'; })) {
        out += std::to_string(std::atol(std::string(number).c_str()) + file_offset);
      } else {
        out.append(number);
      }
      file_number_next = false;
    } else if (ident_start(c)) {
      while (i < t.size() && ident_char(t[i])) ++i;
      const std::string_view word = t.substr(start, i - start);
      const auto it = renames.find(word);
      out.append(it == renames.end() ? word : std::string_view(it->second));
      file_number_next = word == "inlined_at";
    } else {
      if (!space(c)) file_number_next = false;
      out += c;
      ++i;
    }
  }
  return out;
}

// One PTX input of the merge.
struct PtxInput {
  std::string name;
  std::string text;
};

struct Parsed {
  std::vector<Statement> statements;
  int version = 0;  // 10 * major + minor
  std::string version_text;
  int arch = 0;
  std::string target_text;
};

int parse_version(std::string_view v) noexcept {
  const std::size_t dot = v.find('.');
  if (dot == std::string_view::npos) return 0;
  return std::atoi(std::string(v.substr(0, dot)).c_str()) * 10 +
         std::atoi(std::string(v.substr(dot + 1)).c_str());
}

int parse_arch(std::string_view target) noexcept {
  const std::size_t sm = target.find("sm_");
  return sm == std::string_view::npos ? 0 : std::atoi(std::string(target.substr(sm + 3)).c_str());
}

// The result of a merge: the text, or the error and its log lines.
struct Merged {
  CUresult result = CUDA_SUCCESS;
  std::string text;
  std::vector<std::string> errors;
  std::size_t resolved = 0;
};

Merged merge(const std::vector<PtxInput>& inputs) {
  Merged m;
  std::vector<Parsed> parsed(inputs.size());
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    std::vector<std::string_view> texts;
    std::string why;
    if (!split_statements(inputs[k].text, texts, why)) {
      m.result = CUDA_ERROR_INVALID_PTX;
      m.errors.push_back(inputs[k].name + ": " + why);
      continue;
    }
    Parsed& p = parsed[k];
    for (std::string_view t : texts) {
      Statement s = classify(t);
      if (s.what == What::header) {
        if (s.directive == ".version") {
          p.version = parse_version(s.argument);
          p.version_text = s.argument;
        } else if (s.directive == ".target") {
          p.arch = parse_arch(s.argument);
          p.target_text = s.argument;
        }
        continue;
      }
      p.statements.push_back(std::move(s));
    }
  }
  if (m.result != CUDA_SUCCESS) return m;

  // Where each name appears: (input, statement).
  using Ref = std::pair<std::size_t, std::size_t>;
  std::map<std::string, std::vector<Ref>, std::less<>> uses;
  for (std::size_t k = 0; k < parsed.size(); ++k) {
    for (std::size_t i = 0; i < parsed[k].statements.size(); ++i) {
      const Statement& s = parsed[k].statements[i];
      if (!s.name.empty()) uses[s.name].emplace_back(k, i);
    }
  }
  // Internal symbols another input also names are renamed in their input.
  std::vector<std::map<std::string, std::string, std::less<>>> renames(parsed.size());
  for (std::size_t k = 0; k < parsed.size(); ++k) {
    for (const Statement& s : parsed[k].statements) {
      if (s.name.empty() || s.linkage != Linkage::internal || s.what == What::other) continue;
      const auto& refs = uses[s.name];
      const bool shared =
          std::any_of(refs.begin(), refs.end(), [k](const Ref& r) { return r.first != k; });
      if (shared) renames[k][s.name] = s.name + "$swlink" + std::to_string(k);
    }
  }

  // Resolution of the external names: what is dropped, what replaces a declaration.
  std::set<Ref> dropped;
  std::map<Ref, std::string> extern_rewrite;  // declaration -> linkage word
  std::map<Ref, Ref> hoisted;                 // declaration -> definition emitted in its place
  const auto statement_at = [&](const Ref& r) -> const Statement& {
    return parsed[r.first].statements[r.second];
  };
  for (const auto& [name, refs] : uses) {
    std::vector<Ref> strong;
    std::vector<Ref> soft;
    std::vector<Ref> declarations;
    std::vector<Ref> shared_externs;
    for (const Ref& r : refs) {
      const Statement& s = statement_at(r);
      if (s.linkage == Linkage::internal) continue;  // local to its input (renamed if needed)
      if (s.defines()) {
        (s.linkage == Linkage::visible ? strong : soft).push_back(r);
      } else if (s.linkage == Linkage::external && s.what == What::variable &&
                 s.directive == ".shared") {
        shared_externs.push_back(r);
      } else if (s.linkage == Linkage::external &&
                 (s.what == What::func || s.what == What::variable || s.what == What::entry)) {
        declarations.push_back(r);
      }
    }
    for (std::size_t n = 1; n < shared_externs.size(); ++n) dropped.insert(shared_externs[n]);
    if (strong.size() > 1) {
      m.result = CUDA_ERROR_INVALID_IMAGE;
      m.errors.push_back("duplicate definition of '" + name + "' in '" +
                         inputs[strong[0].first].name + "' and '" + inputs[strong[1].first].name +
                         "'");
      continue;
    }
    std::optional<Ref> chosen;
    if (!strong.empty()) {
      chosen = strong[0];
    } else if (!soft.empty()) {
      chosen = soft[0];
    }
    for (const Ref& r : strong) {
      if (r != *chosen) dropped.insert(r);
    }
    for (const Ref& r : soft) {
      if (r != *chosen) dropped.insert(r);
    }
    if (!chosen) {
      if (declarations.empty()) continue;
      const bool builtin =
          statement_at(declarations[0]).what == What::func &&
          std::find(std::begin(kBuiltins), std::end(kBuiltins), name) != std::end(kBuiltins);
      if (builtin) {
        for (std::size_t n = 1; n < declarations.size(); ++n) dropped.insert(declarations[n]);
        continue;
      }
      m.result = CUDA_ERROR_INVALID_IMAGE;
      for (const Ref& r : declarations) {
        m.errors.push_back("undefined reference to '" + name + "' in '" + inputs[r.first].name +
                           "'");
      }
      continue;
    }
    const Statement& def = statement_at(*chosen);
    bool declared = false;  // a prototype or the hoisted definition is already in place
    for (const Ref& r : declarations) {
      ++m.resolved;
      if (r > *chosen || declared) {
        dropped.insert(r);
      } else if (def.what == What::variable) {
        hoisted[r] = *chosen;
        dropped.insert(*chosen);
        declared = true;
      } else {
        extern_rewrite[r] = def.linkage == Linkage::visible ? ".visible" : ".weak";
        declared = true;
      }
    }
  }
  if (m.result != CUDA_SUCCESS) return m;

  // The header, then the statements.
  int version = 0;
  std::string version_text = "9.0";
  int arch = 0;
  std::string target_text = "sm_" + std::to_string(kDeviceArch);
  for (const Parsed& p : parsed) {
    if (p.version > version) {
      version = p.version;
      version_text = p.version_text;
    }
    if (p.arch > arch) {
      arch = p.arch;
      target_text = p.target_text;
    }
  }
  std::string& out = m.text;
  out = "//\n// Linked by the cuwrap software driver (cuLinkComplete) from " +
        std::to_string(inputs.size()) + " input(s)\n//\n\n.version " + version_text + "\n.target " +
        target_text + "\n.address_size 64\n";
  for (std::size_t k = 0; k < parsed.size(); ++k) {
    out += "\n// ---- input: " + inputs[k].name + "\n\n";
    for (std::size_t i = 0; i < parsed[k].statements.size(); ++i) {
      const Ref r{k, i};
      if (const auto h = hoisted.find(r); h != hoisted.end()) {
        const Statement& def = statement_at(h->second);
        out += render(def.text, renames[h->second.first], std::string_view::npos, {},
                      static_cast<int>(h->second.first) * kFileOffset);
        out += "\n\n";
        continue;
      }
      if (dropped.count(r) != 0) continue;
      const Statement& s = parsed[k].statements[i];
      const auto rewrite = extern_rewrite.find(r);
      out += render(s.text, renames[k], s.extern_at,
                    rewrite == extern_rewrite.end() ? std::string_view() : rewrite->second,
                    static_cast<int>(k) * kFileOffset);
      out += "\n\n";
    }
  }
  return m;
}

// ---------------------------------------------------------------------------------------------
// The link state.

struct LinkState final : Object {
  LinkState() noexcept : Object(SWCU_LINK_STATE) {}
  void release() noexcept override {
    ptx.clear();
    lto.clear();
    image.clear();
    image.shrink_to_fit();
  }

  JitRequest request;       // the log buffers of cuLinkCreate
  void** values = nullptr;  // its option values (sizes are written back there)
  unsigned int count = 0;
  std::vector<PtxInput> ptx;
  std::vector<LtoInput> lto;
  std::size_t lto_position = 0;  // where the LTO-IR's PTX goes among the PTX inputs
  std::size_t added = 0;         // inputs added, for default names
  std::string info_log;
  std::string error_log;
  bool completed = false;
  int linking = 0;    // cuLinkComplete calls running nvJitLink (inputs cannot be added then)
  std::string image;  // the merged PTX, NUL-terminated by std::string
};

void append_line(std::string& log, const std::string& line) {
  if (!log.empty()) log += '\n';
  log += "swcuda: " + line;
}

// A log into a JIT option buffer: truncated to fit with its NUL; the size option then holds the
// characters written (without the NUL).
void write_log(char* buffer, std::size_t size, int size_index, void** values,
               const std::string& text) noexcept {
  std::size_t n = 0;
  if (buffer != nullptr && size > 0) {
    n = std::min(text.size(), size - 1);
    std::memcpy(buffer, text.data(), n);
    buffer[n] = '\0';
  }
  if (size_index >= 0) values[size_index] = reinterpret_cast<void*>(static_cast<std::uintptr_t>(n));
}

void publish_logs(const LinkState& l) noexcept {
  if (l.count == 0 || l.values == nullptr) return;
  write_log(l.request.info, l.request.info_size, l.request.info_size_index, l.values, l.info_log);
  write_log(l.request.error, l.request.error_size, l.request.error_size_index, l.values,
            l.error_log);
  if (l.request.wall_time_index >= 0) {
    const float ms = 0.0f;  // no compiler ran
    void* bits = nullptr;
    std::memcpy(&bits, &ms, sizeof ms);
    l.values[l.request.wall_time_index] = bits;
  }
}

// Fails the call with `code` and one error log line.
CUresult fail(LinkState& l, CUresult code, const std::string& line) {
  append_line(l.error_log, line);
  publish_logs(l);
  return code;
}

// Checks one PTX text as a module load would; CUDA_SUCCESS or the load's error (logged).
CUresult check_ptx(LinkState& l, const std::string& name, const std::string& text) {
  JitRequest request;
  std::shared_ptr<const Image> image;
  LoadLog log;
  const CUresult r = parse_image(text.c_str(), SIZE_MAX, request, image, log);
  if (r != CUDA_SUCCESS) {
    // Text given as PTX that is not PTX at all is invalid PTX, not an invalid image.
    return fail(l, r == CUDA_ERROR_INVALID_IMAGE ? CUDA_ERROR_INVALID_PTX : r,
                name + ": " + log.error_log);
  }
  if (image->code != ImageCode::ptx || image->from_fatbin) {
    return fail(l, CUDA_ERROR_INVALID_PTX, name + ": not PTX text");
  }
  return CUDA_SUCCESS;
}

CUresult add_ptx(LinkState& l, const std::string& name, std::string text) {
  if (const CUresult r = check_ptx(l, name, text)) return r;
  l.ptx.push_back({name, std::move(text)});
  append_line(l.info_log, "added PTX input '" + name + "'");
  return CUDA_SUCCESS;
}

CUresult add_lto(LinkState& l, const std::string& name, const unsigned char* data,
                 std::size_t size) {
  std::string why;
  if (nvjitlink(why) == nullptr) return fail(l, CUDA_ERROR_NOT_SUPPORTED, name + ": " + why);
  if (l.lto.empty()) l.lto_position = l.ptx.size();
  l.lto.push_back({name, std::vector<unsigned char>(data, data + size)});
  append_line(l.info_log, "added LTO-IR input '" + name + "' (linked by nvJitLink at completion)");
  return CUDA_SUCCESS;
}

// A fatbin (alone or found inside a host object): its PTX, else its LTO-IR.
CUresult add_fatbin(LinkState& l, const std::string& name, const unsigned char* data,
                    std::size_t size) {
  const FatbinCode code = fatbin_code(data, size);
  if (!code.error.empty()) return fail(l, CUDA_ERROR_INVALID_IMAGE, name + ": " + code.error);
  if (!code.ptx.empty()) return add_ptx(l, name, code.ptx);
  if (code.has_ltoir) return add_lto(l, name, data, size);
  return fail(l, CUDA_ERROR_INVALID_IMAGE,
              name +
                  (code.has_elf ? ": the fatbin holds only SASS; "
                                : ": the fatbin holds no code for this device; ") +
                  std::string(kRefuseSass));
}

// A host object or archive: every embedded fatbin's PTX; LTO-IR goes to nvJitLink whole.
CUresult add_host_code(LinkState& l, const std::string& name, const unsigned char* data,
                       std::size_t size) {
  std::vector<std::string> texts;
  bool elf = false;
  bool ltoir = false;
  for (std::size_t i = 0; i + 16 <= size; ++i) {
    std::uint32_t magic = 0;
    std::memcpy(&magic, data + i, sizeof magic);
    if (magic != kFatbinMagic) continue;
    const FatbinCode code = fatbin_code(data + i, size - i);
    if (!code.error.empty()) continue;  // the bytes only looked like a fatbin
    elf = elf || code.has_elf;
    ltoir = ltoir || code.has_ltoir;
    if (!code.ptx.empty()) texts.push_back(code.ptx);
  }
  if (texts.empty()) {
    if (ltoir) return add_lto(l, name, data, size);
    return fail(l, CUDA_ERROR_INVALID_IMAGE,
                name +
                    (elf ? ": its device code is SASS only; "
                         : ": no device code (no fatbin) was found in it; ") +
                    std::string(kRefuseSass));
  }
  for (std::size_t k = 0; k < texts.size(); ++k) {
    const std::string part = texts.size() == 1 ? name : name + " #" + std::to_string(k + 1);
    if (const CUresult r = add_ptx(l, part, std::move(texts[k]))) return r;
  }
  return CUDA_SUCCESS;
}

bool is_elf(const unsigned char* data, std::size_t size) noexcept {
  return size >= 4 && data[0] == 0x7f && data[1] == 'E' && data[2] == 'L' && data[3] == 'F';
}

// Checks the per-input options (the ones cuLinkAddData does not accept are refused).
CUresult check_input_options(unsigned int count, CUjit_option* options, void** values) {
  if (count == 0) return CUDA_SUCCESS;
  if (options == nullptr || values == nullptr) return CUDA_ERROR_INVALID_VALUE;
  for (unsigned int i = 0; i < count; ++i) {
    switch (raw(options[i])) {
      case CU_JIT_WALL_TIME:
      case CU_JIT_INFO_LOG_BUFFER:
      case CU_JIT_ERROR_LOG_BUFFER:
      case CU_JIT_TARGET_FROM_CUCONTEXT:
      case CU_JIT_TARGET: return CUDA_ERROR_INVALID_VALUE;
      default: break;
    }
  }
  JitRequest ignored;
  return read_jit_options(count, options, values, ignored);
}

// cuLinkAddData and cuLinkAddFile after their checks: one input of `type`.
CUresult add_input(LinkState& l, int type, const unsigned char* data, std::size_t size,
                   std::string name) {
  ++l.added;
  if (name.empty()) name = "input " + std::to_string(l.added);
  CUresult r = CUDA_SUCCESS;
  switch (type) {
    case CU_JIT_INPUT_PTX: {
      const char* text = reinterpret_cast<const char*>(data);
      r = add_ptx(l, name, std::string(text, size == 0 ? std::strlen(text) : strnlen(text, size)));
      break;
    }
    case CU_JIT_INPUT_FATBINARY: r = add_fatbin(l, name, data, size); break;
    case CU_JIT_INPUT_OBJECT:
    case CU_JIT_INPUT_LIBRARY: r = add_host_code(l, name, data, size); break;
    case CU_JIT_INPUT_NVVM: r = add_lto(l, name, data, size); break;
    case CU_JIT_INPUT_CUBIN:
      r = fail(
          l, CUDA_ERROR_INVALID_IMAGE,
          name + (is_elf(data, size) ? ": a cubin is SASS; " : ": not a cubin (no ELF header); ") +
              std::string(kRefuseSass));
      break;
    default: r = CUDA_ERROR_INVALID_VALUE; break;
  }
  publish_logs(l);
  return r;
}

LinkState* find_link(State& s, CUlinkState handle) noexcept {
  return s.find<LinkState>(SWCU_LINK_STATE, handle);
}

CUresult link_create(Sym sym, unsigned int count, CUjit_option* options, void** values,
                     CUlinkState* out) {
  return call(sym, [=](State& s) -> CUresult {
    Context* ctx = nullptr;
    if (const CUresult r = current_context(s, ctx)) return r;
    if (out == nullptr) return CUDA_ERROR_INVALID_VALUE;
    auto l = std::make_unique<LinkState>();
    if (const CUresult r = read_jit_options(count, options, values, l->request)) return r;
    l->values = values;
    l->count = count;
    publish_logs(*l);  // empty logs, zero sizes
    *out = reinterpret_cast<CUlinkState>(s.registry(SWCU_LINK_STATE).add(std::move(l)));
    return CUDA_SUCCESS;
  });
}

// The checks every add makes first; nullptr with the code to return.
LinkState* checked_link(State& s, CUlinkState handle, int type, unsigned int count,
                        CUjit_option* options, void** values, CUresult& r) {
  LinkState* const l = find_link(s, handle);
  if (l == nullptr) {
    r = CUDA_ERROR_INVALID_HANDLE;
    return nullptr;
  }
  if (type < 0 || type >= CU_JIT_NUM_INPUT_TYPES) {
    r = CUDA_ERROR_INVALID_VALUE;
    return nullptr;
  }
  if ((r = check_input_options(count, options, values)) != CUDA_SUCCESS) return nullptr;
  if (l->completed || l->linking > 0) {
    r = fail(*l, CUDA_ERROR_INVALID_VALUE,
             l->completed ? "cannot add an input: the link was already completed"
                          : "cannot add an input: the link is being completed");
    return nullptr;
  }
  return l;
}

CUresult link_add_data(Sym sym, CUlinkState state, CUjitInputType type, void* data,
                       std::size_t size, const char* name, unsigned int count,
                       CUjit_option* options, void** values) {
  const int kind = raw(type);
  return call(sym, [=](State& s) -> CUresult {
    CUresult r = CUDA_SUCCESS;
    LinkState* const l = checked_link(s, state, kind, count, options, values, r);
    if (l == nullptr) return r;
    if (data == nullptr || (size == 0 && kind != CU_JIT_INPUT_PTX)) {
      return fail(*l, CUDA_ERROR_INVALID_VALUE,
                  std::string(name != nullptr ? name : "input") + ": no data");
    }
    return add_input(*l, kind, static_cast<const unsigned char*>(data), size,
                     name != nullptr ? name : "");
  });
}

CUresult link_add_file(Sym sym, CUlinkState state, CUjitInputType type, const char* path,
                       unsigned int count, CUjit_option* options, void** values) {
  const int kind = raw(type);
  // The file is read before the state lock is taken (like cuModuleLoad).
  std::vector<unsigned char> bytes;
  const bool read = path != nullptr && read_file(path, bytes);
  return call(sym, [=, &bytes](State& s) -> CUresult {
    CUresult r = CUDA_SUCCESS;
    LinkState* const l = checked_link(s, state, kind, count, options, values, r);
    if (l == nullptr) return r;
    if (path == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (!read) {
      return fail(*l, CUDA_ERROR_FILE_NOT_FOUND, std::string(path) + ": cannot read the file");
    }
    if (bytes.empty()) return fail(*l, CUDA_ERROR_INVALID_VALUE, std::string(path) + ": empty");
    return add_input(*l, kind, bytes.data(), bytes.size(), path);
  });
}

}  // namespace
}  // namespace swcu

using swcu::call;
using swcu::State;
using swcu::Sym;

extern "C" {

CUresult cuLinkCreate_v2(unsigned int numOptions, CUjit_option* options, void** optionValues,
                         CUlinkState* stateOut) {
  return swcu::link_create(Sym::cuLinkCreate_v2, numOptions, options, optionValues, stateOut);
}

CUresult cuLinkAddData_v2(CUlinkState state, CUjitInputType type, void* data, size_t size,
                          const char* name, unsigned int numOptions, CUjit_option* options,
                          void** optionValues) {
  return swcu::link_add_data(Sym::cuLinkAddData_v2, state, type, data, size, name, numOptions,
                             options, optionValues);
}

CUresult cuLinkAddFile_v2(CUlinkState state, CUjitInputType type, const char* path,
                          unsigned int numOptions, CUjit_option* options, void** optionValues) {
  return swcu::link_add_file(Sym::cuLinkAddFile_v2, state, type, path, numOptions, options,
                             optionValues);
}

// nvJitLink calls back into the driver (cuInit and others), so it runs with the state lock
// released; the link state is looked up again afterwards.
CUresult cuLinkComplete(CUlinkState state, void** cubinOut, size_t* sizeOut) {
  return call(Sym::cuLinkComplete, [=](State& s, swcu::Lock& lock) -> CUresult {
    swcu::LinkState* l = swcu::find_link(s, state);
    if (l == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    if (cubinOut == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (!l->completed) {
      if (l->ptx.empty() && l->lto.empty()) {
        return swcu::fail(*l, CUDA_ERROR_INVALID_VALUE, "nothing to link: no input was added");
      }
      std::vector<swcu::PtxInput> inputs = l->ptx;
      if (!l->lto.empty()) {
        const std::vector<swcu::LtoInput> lto = l->lto;
        const std::size_t position = l->lto_position;
        std::string text;
        std::string why;
        const swcu::NvJitLink* const lib = swcu::nvjitlink(why);
        if (lib == nullptr) return swcu::fail(*l, CUDA_ERROR_NOT_SUPPORTED, why);
        ++l->linking;
        lock.unlock();
        bool ok = false;
        try {
          ok = swcu::lto_to_ptx(lib, lto, text, why);
        } catch (...) {
          lock.lock();
          throw;
        }
        lock.lock();
        l = swcu::find_link(s, state);
        if (l == nullptr) return CUDA_ERROR_INVALID_HANDLE;  // destroyed meanwhile
        --l->linking;
        if (!ok) return swcu::fail(*l, CUDA_ERROR_INVALID_IMAGE, why);
        std::string names;
        for (const auto& in : lto) names += (names.empty() ? "" : ", ") + in.name;
        inputs.insert(inputs.begin() + static_cast<std::ptrdiff_t>(position),
                      swcu::PtxInput{"LTO-IR (" + names + ") through nvJitLink", std::move(text)});
      }
      if (!l->completed) {  // (another thread may have completed it meanwhile)
        swcu::Merged merged = swcu::merge(inputs);
        if (merged.result != CUDA_SUCCESS) {
          for (const std::string& line : merged.errors) swcu::append_line(l->error_log, line);
          swcu::publish_logs(*l);
          return merged.result;
        }
        if (const CUresult r = swcu::check_ptx(*l, "the linked PTX", merged.text)) return r;
        l->image = std::move(merged.text);
        l->completed = true;
        swcu::append_line(l->info_log, "linked " + std::to_string(inputs.size()) +
                                           " PTX input(s) into one PTX module (" +
                                           std::to_string(l->image.size()) + " bytes, " +
                                           std::to_string(merged.resolved) +
                                           " external declaration(s) resolved)");
        swcu::publish_logs(*l);
      }
    }
    *cubinOut = l->image.data();
    if (sizeOut != nullptr) *sizeOut = l->image.size() + 1;  // with the NUL
    return CUDA_SUCCESS;
  });
}

CUresult cuLinkDestroy(CUlinkState state) {
  return call(Sym::cuLinkDestroy, [=](State& s) -> CUresult {
    if (swcu::find_link(s, state) == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    s.destroy(SWCU_LINK_STATE, state);
    return CUDA_SUCCESS;
  });
}

// The CUDA 5.5 ABI: the same parameters (cuda.h declares both alike).
CUresult cuLinkCreate(unsigned int numOptions, CUjit_option* options, void** optionValues,
                      CUlinkState* stateOut) {
  return swcu::link_create(Sym::cuLinkCreate, numOptions, options, optionValues, stateOut);
}

CUresult cuLinkAddData(CUlinkState state, CUjitInputType type, void* data, size_t size,
                       const char* name, unsigned int numOptions, CUjit_option* options,
                       void** optionValues) {
  return swcu::link_add_data(Sym::cuLinkAddData, state, type, data, size, name, numOptions, options,
                             optionValues);
}

CUresult cuLinkAddFile(CUlinkState state, CUjitInputType type, const char* path,
                       unsigned int numOptions, CUjit_option* options, void** optionValues) {
  return swcu::link_add_file(Sym::cuLinkAddFile, state, type, path, numOptions, options,
                             optionValues);
}

}  // extern "C"
