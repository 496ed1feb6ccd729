#include "support/error.h"

#include <algorithm>

namespace tilec {

void UserError::SetMoreErrors(std::vector<UserError> more) {
  more_ = more.empty() ? nullptr : std::make_shared<const std::vector<UserError>>(std::move(more));
}

const std::vector<UserError>& UserError::more_errors() const {
  static const std::vector<UserError> kNone;
  return more_ ? *more_ : kNone;
}

std::string UserError::Render(int width) const {
  std::string out = RenderOne(width);
  if (!more_) return out;
  size_t shown = std::min(more_->size(), static_cast<size_t>(kMaxRenderedErrors - 1));
  for (size_t i = 0; i < shown; ++i) out += "\n" + (*more_)[i].RenderOne(width);
  if (size_t rest = more_->size() - shown; rest > 0)
    out += fmt::format("\n\u2026 and {} more error{}", rest, rest == 1 ? "" : "s");
  return out;
}

std::string UserError::RenderOne(int width) const {
  if (!file_ || !span_.known()) {
    if (file_) return fmt::format("{}: {}: {}", file_->name, severity_, message_);
    return fmt::format("{}: {}", severity_, message_);
  }
  std::string out = fmt::format("{}:{}:{}: {}: {}\n", file_->name, span_.begin.line,
                                span_.begin.col, severity_, message_);
  std::string_view line = file_->Line(span_.begin.line);
  const int len = static_cast<int>(line.size());
  // Columns are 1-based; the caret covers [begin, end) on this line.
  int begin = std::max(1, span_.begin.col);
  int end = span_.end.line == span_.begin.line ? std::max(begin + 1, span_.end.col) : len + 1;
  end = std::min(end, std::max(begin + 1, len + 1));
  // The window [lo, hi) of columns shown: the whole line if it fits, else
  // as much as fits in `width` beside the ellipses: from the start when the
  // caret is in the first two thirds, else with a third of it before the caret.
  width = std::max(width, kMinWidth);
  int lo = 1, hi = len + 1;
  if (len > width) {
    if (begin <= (width - 1) * 2 / 3) {
      hi = width;  // width - 1 columns, then the ellipsis
    } else {
      const int room = width - 2;
      lo = begin - room / 3;
      hi = std::min(len + 1, lo + room);
      lo = std::max(2, hi - room);
    }
  }
  const char* kEllipsis = "\u2026";  // one column wide
  std::string shown = lo > 1 ? kEllipsis : "";
  shown += line.substr(lo - 1, hi - lo);
  if (hi <= len) shown += kEllipsis;
  out += shown + "\n";
  // Caret under the first column, tildes to the end of the span in the window.
  std::string caret = lo > 1 ? " " : "";
  for (int c = lo; c < begin; ++c) {
    // Keep tabs so the caret lines up under the same column.
    caret += (c - 1 < len && line[c - 1] == '\t') ? '\t' : ' ';
  }
  caret += '^';
  for (int c = begin + 1; c < std::min(end, hi); ++c) caret += '~';
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
