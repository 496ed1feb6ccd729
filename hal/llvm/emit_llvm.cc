// EmitLLVM: a sem module to an LLVM module, one FunctionLowering per
// function (lower_function.h), checked by the LLVM verifier.
#include "hal/llvm/emit_llvm.h"

#include <fmt/format.h>
#if defined(__linux__)
#include <elf.h>
#include <link.h>
#endif
#include <llvm/Bitcode/BitcodeWriter.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include "compiler/sem/printer.h"
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
    FunctionLowering(*m, f, local, options.vector_isa, options.fma).Emit();
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

std::string SemModuleKey(const sem::Module& module, const EmitOptions& options) {
  const std::string& id = EmitterBuildId();
  if (id.empty()) return {};
  std::string key = fmt::format("sem module\nemitter {}\n{}\n{}\nisa {}\nfma {}\n", id, options.target_triple,
                                options.data_layout, static_cast<int>(options.vector_isa), options.fma);
  for (const auto& [name, local] : options.local_sizes)
    key += fmt::format("local {} {} {} {}\n", name, local[0], local[1], local[2]);
  return key + sem::Print(module);
}

const std::string& EmitterBuildId() {
  static const std::string id = [] {
    std::string found;
#if defined(__linux__)
    // The loaded object whose segments hold this function, then its notes.
    struct Search {
      uintptr_t address;
      std::string id;
    } search{reinterpret_cast<uintptr_t>(&EmitterBuildId), {}};
    dl_iterate_phdr(
        [](dl_phdr_info* info, size_t, void* data) -> int {
          auto* s = static_cast<Search*>(data);
          bool here = false;
          for (int i = 0; i < info->dlpi_phnum && !here; ++i) {
            const ElfW(Phdr)& ph = info->dlpi_phdr[i];
            uintptr_t start = info->dlpi_addr + ph.p_vaddr;
            here = ph.p_type == PT_LOAD && s->address >= start && s->address < start + ph.p_memsz;
          }
          if (!here) return 0;
          for (int i = 0; i < info->dlpi_phnum; ++i) {
            const ElfW(Phdr)& ph = info->dlpi_phdr[i];
            if (ph.p_type != PT_NOTE) continue;
            auto* p = reinterpret_cast<const unsigned char*>(info->dlpi_addr + ph.p_vaddr);
            const unsigned char* end = p + ph.p_memsz;
            while (p + sizeof(ElfW(Nhdr)) <= end) {
              auto* n = reinterpret_cast<const ElfW(Nhdr)*>(p);
              const unsigned char* name = p + sizeof(ElfW(Nhdr));
              const unsigned char* desc = name + ((n->n_namesz + 3) & ~3u);
              if (desc + n->n_descsz > end) break;
              bool gnu = n->n_namesz == 4 && std::string_view(reinterpret_cast<const char*>(name), 3) == "GNU";
              if (n->n_type == NT_GNU_BUILD_ID && gnu) {
                for (uint32_t k = 0; k < n->n_descsz; ++k) s->id += fmt::format("{:02x}", desc[k]);
                return 1;
              }
              p = desc + ((n->n_descsz + 3) & ~3u);
            }
          }
          return 1;  // the object holding this function has no build id
        },
        &search);
    found = search.id;
#endif
    return found;
  }();
  return id;
}

}  // namespace tilec::hal::cpu
