// Jit (jit.h): LLJIT for the host, the O3 pipeline, one JITDylib per module;
// a target machine alone for another architecture.
#include "hal/llvm/jit.h"

#include <fmt/format.h>
#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/ExecutionEngine/ObjectCache.h>
#include <llvm/ExecutionEngine/Orc/CompileUtils.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/IR/Module.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/DynamicLibrary.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Host.h>

#include <map>
#include <mutex>
#include <utility>

#include "hal/llvm/cpu_info.h"
#include "support/error.h"

namespace tilec::hal::cpu {
namespace {

// The message of an llvm::Error (consumes it).
std::string Message(llvm::Error error) { return llvm::toString(std::move(error)); }

template <typename T>
T Take(llvm::Expected<T> value, const char* what) {
  if (!value) throw DeviceError(fmt::format("LLVM JIT: {}: {}", what, Message(value.takeError())));
  return std::move(*value);
}

// Keeps the object file of every module the JIT compiles, by module name,
// until Take asks for it (the JIT never reads from it: lookups are ours).
class ObjectRecorder final : public llvm::ObjectCache {
 public:
  void notifyObjectCompiled(const llvm::Module* m, llvm::MemoryBufferRef object) override {
    std::lock_guard<std::mutex> lock(mutex_);
    objects_[m->getModuleIdentifier()] = object.getBuffer().str();
  }
  std::unique_ptr<llvm::MemoryBuffer> getObject(const llvm::Module*) override { return nullptr; }
  std::string Take(const std::string& module) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = objects_.find(module);
    if (it == objects_.end()) return {};
    std::string object = std::move(it->second);
    objects_.erase(it);
    return object;
  }

 private:
  std::mutex mutex_;
  std::map<std::string, std::string> objects_;
};

}  // namespace

struct Jit::Impl {
  std::mutex mutex;  // LLJIT is thread-safe; this guards `next_dylib` and keeps builds in order
  std::unique_ptr<llvm::orc::LLJIT> jit;
  std::unique_ptr<llvm::TargetMachine> machine;  // for the optimizer's cost models
  std::string triple, data_layout, cpu, features;
  int next_dylib = 0;
  // libmvec (vector_math.h), when the process could load it.
  llvm::sys::DynamicLibrary vector_library;
  VectorIsa vector_isa = VectorIsa::None;
  bool fma = true;
  std::vector<VectorMapping> mappings;  // owns the names `vector_functions` points to
  std::vector<llvm::VecDesc> vector_functions;
  ObjectRecorder objects;

  // A new JITDylib that resolves libm (tanhf, …), libgcc (__extendhfsf2, …)
  // and memset from this process. Called with `mutex` held.
  llvm::orc::JITDylib& NewDylib(const std::string& name);
  // Errors the JIT reports outside a lookup's result (e.g. which symbols were
  // missing): kept for the next DeviceError's log instead of printed.
  std::mutex log_mutex;
  std::string log;

  std::string TakeLog() {
    std::lock_guard<std::mutex> lock(log_mutex);
    return std::exchange(log, {});
  }
};

Jit::Jit(const CpuInfo& cpu) : impl_(std::make_unique<Impl>()) {
  InitializeTargetsOnce();
  // The host's triple, CPU name and features (e.g. +avx512f); a named CPU's
  // name alone, whose features LLVM knows.
  llvm::orc::JITTargetMachineBuilder builder =
      cpu.named ? llvm::orc::JITTargetMachineBuilder(llvm::Triple(cpu.triple))
                : Take(llvm::orc::JITTargetMachineBuilder::detectHost(), "detecting the host");
  if (cpu.named) builder.setCPU(cpu.llvm_name);
  builder.setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  impl_->cpu = builder.getCPU();
  impl_->features = builder.getFeatures().getString();
  impl_->machine = Take(builder.createTargetMachine(), "creating the target machine");
  if (cpu.other_arch) {
    // Another architecture's code is optimized and written (EmitObject),
    // never run: no JIT, no libmvec of the host's.
    impl_->triple = builder.getTargetTriple().str();
    impl_->data_layout = impl_->machine->createDataLayout().getStringRepresentation();
    return;
  }
  ObjectRecorder* recorder = &impl_->objects;
  impl_->jit = Take(llvm::orc::LLJITBuilder()
                        .setJITTargetMachineBuilder(builder)
                        .setCompileFunctionCreator(
                            [recorder](llvm::orc::JITTargetMachineBuilder jtmb)
                                -> llvm::Expected<std::unique_ptr<llvm::orc::IRCompileLayer::IRCompiler>> {
                              return std::make_unique<llvm::orc::ConcurrentIRCompiler>(std::move(jtmb),
                                                                                      recorder);
                            })
                        .create(),
                    "creating the JIT");
  impl_->jit->getExecutionSession().setErrorReporter([impl = impl_.get()](llvm::Error e) {
    std::lock_guard<std::mutex> lock(impl->log_mutex);
    impl->log += Message(std::move(e)) + "\n";
  });
  impl_->triple = impl_->jit->getTargetTriple().str();
  impl_->fma = cpu.fma;
  std::string error;
  impl_->vector_library =
      llvm::sys::DynamicLibrary::getPermanentLibrary(VectorLibraryName(), &error);
  if (impl_->vector_library.isValid()) {
    impl_->vector_isa = VectorIsaOf(cpu);
    impl_->mappings = VectorMappings(impl_->vector_isa);
    for (const VectorMapping& m : impl_->mappings)
      impl_->vector_functions.emplace_back(m.scalar, m.vector,
                                           llvm::ElementCount::getFixed(
                                               static_cast<unsigned>(m.lanes)),
                                           false, m.abi_prefix);
  }
  impl_->data_layout = impl_->jit->getDataLayout().getStringRepresentation();
}

Jit::~Jit() = default;

const std::string& Jit::target_triple() const { return impl_->triple; }
const std::string& Jit::data_layout() const { return impl_->data_layout; }
const std::string& Jit::cpu_name() const { return impl_->cpu; }
VectorIsa Jit::vector_isa() const { return impl_->vector_isa; }
bool Jit::fma() const { return impl_->fma; }
const std::string& Jit::cpu_features() const { return impl_->features; }

llvm::orc::JITDylib& Jit::Impl::NewDylib(const std::string& name) {
  llvm::Expected<llvm::orc::JITDylib&> created = jit->createJITDylib(name);
  if (!created)
    throw DeviceError(
        fmt::format("LLVM JIT: creating a JITDylib: {}", Message(created.takeError())));
  llvm::orc::JITDylib& dylib = *created;
  dylib.addGenerator(Take(llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
                              jit->getDataLayout().getGlobalPrefix()),
                          "opening the process's symbols"));
  // libmvec's vector functions (vector_math.h), when the process could load it.
  if (vector_library.isValid())
    dylib.addGenerator(std::make_unique<llvm::orc::DynamicLibrarySearchGenerator>(
        vector_library, jit->getDataLayout().getGlobalPrefix()));
  return dylib;
}

void Jit::Optimize(llvm::Module& module) {
  module.setTargetTriple(impl_->triple);
  module.setDataLayout(impl_->data_layout);
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = true;
  tuning.SLPVectorization = true;
  llvm::PassBuilder passes(impl_->machine.get(), tuning);
  // The loop vectorizer may widen libm calls to libmvec's variants.
  llvm::TargetLibraryInfoImpl library_info(llvm::Triple(impl_->triple));
  library_info.addVectorizableFunctions(impl_->vector_functions);
  fam.registerPass([&] { return llvm::TargetLibraryAnalysis(library_info); });
  passes.registerModuleAnalyses(mam);
  passes.registerCGSCCAnalyses(cgam);
  passes.registerFunctionAnalyses(fam);
  passes.registerLoopAnalyses(lam);
  passes.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager pipeline =
      passes.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  pipeline.run(module, mam);
}

std::vector<void*> Jit::Compile(std::unique_ptr<llvm::LLVMContext> context,
                                std::unique_ptr<llvm::Module> module,
                                const std::vector<std::string>& symbols, std::string* object) {
  TILEC_CHECK(context && module, "JIT compile of no module");
  TILEC_CHECK(impl_->jit != nullptr, "JIT compile for {}, which this host does not run", impl_->triple);
  std::lock_guard<std::mutex> lock(impl_->mutex);
  Optimize(*module);
  llvm::orc::LLJIT& jit = *impl_->jit;
  std::string name = fmt::format("tilec_module_{}", impl_->next_dylib++);
  module->setModuleIdentifier(name);
  llvm::orc::JITDylib& dylib = impl_->NewDylib(name);
  if (llvm::Error e = jit.addIRModule(
          dylib, llvm::orc::ThreadSafeModule(std::move(module),
                                             llvm::orc::ThreadSafeContext(std::move(context)))))
    throw DeviceError(fmt::format("LLVM JIT: adding a module: {}", Message(std::move(e))));
  std::vector<void*> addresses = Lookup(dylib, symbols);
  std::string compiled = impl_->objects.Take(name);
  if (object) *object = std::move(compiled);
  return addresses;
}

std::string Jit::EmitObject(llvm::Module& module) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  Optimize(module);
  // A machine of its own: the JIT's code is not position-independent, an
  // application's (PIE) executable needs it to be.
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(impl_->triple, error);
  if (!target) throw DeviceError(fmt::format("LLVM: no target for {}: {}", impl_->triple, error));
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      impl_->triple, impl_->cpu, impl_->features, llvm::TargetOptions(), llvm::Reloc::PIC_, std::nullopt,
      llvm::CodeGenOptLevel::Aggressive));
  if (!machine) throw DeviceError(fmt::format("LLVM: cannot create a target machine for {}", impl_->triple));
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream out(buffer);
  llvm::legacy::PassManager passes;
  if (machine->addPassesToEmitFile(passes, out, nullptr, llvm::CodeGenFileType::ObjectFile))
    throw DeviceError(fmt::format("LLVM: {} cannot emit object files", impl_->triple));
  passes.run(module);
  return std::string(buffer.begin(), buffer.end());
}

std::vector<void*> Jit::Load(const std::string& object, const std::vector<std::string>& symbols) {
  TILEC_CHECK(impl_->jit != nullptr, "JIT load for {}, which this host does not run", impl_->triple);
  std::lock_guard<std::mutex> lock(impl_->mutex);
  llvm::orc::LLJIT& jit = *impl_->jit;
  std::string name = fmt::format("tilec_module_{}", impl_->next_dylib++);
  llvm::orc::JITDylib& dylib = impl_->NewDylib(name);
  if (llvm::Error e = jit.addObjectFile(dylib, llvm::MemoryBuffer::getMemBufferCopy(object, name)))
    throw DeviceError(fmt::format("LLVM JIT: loading a cached object: {}", Message(std::move(e))));
  return Lookup(dylib, symbols);
}

std::vector<void*> Jit::Lookup(llvm::orc::JITDylib& dylib, const std::vector<std::string>& symbols) {
  std::vector<void*> addresses;
  for (const std::string& name : symbols) {
    llvm::Expected<llvm::orc::ExecutorAddr> addr = impl_->jit->lookup(dylib, name);
    if (!addr) {
      throw DeviceError(
          fmt::format("LLVM JIT: compiling '{}': {}", name, Message(addr.takeError())),
          impl_->TakeLog());
    }
    addresses.push_back(addr->toPtr<void*>());
  }
  impl_->TakeLog();  // warnings of a successful build
  return addresses;
}

}  // namespace tilec::hal::cpu
