// The samples' command lines: `--name=value` options with defaults. Anything else prints the
// usage and exits with status 2.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>

namespace samples {

/// Parsed `--name=value` options.
class options {
 public:
  /// Parses argv against `known` (name and default value of each option).
  options(int argc, char** argv,
          std::initializer_list<std::pair<const std::string, std::string>> known)
      : values_{known} {
    for (int i = 1; i < argc; ++i) {
      const std::string_view arg{argv[i]};
      const auto equals = arg.find('=');
      const auto it = arg.starts_with("--") && equals != std::string_view::npos
                          ? values_.find(std::string{arg.substr(2, equals - 2)})
                          : values_.end();
      if (it == values_.end()) {
        usage(argv[0]);
      }
      it->second = arg.substr(equals + 1);
    }
  }

  /// The option's value as text.
  [[nodiscard]] const std::string& text(const std::string& name) const { return values_.at(name); }

  /// The option's value as a positive integer; exits with a message if it is not one.
  [[nodiscard]] int positive(const std::string& name) const {
    const auto& value = text(name);
    try {
      std::size_t used = 0;
      const int number = std::stoi(value, &used);
      if (used == value.size() && number > 0) {
        return number;
      }
    } catch (const std::logic_error&) {
    }
    std::fprintf(stderr, "--%s must be a positive integer, not '%s'\n", name.c_str(),
                 value.c_str());
    std::exit(2);
  }

 private:
  [[noreturn]] void usage(const char* program) const {
    std::fprintf(stderr, "usage: %s", program);
    for (const auto& [name, value] : values_) {
      std::fprintf(stderr, " [--%s=VALUE (%s)]", name.c_str(), value.c_str());
    }
    std::fputc('\n', stderr);
    std::exit(2);
  }

  std::map<std::string, std::string> values_;
};

}  // namespace samples
