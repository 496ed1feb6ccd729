#include "support/error.h"

#include <algorithm>

namespace tilec {

std::string UserError::Render() const {
  if (!file_ || !span_.known()) {
    if (file_) return fmt::format("{}: error: {}", file_->name, message_);
    return fmt::format("error: {}", message_);
  }
  std::string out = fmt::format("{}:{}:{}: error: {}\n", file_->name, span_.begin.line,
                                span_.begin.col, message_);
  std::string_view line = file_->Line(span_.begin.line);
  out += fmt::format("{}\n", line);
  // Caret under the first column, tildes to the end of the span on that line.
  int begin = std::max(1, span_.begin.col);
  int end = span_.end.line == span_.begin.line ? std::max(begin + 1, span_.end.col)
                                               : static_cast<int>(line.size()) + 1;
  end = std::min(end, std::max(begin + 1, static_cast<int>(line.size()) + 1));
  std::string caret;
  for (int c = 1; c < begin; ++c) {
    // Keep tabs so the caret lines up under the same column.
    caret += (c - 1 < static_cast<int>(line.size()) && line[c - 1] == '\t') ? '\t' : ' ';
  }
  caret += '^';
  for (int c = begin + 1; c < end; ++c) caret += '~';
  out += caret;
  return out;
}

std::string InternalError::Render() const {
  return fmt::format("internal error: {}\nThis is a bug in Tilec; please report it with the input that caused it.",
                     what());
}

std::string DeviceError::Render() const {
  if (build_log_.empty()) return fmt::format("device error: {}", what());
  return fmt::format("device error: {}\n--- build log ---\n{}", what(), build_log_);
}

void ThrowInternal(const char* file, int line, const char* cond, const std::string& msg) {
  std::string text = fmt::format("{}:{}: check failed: {}", file, line, cond);
  if (!msg.empty()) text += ": " + msg;
  throw InternalError(text);
}

}  // namespace tilec
