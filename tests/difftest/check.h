// Runs a model program on the reference evaluator and on compiled backends
// and says how they disagree, if they do.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hal/hal.h"
#include "tests/difftest/model.h"
#include "tile_lang/program.h"

namespace tilec::difftest {

// Parses and binds `p` with its shapes and layouts (UserError if Tilec
// rejects it).
lang::Program BindProg(const Prog& p);

// What Analyze needs from the bound program: every named tensor's type, and
// per contraction the contributions per output element and the size of its
// index box.
struct BoundFacts {
  std::map<std::string, DataType> dtypes;
  std::map<std::string, int64_t> terms;
  std::map<std::string, int64_t> box;
};
BoundFacts FactsOf(const lang::Program& bound);

struct Finding {
  std::string kind;     // mismatch, internal-error, user-error, device-error, exception,
                        // bind-rejected, eval-error
  std::string backend;  // "llvm", "opencl", or "" for the front end / evaluator
  std::string detail;
};

struct Backend {
  std::string name;
  std::shared_ptr<hal::Device> device;
};

enum class Verdict { kPass, kInvalid, kFail };

// kInvalid: the program is outside what the tester compares (the analysis
// or the evaluator rejects it). With `strict`, a program Tilec's binder or
// evaluator rejects is a finding instead (the generator believed it valid).
Verdict Check(const Prog& p, const std::vector<Backend>& backends, bool strict, Finding* finding);

}  // namespace tilec::difftest
