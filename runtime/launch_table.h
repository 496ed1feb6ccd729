// The launch table of a compiled program (hal/launch_table.h): what the
// backends get besides the sem module, made here so that hal sees nothing
// of the compiler's plans.
#pragma once

#include "compiler/pipeline.h"
#include "hal/launch_table.h"

namespace tilec::runtime {

// Per kernel of `compiled`, in order: its function's name, its global and
// local sizes, its buffers (spec.outputs then spec.inputs, the parameter
// order) with their dtype and image storage, and its index points.
hal::LaunchTable LaunchTableOf(const compiler::CompiledProgram& compiled);

}  // namespace tilec::runtime
