// Tuning from the API (issue 12): a program compiled with a tuning budget
// (tilec_compile_options.tune_budget_seconds, the C++ CompileRequest) is
// tuned on first use and its winners kept in the tuning cache; without a
// budget nothing is tuned; a bad budget is a usage error. This binary points
// the process's tuning cache at its own file before anything reads the
// settings, so no other test sees its records.
#include <gtest/gtest.h>
#include <tilec/tilec.h>

#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "runtime/program_cache.h"
#include "runtime/settings.h"

namespace {

namespace fs = std::filesystem;

const std::string kCacheFile = [] {
  std::string path = (fs::temp_directory_path() / fmt::format("tilec_tune_api_test_{}.jsonl", getpid())).string();
  fs::remove(path);
  setenv("TILEC_TUNING_CACHE_FILE", path.c_str(), 1);
  unsetenv("TILEC_TUNING_CACHE");
  unsetenv("TILEC_TUNE");
  return path;
}();

int Lines() {
  std::ifstream in(kCacheFile);
  int n = 0;
  for (std::string line; std::getline(in, line);) n += !line.empty();
  return n;
}

// A matmul whose sizes divide no block.
const char* kMatmul = "function (A[M, L], B[L, N]) -> (C) { C[i, j : M, N] = +(A[i, k] * B[k, j]); }";

TEST(TuneApi, CompileWithABudgetTunesOnFirstUse) {
  ASSERT_EQ(tilec::runtime::ProcessTuningCache().options().path, kCacheFile);
  tilec_device device = nullptr;
  tilec_error e = nullptr;
  ASSERT_EQ(tilec_device_open("llvm", &device, &e), TILEC_OK);
  int64_t a[2] = {9, 7}, b[2] = {7, 5};
  tilec_tensor_spec in[2] = {{"A", TILEC_F32, 2, a, nullptr}, {"B", TILEC_F32, 2, b, nullptr}};
  tilec_program program = nullptr;

  // No budget: nothing is tuned.
  ASSERT_EQ(tilec_program_compile(device, kMatmul, "mm.tile", in, 2, nullptr, &program, &e), TILEC_OK);
  ASSERT_EQ(tilec_program_release(program), TILEC_OK);
  EXPECT_EQ(Lines(), 0);

  tilec_compile_options options{};
  options.tune_budget_seconds = -1;
  EXPECT_EQ(tilec_program_compile(device, kMatmul, "mm.tile", in, 2, &options, &program, &e), TILEC_ERROR_USAGE);
  EXPECT_NE(std::string(tilec_error_text(e)).find("tune_budget_seconds"), std::string::npos);
  tilec_error_release(e);

  options.tune_budget_seconds = 60;
  options.no_cache = 1;
  ASSERT_EQ(tilec_program_compile(device, kMatmul, "mm.tile", in, 2, &options, &program, &e), TILEC_OK)
      << (e ? tilec_error_text(e) : "");
  ASSERT_EQ(tilec_program_release(program), TILEC_OK);
  EXPECT_EQ(Lines(), 1);
  // Known now: a second compile with a budget tunes nothing more.
  ASSERT_EQ(tilec_program_compile(device, kMatmul, "mm.tile", in, 2, &options, &program, &e), TILEC_OK);
  ASSERT_EQ(tilec_program_release(program), TILEC_OK);
  EXPECT_EQ(Lines(), 1);
  ASSERT_EQ(tilec_device_release(device), TILEC_OK);

  // The runtime's compile applies the record; use_tuning_cache false does not.
  tilec::runtime::CompileRequest request;
  request.source = tilec::MakeSource("mm.tile", kMatmul);
  request.shapes = {{"A", {tilec::lang::DataType::F32, {9, 7}}}, {"B", {tilec::lang::DataType::F32, {7, 5}}}};
  auto llvm = tilec::runtime::OpenSharedDevice("llvm");
  auto tuned = tilec::runtime::ProcessProgramCache().Compile(request, llvm, false);
  EXPECT_TRUE(tuned->compiled().kernels.at(0).tuned);
  request.use_tuning_cache = false;
  auto untuned = tilec::runtime::ProcessProgramCache().Compile(request, llvm, false);
  EXPECT_FALSE(untuned->compiled().kernels.at(0).tuned);
  fs::remove(kCacheFile);
}

}  // namespace
