// Process-wide state behind the public API: the devices opened so far (one
// hal::Device per id, so every user of "llvm:cpu" shares one JIT and one
// thread pool) and the in-process cache of compiled programs.
//
// Thread safety: both may be used from several threads at once.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "hal/hal.h"
#include "runtime/program.h"
#include "support/source.h"
#include "tile_lang/types.h"

namespace tilec::runtime {

// The process's device for `id` ("llvm", "llvm:cpu", "opencl", "opencl:P:D"),
// opened on first use, with the process's disk cache of kernels
// (ProcessKernelCache). Errors as hal::OpenDevice.
// A non-empty `cpu` (hal::DeviceOptions::cpu) replaces TILEC_CPU's; each
// (id, CPU) pair is a device of its own.
std::shared_ptr<hal::Device> OpenSharedDevice(const std::string& id, const std::string& cpu = "");

// Everything a compiled program depends on besides the device.
struct CompileRequest {
  SourceFilePtr source;
  std::map<std::string, lang::Shape> shapes;
  std::map<std::string, std::string> layouts;  // tensor -> layout spec
  std::map<std::string, std::vector<int64_t>> tiles;
  bool vectorize = true;
  bool use_tuning_cache = true;  // false: the cost model's picks (no tuned configurations)
  // > 0: tune untuned kernels first, within this budget (ApplyTuning,
  // runtime/tuner.h); 0: TILEC_TUNE's budget.
  double tune_budget_s = 0;
  // Constant inputs (Program::SetConstantInputs); any order, duplicates ignored.
  std::vector<std::string> constants;
};

struct ProgramCacheStats {
  size_t hits = 0;
  size_t misses = 0;
  size_t entries = 0;
};

// Compiled programs keyed by the canonical source (the parsed program printed
// back, so spacing and comments do not matter), shapes, layouts, options,
// constant inputs and the device. At most `capacity` entries; the least
// recently used goes first.
//
// A program with constant inputs is lent to one caller at a time: its
// buffer sets keep the constant kernels' results for the memory its caller
// ran on, and another caller's promise covers only its own memory (two
// models with the same layers and their own weights, or a model reloaded
// with new weights at a recycled address, would get the first one's
// results). So an equal request gets the cached program only while no
// caller holds it (with its constants invalidated), and otherwise a newly
// compiled one of its own.
class ProgramCache {
 public:
  explicit ProgramCache(size_t capacity = 256) : capacity_(capacity) {}

  // Parses, binds and compiles `request` for `device`, or returns the program
  // compiled before for an equal request (with constants: see above).
  // `use_cache` false always compiles (and does not store). UserError /
  // DeviceError as Program::Compile; UserError for a constant that is not an
  // input (Program::SetConstantInputs).
  std::shared_ptr<Program> Compile(const CompileRequest& request,
                                   const std::shared_ptr<hal::Device>& device, bool use_cache = true);

  ProgramCacheStats stats() const;
  void Clear();

 private:
  struct Entry {
    std::shared_ptr<Program> program;
    uint64_t last_use = 0;
  };
  mutable std::mutex mutex_;
  size_t capacity_;
  uint64_t clock_ = 0;
  std::map<std::string, Entry> entries_;
  ProgramCacheStats stats_;
};

// The cache the C ABI uses.
ProgramCache& ProcessProgramCache();

}  // namespace tilec::runtime
