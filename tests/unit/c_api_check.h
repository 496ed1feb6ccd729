// Shared by the C ABI's tests: taking an error's text, and asserting a
// call's status and error.
#pragma once

#include <gtest/gtest.h>
#include <tilec/tilec.h>

#include <string>

namespace tilec::testing {

// The error's text, released ("(no error object)" for null).
inline std::string Take(tilec_error e) {
  if (!e) return "(no error object)";
  std::string s = tilec_error_text(e);
  EXPECT_EQ(tilec_error_release(e), TILEC_OK);
  return s;
}

}  // namespace tilec::testing

// `call` (which may pass &e_ for its error) returns TILEC_OK.
#define ASSERT_TILEC_OK(call)                                                       \
  do {                                                                              \
    tilec_error e_ = nullptr;                                                       \
    tilec_status st_ = (call);                                                      \
    ASSERT_EQ(st_, TILEC_OK) << #call << ": " << ::tilec::testing::Take(e_);        \
  } while (0)

// `call` (which passes &err_ for its error) returns `kind` with an error of
// that kind whose text contains `part`.
#define EXPECT_ERROR(call, kind, part)                                              \
  do {                                                                              \
    tilec_error err_ = nullptr;                                                     \
    tilec_status st_ = (call);                                                      \
    EXPECT_EQ(st_, kind) << #call;                                                  \
    ASSERT_NE(err_, nullptr) << #call;                                              \
    EXPECT_EQ(tilec_error_kind(err_), kind) << #call;                               \
    std::string text_ = ::tilec::testing::Take(err_);                               \
    EXPECT_NE(text_.find(part), std::string::npos) << #call << ": " << text_;       \
  } while (0)

#define EXPECT_USAGE(call, part) EXPECT_ERROR(call, TILEC_ERROR_USAGE, part)
