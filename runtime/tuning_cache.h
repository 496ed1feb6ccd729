// The tuning cache: what `tilec tune` (runtime/tuner.h) measured, kept in one
// human-readable JSON-lines file (PlaidML's tile cache, in spirit) so every
// later compile of a kernel with the same signature uses the winner.
//
// One record per line:
//   {"signature": "9f…", "device": "llvm:cpu | Intel … ", "version": "0.4.0",
//    "kernel": "contraction [1, 9, 7, 6, 3, 3, 5]", "program": "conv.tile",
//    "winner": {"tile": [1, 9, 7, 6, 1, 1, 5], "vector": true, "vector_rows": 4},
//    (or on OpenCL {"tile": […], "local": false, "vector": false,
//     "work_group": [1, 8, 1, 4, 1, 1, 1]}: threads per index),
//    "median_ms": 0.21, "model_ms": 0.25, "flops": 340200,
//    "trials": [{"config": {…}, "median_ms": …, "min_ms": …, "max_ms": …,
//                "ok": true, "note": "", "model_score": 0.8}, …]}
// A record belongs to a kernel signature (compiler/ir/kernel_signature.h), a
// device fingerprint (DeviceFingerprint) and Tilec's version; the file is an
// append-only log in which the last record of a (signature, device, version)
// wins. Lines that do not parse are skipped, and so are records of another
// device or version, each kind with one notice per load; they are never
// applied.
//
// Thread and process safety: appends are single write(2) calls on an
// O_APPEND file, so concurrent writers never interleave within a line.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/pipeline.h"
#include "hal/hal.h"

namespace tilec::runtime {

struct TuningTrial {
  compiler::KernelConfig config;
  double median_ms = -1;  // -1: not timed (failed to build or verify)
  double min_ms = -1;
  double max_ms = -1;
  bool ok = false;       // built, verified and timed
  std::string note;      // why not ok ("mismatch: …", "error: …"), or "" 
  double model_score = 0;  // the cost model's score of the tile (0: none)
  int model_rank = -1;     // its position in the cost model's ranking (0: best; -1: none)
  // Timed again side by side with the model's pick and the other finalists
  // (the figures above are then those turns'); only such trials can win
  // once any was.
  bool paired = false;
};

struct TuningRecord {
  std::string signature;  // KernelSignature::hash
  std::string device;     // DeviceFingerprint
  std::string version;    // Tilec's version
  std::string kernel;     // for people: kind and index ranges
  std::string program;    // for people: the program tuned first
  compiler::KernelConfig winner;
  double median_ms = 0;  // the winner's
  double model_ms = 0;   // the cost model's pick (the untuned compile)
  double flops = 0;      // per kernel run
  std::vector<TuningTrial> trials;
};

struct TuningCacheOptions {
  bool enabled = false;
  std::string path;     // the JSON-lines file (created on first append)
  std::string version;  // Tilec's version
};

// The records of one device and version, by signature, and the notices about
// the lines that were skipped ("3 lines of … do not parse (first: line 2: …)").
struct TuningLookup {
  std::map<std::string, TuningRecord> records;
  std::vector<std::string> notices;
};

class TuningCache {
 public:
  explicit TuningCache(TuningCacheOptions options) : options_(std::move(options)) {}
  const TuningCacheOptions& options() const { return options_; }

  // Reads the file (a missing file or a disabled cache: no records).
  TuningLookup Load(const std::string& device_fingerprint) const;
  // Appends one line; false (and `error` set) if the file cannot be written.
  bool Append(const TuningRecord& record, std::string* error = nullptr) const;

 private:
  TuningCacheOptions options_;
};

// What identifies a device for tuning: its id and description (name, driver,
// CPU model and threads), "llvm:cpu | Intel(R) Xeon(R) … (…; 2 threads; …)".
std::string DeviceFingerprint(const hal::Device& device);

// One record as a JSON line (no newline), and back; nullopt with `error`
// set for a line that is not such a record.
std::string ToJsonLine(const TuningRecord& record);
std::optional<TuningRecord> ParseJsonLine(std::string_view line, std::string* error);

// The winners of `lookup` as CompileOptions::tuned wants them.
std::map<std::string, compiler::KernelConfig> TunedConfigs(const TuningLookup& lookup);

}  // namespace tilec::runtime
