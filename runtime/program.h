// runtime::Program: a Tile program compiled once for bound shapes, layouts
// and a device, run many times on new data.
//
//   auto device = hal::OpenDevice("llvm");
//   runtime::Program p = runtime::Program::Compile(source, {{"A", shape}, …}, device);
//   auto outputs = p.Run({{"A", a}, …});          // host tensors, copied
//   p.RunOn(input_views, output_views);           // caller memory, in place
//
// Thread safety: Run and RunOn may be called on one Program from several
// threads at once, on different output memory. Each call takes a set of
// device buffers for the copies and temporaries it needs from a pool (a new
// set when every pooled one is in use), so nothing a run writes is shared.
// Upload/Execute/Download share one staged set and are for single-threaded
// benchmarks only.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "compiler/pipeline.h"
#include "hal/hal.h"
#include "runtime/host_view.h"
#include "tile_lang/program.h"
#include "tile_lang/tensor.h"

namespace tilec::runtime {

// How the temporaries (tensors the kernels pass between them) are stored:
// temporaries whose lifetimes (first to last kernel that uses them) do not
// overlap share one buffer; a constant kernel's result (kept between runs),
// an image and a layout with padding (whose zeros kernels rely on) keep
// their own.
struct MemoryPlan {
  size_t temporaries = 0;      // how many
  size_t buffers = 0;          // the buffers holding them
  uint64_t bytes = 0;          // the buffers' bytes (the peak: every one is allocated at once)
  uint64_t unshared_bytes = 0; // the bytes with one buffer per temporary
  // Of those: the constant kernels' results (a relayout of the weights),
  // kept between runs, which are never shared.
  size_t constant_results = 0;
  uint64_t constant_bytes = 0;
};

struct RunStats {
  std::vector<uint64_t> kernel_ns;  // device time of each kernel, in order
  uint64_t total_ns = 0;            // sum of kernel_ns
  int copied_views = 0;             // RunOn: views copied in or out instead of used in place
  int skipped_kernels = 0;          // constant kernels not run (their results kept; 0 ns each)
};

class Program {
 public:
  // Parses, binds and compiles. `options.hw` is replaced by the device's
  // hardware model unless `keep_hw` is set.
  static Program Compile(const SourceFilePtr& source, const std::map<std::string, lang::Shape>& shapes,
                         std::shared_ptr<hal::Device> device, compiler::CompileOptions options = {},
                         bool keep_hw = false);
  static Program Compile(const lang::Program& bound, std::shared_ptr<hal::Device> device,
                         compiler::CompileOptions options = {}, bool keep_hw = false);
  // Compiles without building the device code: its plans, sem and target
  // code (TargetCode) are there, and running it is a UserError. For a device
  // whose code this host cannot run (hal::Device::WhyCannotRun), and for
  // `tilec compile`. It applies the tuning cache but never tunes (it runs
  // nothing). A null `device` compiles for `options.hw` alone (kept as
  // given), without the tuning cache, whose configurations belong to a
  // device: plans and sem, and the target code of a device given to
  // TargetCode (`tilec compile --hw seed`).
  static Program CompileOnly(const lang::Program& bound, std::shared_ptr<hal::Device> device,
                             compiler::CompileOptions options = {}, bool keep_hw = false);

  Program(Program&&) noexcept;
  Program& operator=(Program&&) noexcept;
  ~Program();

  // Pre: one tensor per program input with exactly its bound shape
  // (UserError naming the input otherwise).
  std::map<std::string, lang::Tensor> Run(const std::map<std::string, lang::Tensor>& inputs,
                                          RunStats* stats = nullptr);

  // Runs on caller memory: one view per program input and output, in
  // signature order (bound().inputs, bound().outputs). A view whose memory
  // is in the tensor's compiled layout and aligned for the kernels is used
  // in place where the device can (WrapHost); any other is copied in (and
  // out). UserError naming the tensor for a wrong count, dtype, shape,
  // stride or size (CheckView).
  void RunOn(std::span<const HostView> inputs, std::span<const HostView> outputs,
             RunStats* stats = nullptr);

  // The fast path of RunOn for embedding (the C ABI's run of a tiny program
  // costs a fraction of a microsecond): one pointer per input and output in
  // signature order, each to at least the tensor's compiled-layout bytes
  // (HostBytes) in that layout, aligned to HostAlignment, non-null, and the
  // outputs not overlapping anything. Nothing is checked but the count
  // (InternalError); the caller checks the rest. Allocates nothing once a
  // pooled set has run (the wrappers of caller memory are re-pointed).
  // Not for programs with image inputs or outputs (InPlaceRunnable).
  void RunInPlace(std::span<void* const> data);
  // No input or output is stored as an OpenCL image (those never use the
  // caller's memory), so RunInPlace may run the program.
  bool InPlaceRunnable() const;

  // Constant inputs (a network's weights): the caller promises that their
  // contents do not change between runs. A kernel that reads only constants
  // (and the results of such kernels) and writes only temporaries nothing
  // else writes (a relayout of the weights into panels) then runs in the
  // first run of each pooled buffer set and is skipped in later ones, and a
  // copy-in that only such kernels read is skipped too. Giving a constant
  // input other memory than in the set's last run (another pointer, or a new
  // Upload) runs them again; so does InvalidateConstants() after the caller
  // changed a constant in place. SetConstantInputs replaces the list (empty:
  // none); UserError for a name that is not an input. Neither may be called
  // while a run is in progress on another thread.
  void SetConstantInputs(const std::vector<std::string>& names);
  void InvalidateConstants();
  // The kernels skipped once constants are cached, by index in compiled().kernels.
  const std::vector<bool>& constant_kernels() const { return constant_kernel_; }
  // The temporaries' storage (planned again by SetConstantInputs, which
  // frees the buffer sets allocated so far).
  const MemoryPlan& memory_plan() const { return memory_plan_; }

  // Uploads inputs once, then runs the kernels only (for benchmarks).
  void Upload(const std::map<std::string, lang::Tensor>& inputs);
  RunStats Execute();
  std::map<std::string, lang::Tensor> Download();

  // The raw bytes of a tensor's device buffer (input, output or temporary)
  // in the staged set that Upload/Execute/Download use, padding included, in
  // its physical layout; and overwriting them (tests poison the padding this
  // way). UserError for a tensor without a buffer, before Upload, or for
  // bytes of the wrong size. A temporary may share its buffer with others
  // (memory_plan()): after Execute it holds the last of them written.
  std::vector<std::byte> ReadBuffer(const std::string& tensor) const;
  void WriteBuffer(const std::string& tensor, const std::vector<std::byte>& bytes);

  const compiler::CompiledProgram& compiled() const { return compiled_; }
  const lang::Program& bound() const { return compiled_.program; }
  // Pre: compiled with a device (InternalError otherwise).
  hal::Device& device() const;
  // The target code of every kernel (OpenCL C, …) as the program's device
  // builds it, or as `device` (of any language) would.
  std::string TargetCode() const { return TargetCode(device()); }
  std::string TargetCode(hal::Device& device) const;

  // Bytes of host memory a view must start at a multiple of to be used in place.
  size_t HostAlignment(const std::string& tensor) const;
  // Bytes of input or output `index` (signature order, inputs first) in its
  // compiled layout, and its alignment (HostAlignment).
  size_t HostBytes(size_t index) const { return slot_bytes_.at(index); }
  size_t HostAlignment(size_t index) const { return slot_alignment_.at(index); }

 private:
  // Device buffers for every tensor the kernels touch, allocated on first use.
  struct BufferSet {
    std::vector<std::unique_ptr<hal::DeviceBuffer>> owned;  // by storage (storage_of_)
    // RunInPlace: WrapHost buffers kept for re-pointing (by slot, inputs and
    // outputs), and the slot and argument lists it reuses.
    std::vector<std::unique_ptr<hal::DeviceBuffer>> wrappers;
    std::vector<hal::DeviceBuffer*> slots, args;
    // The constant kernels' results in this set are valid for this
    // generation (0: never computed) and this memory of the constant inputs
    // (by input; null for the others).
    uint64_t constants_generation = 0;
    std::vector<const void*> constant_sources;
  };
  class Pool;

  Program() = default;
  void Prepare();
  // Assigns every slot its storage (storage_of_): one of its own, or, for a
  // temporary, one shared with temporaries whose lifetimes do not overlap.
  void PlanMemory();
  hal::DeviceBuffer& Owned(BufferSet& set, size_t slot);
  hal::DeviceBuffer* StagedBuffer(const std::string& tensor) const;
  // The memory each input was given in a run (a host pointer, a cl_mem, a
  // staged buffer); consulted for the constant inputs only.
  using ConstantMemory = std::function<const void*(size_t input)>;
  // Whether `set` holds the constant kernels' results for this generation
  // and the constant inputs at `memory`.
  bool ConstantsValid(const BufferSet& set, const ConstantMemory& memory) const;
  // Runs the kernels (their argument lists built in `set.args`), skipping
  // the constant ones when `reuse`; then records in `set` that its constant
  // results are valid for `memory`. Timed into `stats` unless it is null.
  // Allocates nothing once the set has run.
  void Launch(BufferSet& set, const std::vector<hal::DeviceBuffer*>& slots, bool reuse,
              const ConstantMemory& memory, RunStats* stats);

  // UserError unless the program was built (CompileOnly's cannot run).
  void CheckBuilt() const;

  std::shared_ptr<hal::Device> device_;  // null: compiled for a hardware model alone
  compiler::CompiledProgram compiled_;
  static Program Compile(const lang::Program& bound, std::shared_ptr<hal::Device> device,
                         compiler::CompileOptions options, bool keep_hw, bool build);

  std::unique_ptr<hal::Executable> executable_;  // null: compiled only (CompileOnly)
  // Slots: inputs, outputs, then the other tensors the kernels touch.
  std::vector<std::string> slot_names_;
  std::vector<size_t> slot_bytes_;
  std::vector<size_t> slot_alignment_;
  std::vector<std::vector<size_t>> kernel_slots_;  // each kernel's parameters
  // Slot -> storage (index into BufferSet::owned) and each storage's bytes.
  std::vector<size_t> storage_of_;
  std::vector<size_t> storage_bytes_;
  MemoryPlan memory_plan_;
  // Constant inputs (SetConstantInputs), by input index; the kernels that
  // read only constants; the inputs read by such kernels alone; the
  // generation that InvalidateConstants advances.
  std::vector<bool> constant_input_, constant_kernel_, constant_only_input_;
  std::unique_ptr<std::atomic<uint64_t>> constants_generation_;
  std::unique_ptr<Pool> pool_;
  std::unique_ptr<BufferSet> staged_;  // Upload/Execute/Download
};

// Which of `program`'s inputs (by index) `names` lists as constant inputs
// (Program::SetConstantInputs); UserError for a name that is not an input.
std::vector<bool> ConstantInputMask(const lang::Program& program, const std::vector<std::string>& names);

}  // namespace tilec::runtime
