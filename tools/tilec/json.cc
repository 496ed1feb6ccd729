// The JSON value of `--json` outputs (see json.h).
#include "tools/tilec/json.h"

#include <fmt/format.h>

#include <cmath>

#include "support/error.h"

namespace tilec::tools {

std::string JsonQuote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += fmt::format("\\u{:04x}", static_cast<int>(c));
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

Json Json::Object() {
  Json j;
  j.kind_ = Kind::Object;
  return j;
}

Json Json::Array() {
  Json j;
  j.kind_ = Kind::Array;
  return j;
}

Json::Json(std::string_view s) : kind_(Kind::String), text_(JsonQuote(s)) {}

Json::Json(double v) : kind_(Kind::Number), text_(std::isfinite(v) ? fmt::format("{}", v) : "null") {
  if (!std::isfinite(v)) kind_ = Kind::Null;
}

Json::Json(int64_t v) : kind_(Kind::Number), text_(fmt::format("{}", v)) {}

Json::Json(bool v) : kind_(Kind::Bool), text_(v ? "true" : "false") {}

Json& Json::Set(std::string key, Json value) {
  TILEC_CHECK(kind_ == Kind::Object, "Json::Set on a non-object");
  for (auto& [k, v] : items_)
    if (k == key) {
      v = std::move(value);
      return *this;
    }
  items_.emplace_back(std::move(key), std::move(value));
  return *this;
}

Json& Json::Push(Json value) {
  TILEC_CHECK(kind_ == Kind::Array, "Json::Push on a non-array");
  items_.emplace_back(std::string(), std::move(value));
  return *this;
}

std::string Json::Dump(int indent) const {
  std::string out;
  DumpTo(out, indent, 0);
  return out;
}

void Json::DumpTo(std::string& out, int indent, int depth) const {
  switch (kind_) {
    case Kind::Null: out += "null"; return;
    case Kind::Bool:
    case Kind::Number:
    case Kind::String: out += text_; return;
    case Kind::Array:
    case Kind::Object: break;
  }
  bool object = kind_ == Kind::Object;
  out += object ? '{' : '[';
  if (items_.empty()) {
    out += object ? '}' : ']';
    return;
  }
  // Arrays of numbers and strings (shapes, tiles) stay on one line.
  bool flat = indent < 0;
  if (!object) {
    flat = true;
    for (const auto& item : items_)
      if (item.second.kind_ == Kind::Array || item.second.kind_ == Kind::Object) flat = false;
  }
  if (flat) indent = -1;
  auto newline = [&](int d) {
    if (indent < 0) return;
    out += '\n';
    out.append(static_cast<size_t>(indent * d), ' ');
  };
  for (size_t i = 0; i < items_.size(); ++i) {
    if (i > 0) out += indent < 0 ? ", " : ",";
    newline(depth + 1);
    if (object) out += JsonQuote(items_[i].first) + ": ";
    items_[i].second.DumpTo(out, indent, depth + 1);
  }
  newline(depth);
  out += object ? '}' : ']';
}

}  // namespace tilec::tools
