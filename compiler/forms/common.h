// What several kernel forms share (docs/architecture.md, "Kernel forms"):
// the names and parameters of a generated function, the accesses of a flat
// kernel, an aggregation's identity and combine, and the cache rules that
// decide streaming stores. A concept the forms all need is written here
// once; what only one form needs stays in its own file.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compiler/forms/forms.h"
#include "compiler/ir/kernel.h"
#include "compiler/schedule/hardware_model.h"
#include "compiler/sem/ir.h"
#include "support/error.h"
#include "tile_lang/program.h"

namespace tilec::compiler {

// --- Names and parameters ------------------------------------------------------

std::string Sanitize(const std::string& s);  // a C identifier made of s
// One distinct C identifier per flat index, from its Tile name.
std::vector<std::string> IndexNames(const FlatContraction& flat);
// I32 when every address and index of `flat` fits in 31 bits, else I64.
lang::DataType IndexTypeFor(const FlatContraction& flat);
std::string ParamName(const std::string& tensor, int position);  // a C identifier
std::vector<sem::Param> BufferParams(const KernelSpec& spec, const lang::Program& program);
// The access through which a flat kernel's post-ops read, or the kernel
// writes, `tensor`. A written tensor without an access of its own is laid
// out like the output (Lower shares access 0 then); InternalError if
// `tensor` is neither.
const FlatAccess& PointAccess(const KernelSpec& spec, const std::string& tensor);
// The start every CPU form (vector, reduction, transpose) shares: the
// function named after the kernel with 64-bit addressing (CPU address
// arithmetic folds into the loads then) and BufferParams; `params` gets
// their VarRefs in order, `top` the kernel's comment.
GeneratedKernel StartCpuKernel(const KernelSpec& spec, const lang::Program& program,
                               std::vector<sem::Expr>& params, std::vector<sem::Stmt>& top);
// The end every CPU form shares, StartCpuKernel's twin: `out` with `top` as
// its body, one work item per group, `global` groups.
GeneratedKernel EndCpuKernel(GeneratedKernel out, std::vector<sem::Stmt> top, std::array<int64_t, 3> global);
// The parameter (as a VarRef) holding `tensor`'s buffer; `params` are the
// VarRefs of BufferParams(spec, …) in order.
sem::Expr BufferOf(const KernelSpec& spec, const std::vector<sem::Expr>& params,
                   const std::string& tensor);
// One work item per point of the indices `grid` (fastest first): declares
// `<names[i]>_0` for each from the linear work-item id `id` (the last one
// takes what is left of it) into `top` and sets pos[i] to it.
void DeclareGridPositions(const FlatContraction& flat, const std::vector<std::string>& names,
                          const std::vector<int>& grid, sem::Expr id, std::vector<sem::Stmt>& top,
                          std::vector<sem::Expr>& pos);

// --- Plans -----------------------------------------------------------------------

// A FormPlan of `form` for `spec`, pointing at what Emit needs.
FormPlan StartPlan(Form form, const KernelSpec& spec, const lang::Program& program, const HardwareModel& hw,
                   const CodegenOptions& options);
// `plan` with `state` kept for Emit and `text` as its printed text.
FormPlan KeepState(FormPlan plan, std::shared_ptr<const FormState> state, std::string text);
// The state `form`'s Plan kept in `plan`, as the form's own type.
template <typename State>
const State& StateOf(const FormPlan& plan, const FormImpl& form) {
  const State* state = plan.form == form.id() ? dynamic_cast<const State*>(plan.state.get()) : nullptr;
  TILEC_CHECK(state, "a {} form plan without its state", form.name());
  return *state;
}
// `kernel`, emitted for `plan`, with the plan's form and printed text.
GeneratedKernel FinishKernel(const FormPlan& plan, GeneratedKernel kernel);
// Whether `spec` writes a blocked layout's padding that must be zeroed: the
// CPU forms (vector, reduce, transpose) do not zero it yet and leave such a
// kernel to the flat form; without post-ops a contraction leaves 0 there
// anyway (ir/flat.h: padding).
bool PaddingNeedsZeros(const KernelSpec& spec);
// A CPU form whose Plan turns away a kernel with padding to zero
// (PaddingNeedsZeros) and otherwise runs `PlanT` (a FormState: `bool Plan()`,
// `PlanText()`), and whose Emit runs `EmitterT` on it (the reduce and
// transpose forms).
template <Form kId, typename PlanT, typename EmitterT>
class PlannedCpuForm final : public FormImpl {
 public:
  Form id() const override { return kId; }
  std::optional<FormPlan> Plan(const KernelSpec& spec, const lang::Program& program, const HardwareModel& hw,
                               const CodegenOptions& options) const override {
    if (PaddingNeedsZeros(spec)) return std::nullopt;
    auto state = std::make_shared<PlanT>(spec, program, hw);
    if (!state->Plan()) return std::nullopt;
    std::string text = state->PlanText();
    return KeepState(StartPlan(id(), spec, program, hw, options), std::move(state), std::move(text));
  }
  GeneratedKernel Emit(const FormPlan& plan) const override {
    return FinishKernel(plan, EmitterT(StateOf<PlanT>(plan, *this)).Emit());
  }
};

// --- Aggregations ----------------------------------------------------------------

// The identity of `agg` in type `t` (scalar or vector): Sum 0, Prod 1, Max
// -inf (an integer type's lowest value), Min +inf (its highest). Assign has
// none: InternalError.
sem::Expr AggIdentity(lang::ast::AggOp agg, const sem::Type& t);
// `a` and `b` aggregated by `agg` in their own (scalar or vector) type, with
// the builder's arithmetic: a + b, a * b, max, min. Assign has no combine:
// InternalError. (The flat and special forms aggregate through
// GenerateElementwise instead, for the evaluator's integer rules.)
sem::Expr AggCombine(lang::ast::AggOp agg, sem::Expr a, sem::Expr b);
// `acc` and `v` of type Bool aggregated by `agg`: Sum and Max are "or",
// Prod and Min "and", Assign takes `v`.
sem::Expr AggCombineBool(lang::ast::AggOp agg, sem::Expr acc, sem::Expr v);
// a * b + acc for a sum of products: the fused multiply-add (`fma`, exactly
// rounded) where the CPU has FMA instructions, else `mad` (a multiply and an
// add). Without them an exactly rounded fma is a libm call per lane
// (x86-64-v2: bench/suite conv3x3 n1 56x56 64>64 ran 88 ms instead of 6).
sem::Expr MulAdd(const HardwareModel& hw, sem::Expr a, sem::Expr b, sem::Expr acc);

// --- Caches and streaming stores ---------------------------------------------------

// The L2 caches of all compute units together (saturating).
int64_t TotalL2Bytes(const HardwareModel& hw);
// Whether every buffer `spec` reads or writes fits, all together, in half the
// last-level cache (false where hw.l3_bytes is unknown). Then its results
// stay cached, for its next run or the kernel that reads them, and
// streaming stores would only send them to memory (bench/suite batch norm
// n8 56x56 c64 is faster cached); where the buffers outgrow it (Y = A*B + C
// over three 6 MB inputs) streaming still wins.
bool FitsInHalfTheLastLevelCache(const KernelSpec& spec, const lang::Program& program, const HardwareModel& hw);
// The streaming-store rule of the CPU forms: a kernel that writes `bytes`
// (and whose stores are otherwise whole aligned vectors) stores them with
// non-temporal stores when they are far larger than the caches, that is
// above `factor` times TotalL2Bytes, and its buffers do not all fit in half
// the last-level cache. A temporary is read again by a later kernel, so it
// streams only above kTemporaryStreamingFactor times the L2 total; a result
// goes back to the caller, and each form passes the factor above which its
// results are better streamed: kResultStreamingFactor (the vector form's
// elementwise kernels, bench/suite gelu erf 1024x3072 and tanh 4M) or
// kCopyStreamingFactor (the transpose form's copies, bench/suite transpose
// 2048x2048 and permute 021; nchw>nhwc 8x64x56x56 loses streamed).
// `run_bytes`: the contiguous bytes a work item stores back to back; a
// streaming store skips the caches well only for whole lines
// (hw.mem_width): a run shorter than a line leaves the line's rest to a
// store much later, and the write-combining buffers go to memory with
// partial lines. AVX2 code of the transpose form (8-lane tiles, 32-byte
// rows) ran 6-16x slower streamed on a Sapphire Rapids host (bench/suite
// transpose 2048x2048 7.0 ms streamed, 1.09 ms cached; nchw>nChw16c
// 8x64x112x112 15.9 vs 0.99 ms).
constexpr int64_t kTemporaryStreamingFactor = 8;
constexpr int64_t kResultStreamingFactor = 2;
constexpr int64_t kCopyStreamingFactor = 4;
bool StreamingStoresPay(const KernelSpec& spec, const lang::Program& program, const HardwareModel& hw,
                        int64_t bytes, int64_t factor, int64_t run_bytes);
// Whether `bytes` exceed `factor` times the L2 caches' total: what "far
// larger than the caches" means in the rules above and in the vector form's
// column chunks (forms/vector_chunks.cc, at kCopyStreamingFactor).
bool LargerThanTheCaches(int64_t bytes, int64_t factor, const HardwareModel& hw);

}  // namespace tilec::compiler
