// libFuzzer harness: the whole compile without a device. Tile source plus
// parameter bytes (bind_input.h: shapes, types and layouts, sizes up to 16;
// then options: GPU-like or CPU-like hardware model, vector form, local
// staging, fusion, fast math) -> Bind -> compiler::CompileProgram -> the sem
// printer and the OpenCL C emitter. Every stage must succeed or throw a
// UserError.
#include "compiler/pipeline.h"
#include "compiler/sem/printer.h"
#include "hal/opencl/emit_opencl.h"
#include "tests/fuzz/bind_input.h"
#include "tile_lang/binder.h"

namespace tilec::fuzz {
namespace {

// The LLVM backend's model of an AVX2 CPU (hal/llvm/cpu_info.cc), written
// out so this harness needs neither LLVM nor a device.
compiler::HardwareModel CpuLikeHardware() {
  compiler::HardwareModel hw;
  hw.name = "fuzz cpu";
  hw.threads = 1;
  hw.compute_units = 2;
  hw.max_mem = 32 * 1024;
  hw.local_memory_managed = false;
  hw.vec_size = 8;
  hw.vector_registers = 16;
  hw.max_regs = hw.vector_registers * hw.vec_size * 4;
  hw.goal_groups = 8;
  hw.goal_flops_per_byte = 2;
  hw.has_fma = true;
  hw.has_fp16 = true;
  hw.has_fp64 = true;
  return hw;
}

}  // namespace
}  // namespace tilec::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tilec;
  fuzz::SplitInput in = fuzz::Split(data, size);
  fuzz::Guarded([&] {
    fuzz::ParamReader params(in.params);
    fuzz::BindInput b = fuzz::MakeBindInput(in, params, {.max_small = 16, .huge = false});
    lang::Program program = lang::Bind(b.function, b.shapes, b.layouts);
    uint8_t o = params.Next(0);
    compiler::CompileOptions options;
    options.hw = (o & 1) ? compiler::SeedExampleHardware() : fuzz::CpuLikeHardware();
    options.hw.has_fp64 = !(o & 64);
    options.vectorize = !(o & 2);
    if (o & 4) options.use_local = (o & 8) != 0;
    options.lower.fuse = !(o & 16);
    options.lower.relayout_for_vectors = !options.hw.local_memory_managed;
    compiler::CompiledProgram compiled = compiler::CompileProgram(program, options);
    sem::Module module = compiled.Module();
    sem::Print(module);
    hal::opencl::EmitOptions emit;
    emit.fast_math = (o & 32) != 0;
    emit.fp16 = options.hw.has_fp16;
    emit.fp64 = options.hw.has_fp64;
    hal::opencl::EmitOpenCL(module, emit);
  });
  return 0;
}
