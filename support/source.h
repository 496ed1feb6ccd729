// Source text and locations. Every AST node keeps a SourceSpan so that user
// errors anywhere in the pipeline can point at the Tile text that caused them.
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace tilec {

// A named piece of source text (a .tile file, or a string given to the API).
struct SourceFile {
  std::string name;  // shown in diagnostics, e.g. "examples/conv_relu.tile"
  std::string text;

  // The text of 1-based line `line`, without its newline; empty if out of range.
  std::string_view Line(int line) const;
};

using SourceFilePtr = std::shared_ptr<const SourceFile>;

SourceFilePtr MakeSource(std::string name, std::string text);

// 1-based line and column (columns count bytes). line == 0 means "unknown".
struct SourceLoc {
  int line = 0;
  int col = 0;
  bool operator==(const SourceLoc&) const = default;
};

// Half-open range [begin, end) in one file; end may equal begin for a point.
struct SourceSpan {
  SourceLoc begin;
  SourceLoc end;
  bool known() const { return begin.line > 0; }
  bool operator==(const SourceSpan&) const = default;
};

// Smallest span covering both.
SourceSpan Join(const SourceSpan& a, const SourceSpan& b);

}  // namespace tilec
