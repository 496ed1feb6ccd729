// Shared by the libFuzzer harnesses of tests/fuzz (see docs/testing.md).
//
// A harness feeds its input to one Tilec entry point. A UserError is the
// expected answer to bad input; anything else (an InternalError, another
// exception, a crash, a sanitizer report, a hang) is a finding: Guarded
// prints it and aborts, which libFuzzer and the replay driver both report.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>

#include "support/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace tilec::fuzz {

template <typename F>
void Guarded(F&& body) {
  try {
    body();
  } catch (const UserError&) {
    // Bad input, reported as such: fine.
  } catch (const Error& e) {
    std::fprintf(stderr, "fuzz finding: %s\n", e.Render().c_str());
    std::abort();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz finding: unexpected exception: %s\n", e.what());
    std::abort();
  }
}

// An input "TEXT\0PARAMS": the text before the first NUL byte (all of it if
// there is none) and the parameter bytes after it. Seed files (Tile sources,
// layout specs) have no NUL, so their parameters take their defaults.
struct SplitInput {
  std::string_view text;
  std::string_view params;
};

inline SplitInput Split(const uint8_t* data, size_t size) {
  std::string_view all(reinterpret_cast<const char*>(data), size);
  size_t nul = all.find('\0');
  if (nul == std::string_view::npos) return {all, {}};
  return {all.substr(0, nul), all.substr(nul + 1)};
}

// Reads parameter bytes one at a time; `fallback` once they run out.
class ParamReader {
 public:
  explicit ParamReader(std::string_view bytes) : bytes_(bytes) {}
  bool empty() const { return pos_ >= bytes_.size(); }
  uint8_t Next(uint8_t fallback) {
    return empty() ? fallback : static_cast<uint8_t>(bytes_[pos_++]);
  }

 private:
  std::string_view bytes_;
  size_t pos_ = 0;
};

}  // namespace tilec::fuzz
