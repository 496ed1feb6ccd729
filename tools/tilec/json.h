// A small JSON value for `--json` outputs: objects keep their keys in
// insertion order (stable output for tests and diffs), numbers print in the
// shortest form that reads back the same, and non-finite numbers (which
// JSON cannot express) print as null.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tilec::tools {

class Json {
 public:
  static Json Object();
  static Json Array();
  Json() = default;  // null
  Json(std::string_view s);
  Json(const char* s) : Json(std::string_view(s)) {}
  Json(const std::string& s) : Json(std::string_view(s)) {}
  Json(double v);
  Json(int64_t v);
  Json(int v) : Json(static_cast<int64_t>(v)) {}
  Json(size_t v) : Json(static_cast<int64_t>(v)) {}
  Json(bool v);
  template <typename T>
  static Json ArrayOf(const std::vector<T>& values) {
    Json a = Array();
    for (const T& v : values) a.Push(Json(v));
    return a;
  }

  // Pre: this is an object (Set) or an array (Push). Return *this.
  Json& Set(std::string key, Json value);
  Json& Push(Json value);

  // Compact (one line) when indent < 0, else pretty with `indent` spaces.
  std::string Dump(int indent = -1) const;

 private:
  enum class Kind { Null, Bool, Number, String, Array, Object };
  void DumpTo(std::string& out, int indent, int depth) const;

  Kind kind_ = Kind::Null;
  std::string text_;  // Bool, Number: the literal; String: the quoted literal
  std::vector<std::pair<std::string, Json>> items_;  // Array: values with empty keys
};

// `s` as a JSON string literal, quotes included.
std::string JsonQuote(std::string_view s);

}  // namespace tilec::tools
