// EmitLLVM: a sem module to an LLVM module, one FunctionLowering per
// function (lower_function.h), checked by the LLVM verifier.
#include "hal/llvm/emit_llvm.h"

#include <llvm/Bitcode/BitcodeWriter.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include "compiler/sem/verify.h"
#include "hal/llvm/lower_function.h"
#include "support/error.h"

namespace tilec::hal::cpu {

std::string GroupFunctionName(const std::string& kernel) { return kernel + "_groups"; }

std::unique_ptr<llvm::Module> EmitLLVM(const sem::Module& module, llvm::LLVMContext& context,
                                       const EmitOptions& options) {
  sem::Verify(module);
  auto m = std::make_unique<llvm::Module>("tilec", context);
  if (!options.target_triple.empty()) m->setTargetTriple(options.target_triple);
  if (!options.data_layout.empty()) m->setDataLayout(options.data_layout);
  for (const sem::Function& f : module.functions) {
    std::array<int64_t, 3> local = {1, 1, 1};
    if (auto it = options.local_sizes.find(f.name); it != options.local_sizes.end()) {
      local = it->second;
    } else if (f.work_group_size) {
      local = *f.work_group_size;
    }
    FunctionLowering(*m, f, local, options.vector_isa).Emit();
  }
  std::string problems;
  llvm::raw_string_ostream os(problems);
  if (llvm::verifyModule(*m, &os)) {
    os.flush();
    throw InternalError(
        fmt::format("the LLVM IR emitted for the sem module does not verify:\n{}\n{}", problems,
                    PrintModule(*m)));
  }
  return m;
}

std::string EmitLLVMText(const sem::Module& module, const EmitOptions& options) {
  llvm::LLVMContext context;
  return PrintModule(*EmitLLVM(module, context, options));
}

std::string PrintModule(const llvm::Module& module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os, nullptr);
  os.flush();
  return text;
}

std::string ModuleKey(const llvm::Module& module) {
  std::string bitcode;
  llvm::raw_string_ostream os(bitcode);
  llvm::WriteBitcodeToFile(module, os);
  os.flush();
  return bitcode;
}

}  // namespace tilec::hal::cpu
