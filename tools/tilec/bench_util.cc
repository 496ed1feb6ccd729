// Work counts, timing statistics and the default device for benchmarks (see
// bench_util.h).
#include "tools/tilec/bench_util.h"

#include <algorithm>
#include <numeric>
#include <type_traits>
#include <variant>

#include "hal/hal.h"
#include "support/error.h"

namespace tilec::tools {
namespace {

double ElementCount(const lang::Program& program, const std::string& name) {
  return static_cast<double>(program.Tensor(name).shape.ElementCount());
}

double Bytes(const lang::Program& program, const std::string& name) {
  return ElementCount(program, name) * lang::ByteSize(program.Tensor(name).shape.dtype);
}

double ContractionFlops(const lang::ContractionOp& op) {
  double points = 1;
  for (const lang::ContractionOp::Bound& b : op.bounds)
    points *= static_cast<double>(std::max<int64_t>(0, b.hi - b.lo + 1));
  bool mac = op.agg == lang::ast::AggOp::Sum && op.comb == lang::ast::CombOp::Mul;
  return (mac ? 2.0 : 1.0) * points;
}

}  // namespace

Work CountWork(const lang::Program& program) {
  Work w;
  for (const lang::Op& op : program.ops) {
    std::visit(
        [&](const auto& o) {
          using T = std::decay_t<decltype(o)>;
          if constexpr (std::is_same_v<T, lang::ContractionOp>) {
            w.flops += ContractionFlops(o);
          } else if constexpr (std::is_same_v<T, lang::ElementwiseOp>) {
            w.flops += ElementCount(program, o.output);
          }
        },
        op);
  }
  for (const std::string& name : program.inputs) w.bytes += Bytes(program, name);
  for (const std::string& name : program.outputs) w.bytes += Bytes(program, name);
  return w;
}

TimeStats Summarize(std::vector<double> ms) {
  TILEC_CHECK(!ms.empty(), "no timings to summarize");
  std::sort(ms.begin(), ms.end());
  TimeStats s;
  s.runs = static_cast<int>(ms.size());
  size_t mid = ms.size() / 2;
  s.median_ms = ms.size() % 2 ? ms[mid] : (ms[mid - 1] + ms[mid]) / 2;
  s.min_ms = ms.front();
  s.max_ms = ms.back();
  s.mean_ms = std::accumulate(ms.begin(), ms.end(), 0.0) / static_cast<double>(ms.size());
  return s;
}

std::string DefaultDeviceId() {
  for (const std::string& id : hal::ListDeviceIds())
    if (id.rfind("llvm", 0) == 0) return "llvm";
  return "opencl";
}

}  // namespace tilec::tools
