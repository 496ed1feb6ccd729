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

#include "compiler/forms/form.h"
#include "compiler/schedule/hardware_model.h"
#include "compiler/ir/kernel.h"
#include "compiler/schedule/read_plan.h"
#include "compiler/sem/ir.h"
#include "compiler/schedule/thread_plan.h"
#include "tile_lang/program.h"

namespace tilec::compiler {

// Pre: `spec` came from Lower(program); for flat-form kernels `tile` has
// one entry per index (1 <= t <= range); otherwise it is ignored.
// Post: a function that passes sem::Verify (the pipeline checks), whose
// parameters are global pointers to the buffers of spec.outputs then
// spec.inputs, in that order. The first form of FormsFor(spec.kind,
// options) whose Plan takes the kernel emits it.
GeneratedKernel GenerateKernel(const KernelSpec& spec, const lang::Program& program,
                               const std::vector<int64_t>& tile, const HardwareModel& hw,
                               const CodegenOptions& options = {});

// Whether a flat kernel (Contraction, Elementwise, Fill) can take a form
// other than the flat one: the forms of FormsFor before the flat form are
// tried in order (without local staging and with `vectorize`: vector,
// reduce, transpose); nullopt: none fits, the kernel gets the flat form
// and its tile. The flat form only
// uses a tile, so the pipeline searches tiles only after this says nullopt.
std::optional<GeneratedKernel> GenerateCpuForm(const KernelSpec& spec, const lang::Program& program,
                                               const HardwareModel& hw, const CodegenOptions& options);

// The flat form's generator (forms/flat.cc): what FlatForm().Emit runs; the
// pipeline calls it after the tile search.
GeneratedKernel GenerateFlatKernel(const KernelSpec& spec, const lang::Program& program,
                                   const std::vector<int64_t>& tile, const HardwareModel& hw,
                                   const CodegenOptions& options);
// Elements of the vector index one vector-form work item covers at most
// (f32 lanes x vectors): what Lower packs inputs for.
int64_t VectorBlockElements(const HardwareModel& hw);

}  // namespace tilec::compiler
