// difftest: differential random-program testing of Tilec's backends against
// the reference evaluator.
//
//   difftest --seed S --count N [--backend llvm|opencl|both] [--repro-dir DIR] [--grad]
//
// --grad checks each program's gradient instead (grad_check.h): lang::Gradient
// against central finite differences of the evaluator in f64, and the
// gradient program on the backends against the evaluator.
//
// Program k is generated from seed S + k, so `--seed S+k --count 1` replays
// it alone. Each finding is shrunk to a small reproducer, printed as a .tile
// file with the `tilec run` command lines that reproduce it, and saved in
// the repro directory. Exit status: 0 when every program passed, 1 when there
// was a finding, 2 on a usage error, 77 when a backend has no device. See
// docs/testing.md.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <fstream>
#include <map>

#include "support/error.h"
#include "tests/difftest/check.h"
#include "tests/difftest/generate.h"
#include "tests/difftest/grad_check.h"
#include "tests/difftest/shrink.h"

namespace tilec::difftest {
namespace {

// Exit status when a requested backend has no device (ctest counts it as skipped).
constexpr int kNoDevice = 77;

struct Options {
  uint64_t seed = 1;
  int64_t count = 100;
  std::string backend = "both";
  std::string repro_dir = ".";
  int shrink_budget = 400;
  int64_t max_findings = 10;
  bool verbose = false;
  bool grad = false;
};

std::shared_ptr<hal::Device> OpenFirst(const std::string& prefix) {
  for (const std::string& id : hal::ListDeviceIds())
    if (id.rfind(prefix, 0) == 0) return hal::OpenDevice(id);
  return nullptr;
}

// `tilec grad` of a program saved as `file`, its float inputs in f64 (as --grad checks it).
std::string GradCommand(const Prog& p, const std::string& file) {
  std::string args;
  for (const Input& in : p.inputs) {
    lang::Shape s = InputShape(p, in);
    if (lang::IsFloat(s.dtype)) s.dtype = DataType::F64;
    args += fmt::format(" -s '{}={}'", in.name, lang::ToString(s));
  }
  return fmt::format("tilec grad {}{}\n", file, args);
}

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  f << text;
}

int Main(const Options& opts) {
  std::vector<Backend> backends;
  for (const char* name : {"llvm", "opencl"}) {
    if (opts.backend != "both" && opts.backend != name) continue;
    std::shared_ptr<hal::Device> device = OpenFirst(name);
    if (!device) {
      fmt::print(stderr, "difftest: no {} device\n", name);
      return kNoDevice;
    }
    backends.push_back({name, device});
  }

  int64_t passed = 0, invalid = 0, findings = 0;
  std::map<std::string, int64_t> kinds, skips;
  const std::string current = opts.repro_dir + "/difftest_current.tile";
  for (int64_t k = 0; k < opts.count && findings < opts.max_findings; ++k) {
    const uint64_t seed = opts.seed + static_cast<uint64_t>(k);
    Generated g = Generate(seed);
    // If Tilec crashes, this file holds the program that crashed it.
    WriteFile(current, fmt::format("// difftest --seed {} --count 1\n{}", seed, ToText(g.prog)));
    if (opts.verbose) fmt::print("seed {}:\n{}", seed, ToText(g.prog));
    Finding finding;
    Verdict v = Verdict::kFail;
    if (g.finding) {
      finding = *g.finding;
    } else {
      v = opts.grad ? CheckGradient(g.prog, backends, true, &finding) : Check(g.prog, backends, true, &finding);
    }
    if (v == Verdict::kPass) {
      ++passed;
      continue;
    }
    if (v == Verdict::kInvalid) {
      ++invalid;
      if (opts.grad) ++skips[finding.detail];
      continue;
    }
    ++findings;
    ++kinds[finding.kind + (finding.backend.empty() ? "" : " on " + finding.backend)];
    fmt::print("==== finding {} at seed {}: {}{}\n{}\n", findings, seed, finding.kind,
               finding.backend.empty() ? "" : " on " + finding.backend, finding.detail);
    Prog small = g.prog;
    if (!g.finding)
      small = Shrink(g.prog, backends, &finding, opts.shrink_budget, opts.grad ? CheckGradient : Check);
    const std::string file = fmt::format("{}/difftest_{}.tile", opts.repro_dir, seed);
    const std::string text = ToText(small);
    WriteFile(file, text);
    fmt::print("---- shrunk to {} (written to {}): {}\n{}\n{}---- reproduce with\n{}\n", file, file, finding.kind,
               finding.detail, text, opts.grad ? GradCommand(small, file) : ReproCommands(small, file, finding.backend));
    std::fflush(stdout);
  }
  std::remove(current.c_str());
  fmt::print("difftest: seeds {}..{}: {} passed, {} skipped (outside the comparable subset), {} findings\n",
             opts.seed, opts.seed + static_cast<uint64_t>(opts.count) - 1, passed, invalid, findings);
  for (const auto& [kind, n] : kinds) fmt::print("  {}: {}\n", kind, n);
  for (const auto& [why, n] : skips) fmt::print("  skipped, {}: {}\n", why, n);
  return findings ? 1 : 0;
}

}  // namespace
}  // namespace tilec::difftest

int main(int argc, char** argv) {
  tilec::difftest::Options opts;
  CLI::App app("difftest: random Tile programs on the backends vs the reference evaluator", "difftest");
  app.add_option("--seed", opts.seed, "Seed of the first program (program k uses SEED + k)")->capture_default_str();
  app.add_option("--count", opts.count, "Number of programs")->capture_default_str()->check(CLI::NonNegativeNumber);
  app.add_option("--backend", opts.backend, "Backends to compare")
      ->capture_default_str()
      ->check(CLI::IsMember({"llvm", "opencl", "both"}));
  app.add_option("--repro-dir", opts.repro_dir, "Where reproducers are written")->capture_default_str();
  app.add_option("--shrink-budget", opts.shrink_budget, "Checks the shrinker may spend per finding")
      ->capture_default_str();
  app.add_option("--max-findings", opts.max_findings, "Stop after this many findings")->capture_default_str();
  app.add_flag("-v,--verbose", opts.verbose, "Print every program");
  app.add_flag("--grad", opts.grad,
               "Check each program's gradient against finite differences, and on the backends against the evaluator");
  CLI11_PARSE(app, argc, argv);
  try {
    return tilec::difftest::Main(opts);
  } catch (const tilec::Error& e) {
    fmt::print(stderr, "difftest: {}\n", e.Render());
    return 2;
  }
}
