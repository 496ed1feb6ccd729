// GenerateKernel: a kernel (ir/kernel.h) with its tile -> a sem function and its
// launch geometry. The pipeline's "plan" stage (docs/architecture.md, "The
// pipeline"; the forms it chooses between: "Kernel forms").
//
// Contraction, elementwise and fill kernels follow the seed's structure
// (forms/flat.cc): work groups over output tiles; per-thread register
// accumulators; loops over reduction tiles; optionally each input tile
// staged in local memory through its read plan with clamped loads and
// barriers; a fast path without constraint checks for tiles where every
// constraint holds and a slow path with them; fused post-ops and stores.
// Special and direct kernels use one work item per output element
// (forms/special.cc).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compiler/schedule/hardware_model.h"
#include "compiler/ir/kernel.h"
#include "compiler/schedule/read_plan.h"
#include "compiler/sem/ir.h"
#include "compiler/schedule/thread_plan.h"
#include "tile_lang/program.h"

namespace tilec::compiler {

struct CodegenOptions {
  // Stage input tiles in local memory (the GPU form). Off: threads read
  // global memory directly and rely on caches (the CPU form).
  bool use_local = true;
  // Without local staging, emit the vector form where a kernel fits it.
  bool vectorize = true;
  // Vector form: rows of the register block along p (0: from the registers).
  int64_t vector_rows = 0;
  // Flat form: the work-group shape, threads along each flat index
  // (PlanThreads; empty: AssignOutputThreads). The other forms ignore it.
  std::vector<int64_t> work_group;
};

// The form a kernel was generated in (docs/architecture.md, "Kernel forms").
enum class Form : uint8_t { Flat, Vector, Reduce, Transpose, RowGroup, Special };
const char* Name(Form form);  // "flat", "vector", "reduce", "transpose", "row group", "special"

struct GeneratedKernel {
  Form form = Form::Flat;
  sem::Function function;
  std::array<int64_t, 3> global = {1, 1, 1};  // work items per dimension
  std::array<int64_t, 3> local = {1, 1, 1};   // work-group size
  ThreadPlan threads;                          // flat kernels only
  std::vector<ReadPlan> reads;                 // staged inputs only
  std::string plan_text;                       // the CPU forms and row groups: their plan, printed
};

// Pre: `spec` came from Lower(program); for flat-form kernels `tile` has
// one entry per index (1 <= t <= range); otherwise it is ignored.
// Post: a function that passes sem::Verify (the pipeline checks), whose
// parameters are global pointers to the buffers of spec.outputs then
// spec.inputs, in that order.
GeneratedKernel GenerateKernel(const KernelSpec& spec, const lang::Program& program,
                               const std::vector<int64_t>& tile, const HardwareModel& hw,
                               const CodegenOptions& options = {});

// Whether a flat kernel (Contraction, Elementwise, Fill) can take a form
// other than the flat one. Without local staging and with `vectorize`,
// the CPU forms in order (vector, reduce, transpose) are tried; nullopt:
// none fits, the kernel gets the flat form and its tile. The flat form only
// uses a tile, so the pipeline searches tiles only after this says nullopt.
std::optional<GeneratedKernel> GenerateCpuForm(const KernelSpec& spec, const lang::Program& program,
                                               const HardwareModel& hw, const CodegenOptions& options);

// Internal entry points of the two generators (forms/forms.cc dispatches).
GeneratedKernel GenerateFlatKernel(const KernelSpec& spec, const lang::Program& program,
                                   const std::vector<int64_t>& tile, const HardwareModel& hw,
                                   const CodegenOptions& options);
// The CPU form (forms/vector.cc): register-blocked explicit vectors inside one
// work item. nullopt when the kernel does not fit it (the caller then uses
// GenerateFlatKernel).
// `rows` > 0 forces the block size along p (else chosen from the registers).
std::optional<GeneratedKernel> GenerateVectorKernel(const KernelSpec& spec,
                                                    const lang::Program& program,
                                                    const HardwareModel& hw, int64_t rows = 0);
// The CPU form of a reduction along a contiguous axis (forms/reduce.cc): vector
// accumulators along the reduced run, a horizontal reduce, one work item per
// output element. nullopt when the kernel does not fit it.
std::optional<GeneratedKernel> GenerateReduceKernel(const KernelSpec& spec,
                                                    const lang::Program& program,
                                                    const HardwareModel& hw);
// The CPU form of a copy that moves the contiguous axis (forms/transpose.cc):
// W x W tiles transposed in registers. nullopt when the kernel does not fit.
std::optional<GeneratedKernel> GenerateTransposeKernel(const KernelSpec& spec,
                                                       const lang::Program& program,
                                                       const HardwareModel& hw);
// A RowGroup kernel (forms/row_group.cc): work items over blocks of rows,
// one pass over each row per reduction with vector accumulators, the
// elementwise ops computed inside the passes, then a pass of stores.
GeneratedKernel GenerateRowGroupKernel(const KernelSpec& spec, const lang::Program& program,
                                       const HardwareModel& hw);
// Elements of the vector index one vector-form work item covers at most
// (f32 lanes x vectors): what Lower packs inputs for.
int64_t VectorBlockElements(const HardwareModel& hw);
GeneratedKernel GenerateSpecialKernel(const KernelSpec& spec, const lang::Program& program);

}  // namespace tilec::compiler
