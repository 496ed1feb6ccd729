#include "tools/tilec/common.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "tile_lang/binder.h"

namespace tilec::tools {
namespace {

// The NAME and VALUE of a NAME=VALUE argument, or an error message.
std::string CheckNameValue(const std::string& arg, NameValue* out) {
  size_t eq = arg.find('=');
  if (eq == std::string::npos) return fmt::format("expected NAME=VALUE, got '{}'", arg);
  if (eq == 0) return fmt::format("missing NAME before '=' in '{}'", arg);
  if (eq + 1 == arg.size()) return fmt::format("missing VALUE after '=' in '{}'", arg);
  if (out) *out = {arg.substr(0, eq), arg.substr(eq + 1)};
  return {};
}

NameValue Split(const std::string& arg) {
  NameValue nv;
  std::string error = CheckNameValue(arg, &nv);
  // Arguments reach here only through the validators, which ran CheckNameValue.
  TILEC_CHECK(error.empty(), "{}", error);
  return nv;
}

}  // namespace

SourceFilePtr ReadSourceFile(const std::string& path) {
  errno = 0;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) TILEC_USER_ERROR("cannot open '{}': {}", path, std::strerror(errno));
  std::string text;
  char buf[1 << 16];
  for (;;) {
    size_t n = std::fread(buf, 1, sizeof buf, f.get());
    text.append(buf, n);
    if (n < sizeof buf) break;
  }
  if (std::ferror(f.get())) TILEC_USER_ERROR("cannot read '{}': {}", path, std::strerror(errno));
  return MakeSource(path, std::move(text));
}

CLI::Validator NameValueValidator() {
  return CLI::Validator([](std::string& arg) { return CheckNameValue(arg, nullptr); }, "");
}

CLI::Validator NameShapeValidator() {
  return CLI::Validator(
      [](std::string& arg) -> std::string {
        NameValue nv;
        std::string error = CheckNameValue(arg, &nv);
        if (!error.empty()) return error;
        try {
          lang::ParseShape(nv.value);
        } catch (const UserError& e) {
          return fmt::format("bad shape in '{}': {}", arg, e.message());
        }
        return {};
      },
      "");
}

std::map<std::string, std::string> SplitNameValues(const std::vector<std::string>& args,
                                                   const std::string& option) {
  std::map<std::string, std::string> result;
  for (const std::string& arg : args) {
    NameValue nv = Split(arg);
    if (!result.emplace(nv.name, nv.value).second)
      throw CLI::ValidationError(option, fmt::format("'{}' is given more than once", nv.name));
  }
  return result;
}

std::map<std::string, lang::Shape> ParseShapeArgs(const std::vector<std::string>& args,
                                                  const std::string& option) {
  std::map<std::string, lang::Shape> result;
  for (const auto& [name, spec] : SplitNameValues(args, option)) result.emplace(name, lang::ParseShape(spec));
  return result;
}

std::string JoinNames(const std::vector<std::string>& names) {
  if (names.empty()) return "none";
  return fmt::format("{}", fmt::join(names, ", "));
}

}  // namespace tilec::tools
