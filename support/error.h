// The three kinds of error Tilec reports, and the macros that raise them.
//
//  * UserError     — the user's input is wrong (malformed Tile, wrong shapes,
//                    bad .npy file, unknown layout, …). Carries a message and,
//                    when the error is in Tile source, the file and span, and
//                    prints as `file:line:col: error: msg` + the line + a caret.
//  * InternalError — a bug in Tilec: a violated invariant. Prints the failed
//                    condition and its place in Tilec's code and asks for a report.
//  * DeviceError   — the device or its driver failed (no device, build failure,
//                    launch failure). Carries the driver's build log if any.
//
// Messages are built only on failure: the macros take fmt-style arguments.
#pragma once

#include <fmt/format.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/source.h"

namespace tilec {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
  // The full text to show a user (may be several lines).
  virtual std::string Render() const { return what(); }
};

class UserError : public Error {
 public:
  explicit UserError(std::string message) : Error(message), message_(std::move(message)) {}
  UserError(std::string message, SourceFilePtr file, SourceSpan span)
      : Error(message), message_(std::move(message)), file_(std::move(file)), span_(span) {}

  // A diagnostic that does not stop the compile (lang::Lint): rendered as
  // `file:line:col: warning: message` with the same source line and caret.
  static UserError Warning(std::string message, SourceFilePtr file, SourceSpan span) {
    UserError w(std::move(message), std::move(file), span);
    w.severity_ = "warning";
    return w;
  }

  const std::string& message() const { return message_; }
  const SourceFilePtr& file() const { return file_; }
  const SourceSpan& span() const { return span_; }

  // `file:line:col: error: message` followed by the source line and a caret
  // line (`^~~~` under the span), or `error: message` without a location.
  // A source line wider than `width` columns is clipped to a window of that
  // width around the caret, with `…` where text was cut.
  // With further errors (more_errors()), they follow in reading order, at
  // most kMaxRenderedErrors in all, then "… and N more errors".
  std::string Render() const override { return Render(kDefaultWidth); }
  virtual std::string Render(int width) const;
  static constexpr int kDefaultWidth = 160;
  static constexpr int kMinWidth = 20;
  static constexpr int kMaxRenderedErrors = 10;

  // Errors found after this one (a parser that recovers, see ParseOptions);
  // this error stays the first, and message() and span() are its own.
  void SetMoreErrors(std::vector<UserError> more);
  const std::vector<UserError>& more_errors() const;
  size_t error_count() const { return 1 + more_errors().size(); }

 private:
  std::string RenderOne(int width) const;

  std::string message_;
  SourceFilePtr file_;
  SourceSpan span_;
  std::shared_ptr<const std::vector<UserError>> more_;  // shared: errors are copied when thrown
  const char* severity_ = "error";
};

class InternalError : public Error {
 public:
  explicit InternalError(std::string message) : Error(std::move(message)) {}
  std::string Render() const override;
};

// Misuse of the embedding API by the program calling it (a handle or
// argument that cannot be right whatever the Tile source says, e.g. a cl_mem
// from another OpenCL context): the C ABI's TILEC_ERROR_USAGE.
class UsageError : public Error {
 public:
  explicit UsageError(std::string message) : Error(std::move(message)) {}
};

class DeviceError : public Error {
 public:
  explicit DeviceError(std::string message, std::string build_log = {})
      : Error(std::move(message)), build_log_(std::move(build_log)) {}
  const std::string& build_log() const { return build_log_; }
  std::string Render() const override;

 private:
  std::string build_log_;
};

[[noreturn]] void ThrowInternal(const char* file, int line, const char* cond, const std::string& msg);

}  // namespace tilec

// A user error without a source location: TILEC_USER_ERROR("bad shape {}", s);
#define TILEC_USER_ERROR(...) throw ::tilec::UserError(::fmt::format(__VA_ARGS__))

// A user error at a span of a source file.
#define TILEC_USER_ERROR_AT(file, span, ...) \
  throw ::tilec::UserError(::fmt::format(__VA_ARGS__), (file), (span))

// An internal invariant: TILEC_CHECK(i < n, "index {} out of {}", i, n);
#define TILEC_CHECK(cond, ...)                                                        \
  do {                                                                                \
    if (!(cond)) [[unlikely]]                                                         \
      ::tilec::ThrowInternal(__FILE__, __LINE__, #cond, ::fmt::format("" __VA_ARGS__)); \
  } while (0)

#define TILEC_UNREACHABLE(...) \
  ::tilec::ThrowInternal(__FILE__, __LINE__, "unreachable", ::fmt::format("" __VA_ARGS__))
