// The ONNX project's backend node tests (Debian's libonnx-testdata: one
// folder per test with model.onnx and test_data_set_*/{input,output}_*.pb)
// run through Tilec: import, compile for a device, run, compare with the
// expected outputs.
//
//   tilec_onnx_node_tests --data /usr/share/libonnx-testdata/data/node --target llvm [--only SUBSTR] [-v]
//
// A test whose model does not import (an op or attribute Tilec does not
// convert) is "unsupported"; one that imports and then fails to compile,
// run or match is a failure. Exit status 1 if any test failed. The summary
// gives per-op counts (--ops FILE writes them as a Markdown table for
// docs/onnx.md).
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "frontend/onnx/import.h"
#include "hal/hal.h"
#include "runtime/model.h"
#include "runtime/program.h"
#include "runtime/settings.h"
#include "support/error.h"

namespace fs = std::filesystem;
using namespace tilec;

namespace {

std::string ReadAll(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// ONNX's backend tests compare with rtol 1e-3, atol 1e-7; Tilec's inline
// math is within a few ULP, so the same relative tolerance with a small
// absolute floor for results near 0.
std::string Compare(const lang::Tensor& want, const lang::Tensor& got) {
  if (want.shape().dims != got.shape().dims)
    return fmt::format("shape {} expected, got {}", lang::ToString(want.shape()), lang::ToString(got.shape()));
  if (want.dtype() != got.dtype())
    return fmt::format("type {} expected, got {}", lang::Name(want.dtype()), lang::Name(got.dtype()));
  bool is_float = lang::IsFloat(want.dtype());
  double atol = want.dtype() == lang::DataType::F16 ? 1e-3 : 1e-5, rtol = want.dtype() == lang::DataType::F16 ? 1e-2 : 1e-3;
  for (int64_t i = 0; i < want.size(); ++i) {
    double w = want.GetDouble(i), g = got.GetDouble(i);
    bool ok = is_float ? (std::isnan(w) ? std::isnan(g) : std::abs(w - g) <= atol + rtol * std::abs(w) || w == g)
                       : want.GetInt(i) == got.GetInt(i);
    if (!ok) return fmt::format("element {} is {} where {} is expected", i, g, w);
  }
  return "";
}

struct Result {
  enum Kind { kPass, kFail, kUnsupported } kind;
  std::string detail;
};

Result RunTest(const fs::path& dir, const std::shared_ptr<hal::Device>& device, std::set<std::string>& ops) {
  std::string bytes = ReadAll(dir / "model.onnx");
  std::vector<fs::path> sets;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0) sets.push_back(e.path());
  std::sort(sets.begin(), sets.end());
  if (sets.empty()) return {Result::kUnsupported, "no test data"};
  auto read_set = [](const fs::path& set, const char* prefix) {
    std::vector<std::pair<std::string, lang::Tensor>> out;
    for (int i = 0;; ++i) {
      fs::path p = set / fmt::format("{}_{}.pb", prefix, i);
      if (!fs::exists(p)) break;
      out.push_back(onnx_import::ReadTensor(ReadAll(p), p.string()));
    }
    return out;
  };
  onnx_import::ImportedModel model;
  std::vector<std::string> known;  // integer inputs imported as known values
  try {
    // The inputs' shapes come from the data (a model may leave them symbolic).
    onnx_import::ImportOptions options;
    for (auto& [name, t] : read_set(sets[0], "input"))
      if (!name.empty()) options.shapes[name] = t.shape();
    try {
      model = onnx_import::Import(bytes, (dir / "model.onnx").string(), options);
    } catch (const UserError& e) {
      // Axes, shapes or sizes given as inputs: import again with the integer
      // inputs' values known (as a user binds them, ImportOptions::values),
      // if every data set gives the same ones.
      if (e.message().find("must be known") == std::string::npos) throw;
      for (auto& [name, t] : read_set(sets[0], "input"))
        if (lang::IsInteger(t.dtype()) && !name.empty()) {
          for (const fs::path& set : sets)
            for (auto& [n2, t2] : read_set(set, "input"))
              if (n2 == name && (t2.shape() != t.shape() || (t.bytes() > 0 && std::memcmp(t2.data(), t.data(), t.bytes()) != 0))) throw;
          options.shapes.erase(name);
          options.values[name] = t;
          known.push_back(name);
        }
      model = onnx_import::Import(bytes, (dir / "model.onnx").string(), options);
    }
  } catch (const UserError& e) {
    return {Result::kUnsupported, e.message()};
  }
  for (const auto& [name, ops_list] : model.origins)
    for (const std::string& o : ops_list) {
      auto open = o.rfind('(');
      if (open != std::string::npos) ops.insert(o.substr(open + 1, o.size() - open - 2));
    }
  try {
    runtime::Model compiled = runtime::Model::Compile(model, device);
    for (const fs::path& set : sets) {
      auto inputs = read_set(set, "input");
      auto outputs = read_set(set, "output");
      if (inputs.size() != model.inputs.size() + known.size() || outputs.size() != model.outputs.size())
        return {Result::kFail, fmt::format("{} inputs and {} outputs in {}, the model has {} and {}", inputs.size(),
                                           outputs.size(), set.filename().string(), model.inputs.size(),
                                           model.outputs.size())};
      std::map<std::string, lang::Tensor> feed;
      for (size_t i = 0; i < inputs.size(); ++i) {
        // By name where the file has one, else by position.
        std::string name = inputs[i].first.empty() ? model.inputs.at(i).onnx_name : inputs[i].first;
        if (std::find(known.begin(), known.end(), name) == known.end()) feed[name] = inputs[i].second;
      }
      auto got = compiled.Run(feed);
      for (size_t i = 0; i < outputs.size(); ++i) {
        std::string diff = Compare(outputs[i].second, got.at(model.outputs[i].onnx_name));
        if (!diff.empty())
          return {Result::kFail, fmt::format("{}: output '{}': {}", set.filename().string(), model.outputs[i].onnx_name, diff)};
      }
    }
  } catch (const Error& e) {
    return {Result::kFail, e.what()};
  }
  return {Result::kPass, ""};
}

}  // namespace

int main(int argc, char** argv) {
  std::string data = "/usr/share/libonnx-testdata/data/node", target = "llvm", only, ops_file;
  bool verbose = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        fmt::print(stderr, "{} needs a value\n", a);
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--data")
      data = next();
    else if (a == "--target")
      target = next();
    else if (a == "--only")
      only = next();
    else if (a == "--ops")
      ops_file = next();
    else if (a == "-v")
      verbose = true;
    else {
      fmt::print(stderr, "unknown argument '{}'\n", a);
      return 2;
    }
  }
  if (!fs::is_directory(data)) {
    fmt::print(stderr, "no ONNX node tests at {} (apt-get install libonnx-testdata)\n", data);
    return 2;
  }
  std::shared_ptr<hal::Device> device;
  try {
    device = runtime::OpenDevice(target);
  } catch (const Error& e) {
    fmt::print(stderr, "{}\n", e.Render());
    return 2;
  }
  std::vector<fs::path> tests;
  for (const auto& e : fs::directory_iterator(data))
    if (e.is_directory() && e.path().filename().string().find(only) != std::string::npos) tests.push_back(e.path());
  std::sort(tests.begin(), tests.end());
  int pass = 0, fail = 0, unsupported = 0;
  std::map<std::string, std::array<int, 3>> per_op;  // pass, fail, unsupported
  for (const fs::path& t : tests) {
    std::set<std::string> ops;
    Result r = RunTest(t, device, ops);
    std::string name = t.filename().string();
    if (r.kind == Result::kPass) ++pass;
    if (r.kind == Result::kFail) ++fail;
    if (r.kind == Result::kUnsupported) ++unsupported;
    if (r.kind != Result::kUnsupported)
      for (const std::string& op : ops) per_op[op][r.kind]++;
    if (r.kind == Result::kFail) fmt::print("FAIL {}: {}\n", name, r.detail);
    if (verbose && r.kind == Result::kPass) fmt::print("pass {}\n", name);
    if (verbose && r.kind == Result::kUnsupported) fmt::print("unsupported {}: {}\n", name, r.detail);
  }
  fmt::print("{} ONNX node tests on {}: {} passed, {} failed, {} not supported\n", tests.size(), target, pass, fail,
             unsupported);
  if (!ops_file.empty()) {
    std::ofstream out(ops_file);
    out << "| op | tests passed | failed |\n|---|---|---|\n";
    for (const auto& [op, n] : per_op) out << fmt::format("| {} | {} | {} |\n", op, n[0], n[1]);
  }
  return fail == 0 ? 0 : 1;
}
