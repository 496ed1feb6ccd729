// Shared by the execution tests of the kernel pipeline (OpenCL and LLVM):
// bind a Tile program (with layouts), compile it for a device with given
// options, run it on random inputs and compare every output with the
// reference evaluator.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "hal/hal.h"
#include "runtime/program.h"
#include "runtime/settings.h"
#include "support/error.h"
#include "tile_lang/binder.h"
#include "tile_lang/evaluator.h"
#include "tile_lang/parser.h"

namespace tilec::testing {

struct Case {
  Case(std::string source, std::map<std::string, lang::Shape> shapes,
       std::map<std::string, std::string> layouts = {})
      : source(std::move(source)), shapes(std::move(shapes)), layouts(std::move(layouts)) {}
  std::string source;
  std::map<std::string, lang::Shape> shapes;
  std::map<std::string, std::string> layouts;
};

inline lang::Shape F32(std::vector<int64_t> dims) { return {lang::DataType::F32, std::move(dims)}; }
inline lang::Shape Of(lang::DataType t, std::vector<int64_t> dims) { return {t, std::move(dims)}; }
inline lang::Shape F64(std::vector<int64_t> dims) { return {lang::DataType::F64, std::move(dims)}; }

// A CPU with 16 f32 lanes and 32 vector registers (AVX-512), two cores,
// one thread per work group: a hardware model written out, not the host's.
inline compiler::HardwareModel Cpu16() {
  compiler::HardwareModel hw;
  hw.name = "cpu16";
  hw.threads = 1;
  hw.local_memory_managed = false;
  hw.max_mem = 32768;
  hw.vec_size = 16;
  hw.vector_registers = 32;
  hw.compute_units = 2;
  hw.goal_groups = 8;
  hw.peak_gflops = 384;
  hw.mem_bandwidth_gbs = 20;
  return hw;
}

// The first device with an id starting with `prefix`, opened once with the
// process's settings (runtime::OpenDevice: TILEC_CPU forces the CPU, as CI's
// second pass does); null if there is none (tests then skip).
inline std::shared_ptr<hal::Device> DeviceFor(const std::string& prefix) {
  static std::map<std::string, std::shared_ptr<hal::Device>> devices;
  auto it = devices.find(prefix);
  if (it != devices.end()) return it->second;
  std::shared_ptr<hal::Device> d;
  for (const std::string& id : hal::ListDeviceIds())
    if (id.rfind(prefix, 0) == 0) {
      d = runtime::OpenDevice(id);
      break;
    }
  return devices[prefix] = d;
}

// The CPUs the tests that check plans describe, by their LLVM names: an
// AVX-512 CPU (16 f32 lanes, 32 vector registers, full-width FMA units)
// and an AVX2 one (8 lanes, 16 registers), at the x86-64 levels any such
// host can run. Caches are NamedCpu's defaults for both (32 KB L1d, 1 MB L2,
// 32 MB L3); threads are the host's (2 on every CI machine).
inline constexpr const char* kAvx512Cpu = "x86-64-v4";
inline constexpr const char* kAvx2Cpu = "x86-64-v3";

// The device whose id starts with `prefix`, planning (and on llvm,
// compiling) for the CPU LLVM calls `cpu` (hal::DeviceOptions::cpu), opened
// once per pair; null if there is no such device. A test that checks a plan
// opens its device here, so its expectations hold on any host.
inline std::shared_ptr<hal::Device> PinnedDevice(const std::string& prefix, const std::string& cpu) {
  static std::map<std::string, std::shared_ptr<hal::Device>> devices;
  std::string key = prefix + " " + cpu;
  auto it = devices.find(key);
  if (it != devices.end()) return it->second;
  std::shared_ptr<hal::Device> d;
  for (const std::string& id : hal::ListDeviceIds())
    if (id.rfind(prefix, 0) == 0) {
      hal::DeviceOptions options;
      options.cpu = cpu;
      d = hal::OpenDevice(id, options);
      break;
    }
  return devices[key] = d;
}

// Whether `device` runs its code here; if not, says so in the test's output
// ("skipped: host has no AVX-512 …") and marks the test skipped: its plans
// are still checked, compiled without being run.
inline bool RunsHere(const hal::Device& device) {
  std::string why = device.WhyCannotRun();
  if (why.empty()) return true;
  bool avx512 = why.find("avx512") != std::string::npos;
  std::string text = fmt::format("skipped: {} ({} on {}: plans checked, kernels not run)",
                                 avx512 ? "host has no AVX-512" : "host cannot run this CPU's code", why,
                                 device.hardware_model().name);
  std::cout << text << "\n";
  [&] { GTEST_SKIP() << text; }();  // GTEST_SKIP returns from a void function
  return false;
}

inline lang::Program BindCase(const Case& c) {
  return lang::Bind(lang::Parse(MakeSource("test.tile", c.source)), c.shapes, c.layouts);
}

// Every kernel's vector plan (forms/vector.cc), concatenated ("" if none has one).
inline std::string VectorPlans(const runtime::Program& program) {
  std::string plans;
  for (const auto& k : program.compiled().kernels) plans += k.code.plan_text;
  return plans;
}

// Random inputs for every input of `bound` (seeds 1, 2, … in input order
// from `seed`).
inline std::map<std::string, lang::Tensor> RandomInputs(const lang::Program& bound,
                                                        uint64_t seed = 1) {
  std::map<std::string, lang::Tensor> inputs;
  for (const std::string& name : bound.inputs) {
    lang::Tensor t(bound.Tensor(name).shape);
    lang::FillRandom(t, seed++);
    inputs.emplace(name, std::move(t));
  }
  return inputs;
}

// Compares each expected output with the actual one (relative tolerance
// `tol`), reporting at most 5 wrong elements per output. False on any
// mismatch.
inline bool OutputsMatch(const std::map<std::string, lang::Tensor>& expected,
                         const std::map<std::string, lang::Tensor>& actual, const std::string& what,
                         double tol = 1e-4) {
  for (const auto& [name, want] : expected) {
    if (!actual.count(name)) {
      ADD_FAILURE() << what << ": no output " << name;
      return false;
    }
    const lang::Tensor& got = actual.at(name);
    if (!(got.shape() == want.shape())) {
      ADD_FAILURE() << what << ": " << name << " has shape " << ToString(got.shape());
      return false;
    }
    int bad = 0;
    for (int64_t i = 0; i < want.size() && bad < 5; ++i) {
      double w = want.GetDouble(i), g = got.GetDouble(i);
      if (!(std::fabs(w - g) <= tol * std::max(1.0, std::fabs(w)))) {
        ++bad;
        ADD_FAILURE() << what << ": " << name << "[" << i << "] = " << g << ", expected " << w;
      }
    }
    if (bad) return false;
  }
  return true;
}

// Runs `program` on random inputs and compares each output with the
// evaluator (relative tolerance `tol`). Reports at most 5 wrong elements per
// output, then the target code.
inline void CompareWithEvaluator(runtime::Program& program, const std::string& what,
                                 double tol = 1e-4) {
  const lang::Program& bound = program.bound();
  std::map<std::string, lang::Tensor> inputs = RandomInputs(bound);
  auto expected = lang::Evaluate(bound, inputs);
  auto actual = program.Run(inputs);
  ASSERT_FALSE(expected.empty()) << what;
  if (!OutputsMatch(expected, actual, what, tol))
    ADD_FAILURE() << "kernel code:\n" << program.TargetCode();
}

// Compiles `bound` for `device` with `options` as given (options.hw kept),
// and builds it only where the host runs the device's code; elsewhere
// RunsHere marks the test skipped and the program is compiled only (its
// plans and code are there; running it is a UserError).
inline std::unique_ptr<runtime::Program> CompileCase(const std::shared_ptr<hal::Device>& device,
                                                     const lang::Program& bound,
                                                     const compiler::CompileOptions& options) {
  if (!RunsHere(*device))
    return std::make_unique<runtime::Program>(runtime::Program::CompileOnly(bound, device, options, true));
  return std::make_unique<runtime::Program>(runtime::Program::Compile(bound, device, options, true));
}

// Compiles `c` for `device` with `options` (its hardware model) and, where
// the host runs the device's code, compares with the evaluator. Returns the
// compiled program for further checks.
inline std::unique_ptr<runtime::Program> CheckCase(const std::shared_ptr<hal::Device>& device,
                                                   const Case& c, compiler::CompileOptions options,
                                                   const std::string& what) {
  options.hw = device->hardware_model();
  auto program = CompileCase(device, BindCase(c), options);
  if (device->WhyCannotRun().empty()) CompareWithEvaluator(*program, what);
  return program;
}

}  // namespace tilec::testing
