#include "support/source.h"

namespace tilec {

std::string_view SourceFile::Line(int line) const {
  if (line < 1) return {};
  size_t pos = 0;
  for (int l = 1; l < line; ++l) {
    pos = text.find('\n', pos);
    if (pos == std::string::npos) return {};
    ++pos;
  }
  size_t end = text.find('\n', pos);
  if (end == std::string::npos) end = text.size();
  std::string_view v(text.data() + pos, end - pos);
  if (!v.empty() && v.back() == '\r') v.remove_suffix(1);
  return v;
}

SourceFilePtr MakeSource(std::string name, std::string text) {
  return std::make_shared<const SourceFile>(SourceFile{std::move(name), std::move(text)});
}

static bool Before(const SourceLoc& a, const SourceLoc& b) {
  return a.line < b.line || (a.line == b.line && a.col < b.col);
}

SourceSpan Join(const SourceSpan& a, const SourceSpan& b) {
  if (!a.known()) return b;
  if (!b.known()) return a;
  SourceSpan r;
  r.begin = Before(a.begin, b.begin) ? a.begin : b.begin;
  r.end = Before(a.end, b.end) ? b.end : a.end;
  return r;
}

}  // namespace tilec
