#include "runtime/program.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <functional>

#include "compiler/sem/ir.h"
#include "runtime/launch_table.h"
#include "runtime/layout_pack.h"
#include "runtime/settings.h"
#include "runtime/tuner.h"
#include "support/error.h"
#include "tile_lang/binder.h"
#include "tile_lang/parser.h"

namespace tilec::runtime {
namespace {

// Vector stores marked streaming are aligned to the whole vector (sem::Store's
// promise); every other access only to its element.
constexpr size_t kStreamingAlignment = 64;

class FindsStreamingStore : public sem::Visitor {
 public:
  bool found = false;

 protected:
  void VisitStore(const sem::Store& n) override {
    if (n.streaming) found = true;
    sem::Visitor::VisitStore(n);
  }
};

bool HasStreamingStore(const sem::Function& f) {
  FindsStreamingStore finder;
  finder.Visit(f.body);
  return finder.found;
}

size_t LayoutBytes(const lang::TensorDecl& t) {
  return static_cast<size_t>(t.layout.elements) * lang::ByteSize(t.shape.dtype);
}

}  // namespace

class Program::Pool {
 public:
  std::unique_ptr<BufferSet> Take() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (free_.empty()) return std::make_unique<BufferSet>();
    std::unique_ptr<BufferSet> set = std::move(free_.back());
    free_.pop_back();
    return set;
  }
  void Give(std::unique_ptr<BufferSet> set) {
    std::lock_guard<std::mutex> lock(mutex_);
    free_.push_back(std::move(set));
  }

  // A set taken for one run, given back however the run ends.
  struct Lease {
    Pool& pool;
    std::unique_ptr<BufferSet> set;
    explicit Lease(Pool& p) : pool(p), set(p.Take()) {}
    ~Lease() { pool.Give(std::move(set)); }
  };

 private:
  std::mutex mutex_;
  std::vector<std::unique_ptr<BufferSet>> free_;
};

Program::Program(Program&&) noexcept = default;
Program& Program::operator=(Program&&) noexcept = default;
Program::~Program() = default;

Program Program::Compile(const SourceFilePtr& source,
                         const std::map<std::string, lang::Shape>& shapes,
                         std::shared_ptr<hal::Device> device, compiler::CompileOptions options,
                         bool keep_hw) {
  lang::Program bound = lang::Bind(lang::Parse(source), shapes);
  return Compile(bound, std::move(device), std::move(options), keep_hw);
}

Program Program::Compile(const lang::Program& bound, std::shared_ptr<hal::Device> device,
                         compiler::CompileOptions options, bool keep_hw) {
  return Compile(bound, std::move(device), std::move(options), keep_hw, /*build=*/true);
}

Program Program::CompileOnly(const lang::Program& bound, std::shared_ptr<hal::Device> device,
                             compiler::CompileOptions options, bool keep_hw) {
  return Compile(bound, std::move(device), std::move(options), keep_hw, /*build=*/false);
}

Program Program::Compile(const lang::Program& bound, std::shared_ptr<hal::Device> device,
                         compiler::CompileOptions options, bool keep_hw, bool build) {
  TILEC_CHECK(device != nullptr || !build, "no device");
  if (device) {
    if (!keep_hw) options.hw = device->hardware_model();
    // Tune on first use (TILEC_TUNE=SECONDS) if the program is built to
    // run, then apply the tuning cache.
    ApplyTuning(bound, device, build ? ProcessSettings().tune_budget_s : 0, options);
  }
  Program p;
  p.device_ = std::move(device);
  p.compiled_ = compiler::CompileProgram(bound, options);
  if (build) p.executable_ = p.device_->Build(p.compiled_.Module(), LaunchTableOf(p.compiled_));
  p.Prepare();
  return p;
}

hal::Device& Program::device() const {
  TILEC_CHECK(device_ != nullptr, "a program compiled without a device has none");
  return *device_;
}

std::string Program::TargetCode(hal::Device& device) const {
  return device.EmitProgram(compiled_.Module(), LaunchTableOf(compiled_));
}

void Program::CheckBuilt() const {
  if (executable_) return;
  if (!device_)
    TILEC_USER_ERROR("this program was compiled for a hardware model without a device, so it cannot run");
  std::string why = device_->WhyCannotRun();
  TILEC_USER_ERROR("this program was compiled for {} without being built, so it cannot run{}{}", device_->id(),
                   why.empty() ? "" : ": ", why);
}

void Program::Prepare() {
  const lang::Program& prog = compiled_.program;
  auto slot = [&](const std::string& name) {
    auto it = std::find(slot_names_.begin(), slot_names_.end(), name);
    if (it != slot_names_.end()) return static_cast<size_t>(it - slot_names_.begin());
    const lang::TensorDecl& t = prog.Tensor(name);
    slot_names_.push_back(name);
    slot_bytes_.push_back(LayoutBytes(t));
    slot_alignment_.push_back(lang::ByteSize(t.shape.dtype));
    return slot_names_.size() - 1;
  };
  for (const std::string& n : prog.inputs) slot(n);
  for (const std::string& n : prog.outputs) slot(n);
  for (const compiler::CompiledKernel& k : compiled_.kernels) {
    std::vector<size_t> params;
    for (const std::string& n : k.spec.outputs) params.push_back(slot(n));
    for (const std::string& n : k.spec.inputs) params.push_back(slot(n));
    if (HasStreamingStore(k.code.function))
      for (const std::string& n : k.spec.outputs)
        slot_alignment_[slot(n)] = std::max(slot_alignment_[slot(n)], kStreamingAlignment);
    kernel_slots_.push_back(std::move(params));
  }
  constants_generation_ = std::make_unique<std::atomic<uint64_t>>(1);
  SetConstantInputs({});  // plans the memory, making the pool and the staged buffers
}

std::vector<bool> ConstantInputMask(const lang::Program& program, const std::vector<std::string>& names) {
  std::vector<bool> input(program.inputs.size(), false);
  for (const std::string& n : names) {
    auto it = std::find(program.inputs.begin(), program.inputs.end(), n);
    if (it == program.inputs.end())
      TILEC_USER_ERROR("constant input '{}' is not an input of the program (inputs: {})", n,
                       fmt::join(program.inputs, ", "));
    input[it - program.inputs.begin()] = true;
  }
  return input;
}

void Program::SetConstantInputs(const std::vector<std::string>& names) {
  const lang::Program& prog = compiled_.program;
  std::vector<bool> input = ConstantInputMask(prog, names);
  size_t num_io = prog.inputs.size() + prog.outputs.size();
  // Writers of each slot: a temporary written by one kernel only can hold
  // a constant result.
  std::vector<int> writers(slot_names_.size(), 0);
  for (size_t k = 0; k < kernel_slots_.size(); ++k)
    for (size_t o = 0; o < compiled_.kernels[k].spec.outputs.size(); ++o) ++writers[kernel_slots_[k][o]];
  std::vector<bool> constant(slot_names_.size(), false);
  std::copy(input.begin(), input.end(), constant.begin());
  std::vector<bool> kernel(kernel_slots_.size(), false);
  for (size_t k = 0; k < kernel_slots_.size() && !names.empty(); ++k) {
    const std::vector<size_t>& params = kernel_slots_[k];
    size_t outs = compiled_.kernels[k].spec.outputs.size();
    bool ok = true;
    for (size_t a = 0; a < params.size() && ok; ++a)
      ok = a < outs ? params[a] >= num_io && writers[params[a]] == 1 : constant[params[a]];
    if (!ok) continue;
    kernel[k] = true;
    for (size_t a = 0; a < outs; ++a) constant[params[a]] = true;
  }
  // Inputs that only constant kernels read: their copy-in is skipped too.
  std::vector<bool> only(prog.inputs.size(), false);
  for (size_t i = 0; i < input.size(); ++i) {
    if (!input[i]) continue;
    only[i] = true;
    for (size_t k = 0; k < kernel_slots_.size(); ++k)
      if (!kernel[k] && std::count(kernel_slots_[k].begin(), kernel_slots_[k].end(), i)) only[i] = false;
  }
  constant_input_ = std::move(input);
  constant_kernel_ = std::move(kernel);
  constant_only_input_ = std::move(only);
  InvalidateConstants();
  PlanMemory();
}

void Program::PlanMemory() {
  const lang::Program& prog = compiled_.program;
  size_t num_io = prog.inputs.size() + prog.outputs.size(), slots = slot_names_.size();
  constexpr size_t kNone = SIZE_MAX;
  std::vector<size_t> first(slots, kNone), last(slots, 0);
  std::vector<bool> keep(slots, false);  // a constant kernel's result: kept between runs
  for (size_t k = 0; k < kernel_slots_.size(); ++k)
    for (size_t a = 0; a < kernel_slots_[k].size(); ++a) {
      size_t s = kernel_slots_[k][a];
      if (first[s] == kNone) first[s] = k;
      last[s] = k;
      if (constant_kernel_[k] && a < compiled_.kernels[k].spec.outputs.size()) keep[s] = true;
    }
  storage_of_.assign(slots, kNone);
  storage_bytes_.clear();
  memory_plan_ = {};
  std::vector<size_t> temps;
  for (size_t s = 0; s < slots; ++s) {
    // A layout with padding (blocked tails, panels) keeps a buffer of its
    // own: kernels write only the real elements and read the padding as the
    // zeros a new buffer holds.
    const lang::TensorDecl& decl = prog.Tensor(slot_names_[s]);
    bool padded = decl.layout.elements != decl.shape.ElementCount();
    bool shareable = s >= num_io && first[s] != kNone && !keep[s] && !decl.layout.image && !padded;
    if (shareable) {
      temps.push_back(s);
      continue;
    }
    storage_of_[s] = storage_bytes_.size();
    storage_bytes_.push_back(slot_bytes_[s]);
    if (s >= num_io && keep[s]) {
      ++memory_plan_.constant_results;
      memory_plan_.constant_bytes += slot_bytes_[s];
    }
    if (s >= num_io) {
      ++memory_plan_.temporaries;
      ++memory_plan_.buffers;
      memory_plan_.bytes += slot_bytes_[s];
      memory_plan_.unshared_bytes += slot_bytes_[s];
    }
  }
  // Greedy by first use: each temporary takes the free buffer (last use
  // before its first) whose size is closest to its own, else a new one.
  std::stable_sort(temps.begin(), temps.end(), [&](size_t a, size_t b) { return first[a] < first[b]; });
  std::vector<size_t> shared, busy_until;  // shared storages and their last use
  for (size_t s : temps) {
    size_t best = kNone;
    auto cost = [&](size_t i) {
      size_t have = storage_bytes_[shared[i]], want = slot_bytes_[s];
      return have >= want ? have - want : 2 * (want - have);  // growing costs more than slack
    };
    for (size_t i = 0; i < shared.size(); ++i)
      if (busy_until[i] < first[s] && (best == kNone || cost(i) < cost(best))) best = i;
    if (best == kNone) {
      best = shared.size();
      shared.push_back(storage_bytes_.size());
      storage_bytes_.push_back(0);
      busy_until.push_back(0);
    }
    storage_of_[s] = shared[best];
    storage_bytes_[shared[best]] = std::max(storage_bytes_[shared[best]], slot_bytes_[s]);
    busy_until[best] = last[s];
    ++memory_plan_.temporaries;
    memory_plan_.unshared_bytes += slot_bytes_[s];
  }
  for (size_t storage : shared) memory_plan_.bytes += storage_bytes_[storage];
  memory_plan_.buffers += shared.size();
  // Buffers allocated under the old plan do not fit the new one.
  pool_ = std::make_unique<Pool>();
  staged_ = std::make_unique<BufferSet>();
}

void Program::InvalidateConstants() { constants_generation_->fetch_add(1); }

bool Program::ConstantsValid(const BufferSet& set, const ConstantMemory& memory) const {
  if (set.constants_generation != constants_generation_->load()) return false;
  for (size_t i = 0; i < constant_input_.size(); ++i)
    if (constant_input_[i] && set.constant_sources[i] != memory(i)) return false;
  return true;
}

size_t Program::HostAlignment(const std::string& tensor) const {
  auto it = std::find(slot_names_.begin(), slot_names_.end(), tensor);
  TILEC_CHECK(it != slot_names_.end(), "no tensor '{}'", tensor);
  return slot_alignment_[it - slot_names_.begin()];
}

hal::DeviceBuffer& Program::Owned(BufferSet& set, size_t slot) {
  if (set.owned.size() < storage_bytes_.size()) set.owned.resize(storage_bytes_.size());
  size_t storage = storage_of_[slot];
  if (set.owned[storage]) return *set.owned[storage];
  try {
    const lang::TensorDecl& decl = compiled_.program.Tensor(slot_names_[slot]);
    if (const std::optional<lang::ImageStorage>& image = decl.layout.image)
      set.owned[storage] = device_->AllocateImage(image->width, image->height, decl.shape.dtype);
    else
      set.owned[storage] = device_->Allocate(storage_bytes_[storage]);
  } catch (const DeviceError& e) {
    // Name the tensor and the kernels that would use it.
    const std::string& name = slot_names_[slot];
    const lang::TensorDecl& t = compiled_.program.Tensor(name);
    std::vector<std::string> kernels;
    for (size_t k = 0; k < kernel_slots_.size(); ++k)
      if (std::count(kernel_slots_[k].begin(), kernel_slots_[k].end(), slot))
        kernels.push_back(fmt::format("'{}'", compiled_.kernels[k].code.function.name));
    std::string users = kernels.empty() ? ""
                        : fmt::format(" used by kernel{} {}", kernels.size() == 1 ? "" : "s",
                                      fmt::join(kernels, ", "));
    throw DeviceError(fmt::format("tensor '{}' ({}, {} bytes){}: {}", name, ToString(t.shape),
                                  slot_bytes_[slot], users, e.what()),
                      e.build_log());
  }
  return *set.owned[storage];
}

void Program::Launch(BufferSet& set, const std::vector<hal::DeviceBuffer*>& slots, bool reuse,
                     const ConstantMemory& memory, RunStats* stats) {
  uint64_t generation = constants_generation_->load();
  if (!reuse) set.constants_generation = 0;  // a failed run leaves no stale claim
  for (size_t i = 0; i < kernel_slots_.size(); ++i) {
    if (reuse && constant_kernel_[i]) {
      if (stats) {
        stats->kernel_ns.push_back(0);
        ++stats->skipped_kernels;
      }
      continue;
    }
    set.args.clear();
    for (size_t s : kernel_slots_[i]) set.args.push_back(slots[s]);
    if (!stats) {
      executable_->LaunchUntimed(i, set.args);
      continue;
    }
    uint64_t ns = executable_->Launch(i, set.args);
    stats->kernel_ns.push_back(ns);
    stats->total_ns += ns;
  }
  set.constants_generation = generation;
  set.constant_sources.resize(constant_input_.size());  // allocates in a set's first run only
  for (size_t i = 0; i < constant_input_.size(); ++i)
    set.constant_sources[i] = constant_input_[i] ? memory(i) : nullptr;
}

bool Program::InPlaceRunnable() const {
  const lang::Program& prog = compiled_.program;
  for (size_t i = 0; i < prog.inputs.size() + prog.outputs.size(); ++i)
    if (prog.Tensor(slot_names_[i]).layout.image) return false;
  return true;
}

void Program::RunInPlace(std::span<void* const> data) {
  CheckBuilt();
  const lang::Program& prog = compiled_.program;
  size_t num_in = prog.inputs.size(), n = num_in + prog.outputs.size();
  TILEC_CHECK(data.size() == n, "RunInPlace with {} pointers for {} tensors", data.size(), n);
  Pool::Lease lease(*pool_);
  BufferSet& set = *lease.set;
  set.wrappers.resize(n);
  set.slots.assign(slot_names_.size(), nullptr);
  std::vector<hal::DeviceBuffer*>& slots = set.slots;
  auto memory = [&](size_t i) -> const void* { return data[i]; };
  bool reuse = ConstantsValid(set, memory);
  bool copied = false;
  for (size_t i = 0; i < n; ++i) {
    if (reuse && i < num_in && constant_only_input_[i]) continue;  // no kernel that runs reads it
    std::unique_ptr<hal::DeviceBuffer>& w = set.wrappers[i];
    if (!w || !device_->RewrapHost(*w, data[i], slot_bytes_[i])) w = device_->WrapHost(data[i], slot_bytes_[i]);
    if (w) {
      slots[i] = w.get();
      continue;
    }
    // A device that cannot use host memory: copy through its own buffer.
    hal::DeviceBuffer& buffer = Owned(set, i);
    slots[i] = &buffer;
    copied = true;
    if (i < num_in) device_->Write(buffer, data[i], slot_bytes_[i]);
  }
  for (size_t s = n; s < slot_names_.size(); ++s) slots[s] = &Owned(set, s);
  Launch(set, slots, reuse, memory, nullptr);
  for (size_t i = num_in; i < n; ++i) {
    if (set.wrappers[i]) {
      device_->SyncHost(*set.wrappers[i]);
    } else if (copied) {
      device_->Read(*slots[i], data[i], slot_bytes_[i]);
    }
  }
  // Only re-pointable wrappers stay (an OpenCL one would keep the caller's
  // memory bound to a cl_mem after the call).
  for (size_t i = 0; i < n; ++i)
    if (set.wrappers[i] && !device_->RewrapHost(*set.wrappers[i], data[i], slot_bytes_[i]))
      set.wrappers[i].reset();
}

void Program::RunOn(std::span<const HostView> inputs, std::span<const HostView> outputs,
                    RunStats* stats) {
  CheckBuilt();
  const lang::Program& prog = compiled_.program;
  if (inputs.size() != prog.inputs.size())
    TILEC_USER_ERROR("the program has {} inputs but {} were given", prog.inputs.size(), inputs.size());
  if (outputs.size() != prog.outputs.size())
    TILEC_USER_ERROR("the program has {} outputs but {} were given", prog.outputs.size(),
                     outputs.size());
  size_t num_in = inputs.size();
  for (size_t i = 0; i < num_in + outputs.size(); ++i) {
    bool is_input = i < num_in;
    const HostView& view = is_input ? inputs[i] : outputs[i - num_in];
    CheckView(view, prog.Tensor(slot_names_[i]), is_input ? "input" : "output", slot_names_[i],
              !is_input);
  }

  Pool::Lease lease(*pool_);
  BufferSet& set = *lease.set;

  std::vector<hal::DeviceBuffer*> slots(slot_names_.size(), nullptr);
  std::vector<std::unique_ptr<hal::DeviceBuffer>> wrapped(num_in + outputs.size());
  auto memory = [&](size_t i) -> const void* {
    return inputs[i].device_memory ? inputs[i].device_memory : inputs[i].data;
  };
  bool reuse = ConstantsValid(set, memory);
  int copied = 0;
  for (size_t i = 0; i < num_in + outputs.size(); ++i) {
    if (reuse && i < num_in && constant_only_input_[i]) continue;  // no kernel that runs reads it
    const HostView& view = i < num_in ? inputs[i] : outputs[i - num_in];
    const lang::TensorDecl& t = prog.Tensor(slot_names_[i]);
    if (view.device_memory) {
      if (t.layout.image)
        throw UsageError(fmt::format("{} '{}' is stored as an OpenCL image ({}); a cl_mem buffer cannot "
                                     "hold it: pass host memory",
                                     i < num_in ? "input" : "output", slot_names_[i], t.layout.name));
      wrapped[i] = device_->WrapDeviceMemory(view.device_memory, slot_bytes_[i], i >= num_in);
      slots[i] = wrapped[i].get();
      continue;
    }
    // An image is never the caller's memory (OpenCL needs an image object).
    bool in_place = !t.layout.image && MatchesLayout(view, t.layout) &&
                    reinterpret_cast<uintptr_t>(view.data) % slot_alignment_[i] == 0;
    if (in_place) wrapped[i] = device_->WrapHost(view.data, slot_bytes_[i]);
    if (wrapped[i]) {
      slots[i] = wrapped[i].get();
      continue;
    }
    hal::DeviceBuffer& buffer = Owned(set, i);
    slots[i] = &buffer;
    ++copied;
    if (i >= num_in || slot_bytes_[i] == 0) continue;
    if (view.strides.empty()) {
      device_->Write(buffer, view.data, slot_bytes_[i]);
    } else {
      std::vector<std::byte> bytes = PackToLayout(Gather(view), t.layout);
      device_->Write(buffer, bytes.data(), bytes.size());
    }
  }
  for (size_t s = num_in + outputs.size(); s < slot_names_.size(); ++s) slots[s] = &Owned(set, s);

  RunStats s;
  Launch(set, slots, reuse, memory, &s);
  s.copied_views = copied;

  for (size_t i = num_in; i < num_in + outputs.size(); ++i) {
    const HostView& view = outputs[i - num_in];
    if (view.device_memory) continue;  // the device's memory: nothing to copy or map
    if (wrapped[i]) {
      device_->SyncHost(*wrapped[i]);
      continue;
    }
    if (slot_bytes_[i] == 0) continue;
    if (view.strides.empty()) {
      device_->Read(*slots[i], view.data, slot_bytes_[i]);
    } else {
      const lang::TensorDecl& t = prog.Tensor(slot_names_[i]);
      std::vector<std::byte> bytes(slot_bytes_[i]);
      device_->Read(*slots[i], bytes.data(), bytes.size());
      Scatter(UnpackFromLayout(bytes.data(), bytes.size(), t.shape, t.layout), view);
    }
  }
  if (stats) *stats = std::move(s);
}

std::map<std::string, lang::Tensor> Program::Run(const std::map<std::string, lang::Tensor>& inputs,
                                                 RunStats* stats) {
  const lang::Program& prog = compiled_.program;
  std::vector<HostView> in_views;
  for (const std::string& name : prog.inputs) {
    auto it = inputs.find(name);
    if (it == inputs.end()) TILEC_USER_ERROR("no tensor given for input '{}'", name);
    in_views.push_back(ViewOf(it->second));
  }
  for (const auto& [name, tensor] : inputs)
    if (std::find(prog.inputs.begin(), prog.inputs.end(), name) == prog.inputs.end())
      TILEC_USER_ERROR("'{}' is not an input of the program", name);
  std::map<std::string, lang::Tensor> out;
  std::vector<HostView> out_views;
  for (const std::string& name : prog.outputs) {
    lang::Tensor& t = out.emplace(name, lang::Tensor(prog.Tensor(name).shape)).first->second;
    out_views.push_back(ViewOf(t));
  }
  RunOn(in_views, out_views, stats);
  return out;
}

void Program::Upload(const std::map<std::string, lang::Tensor>& inputs) {
  CheckBuilt();
  const lang::Program& prog = compiled_.program;
  for (size_t i = 0; i < prog.inputs.size(); ++i) {
    const std::string& name = prog.inputs[i];
    auto it = inputs.find(name);
    if (it == inputs.end()) TILEC_USER_ERROR("no tensor given for input '{}'", name);
    const lang::TensorDecl& t = prog.Tensor(name);
    CheckView(ViewOf(it->second), t, "input", name, false);
    std::vector<std::byte> bytes = PackToLayout(it->second, t.layout);
    device_->Write(Owned(*staged_, i), bytes.data(), bytes.size());
  }
  staged_->constants_generation = 0;  // new contents for the constants too
  for (const auto& [name, tensor] : inputs)
    if (std::find(prog.inputs.begin(), prog.inputs.end(), name) == prog.inputs.end())
      TILEC_USER_ERROR("'{}' is not an input of the program", name);
}

RunStats Program::Execute() {
  CheckBuilt();
  std::vector<hal::DeviceBuffer*> slots;
  for (size_t s = 0; s < slot_names_.size(); ++s) slots.push_back(&Owned(*staged_, s));
  // The staged buffers never move: Upload alone changes the constants.
  auto memory = [&](size_t i) -> const void* { return slots[i]; };
  RunStats stats;
  Launch(*staged_, slots, ConstantsValid(*staged_, memory), memory, &stats);
  return stats;
}

std::map<std::string, lang::Tensor> Program::Download() {
  const lang::Program& prog = compiled_.program;
  std::map<std::string, lang::Tensor> out;
  for (size_t i = prog.inputs.size(); i < prog.inputs.size() + prog.outputs.size(); ++i) {
    const lang::TensorDecl& t = prog.Tensor(slot_names_[i]);
    hal::DeviceBuffer& b = Owned(*staged_, i);
    std::vector<std::byte> bytes(slot_bytes_[i]);
    device_->Read(b, bytes.data(), bytes.size());
    out.emplace(t.name, UnpackFromLayout(bytes.data(), bytes.size(), t.shape, t.layout));
  }
  return out;
}

// The staged set's buffer of `tensor` (Upload/Execute/Download's), or null
// before the first Upload or Execute allocated it.
hal::DeviceBuffer* Program::StagedBuffer(const std::string& tensor) const {
  auto it = std::find(slot_names_.begin(), slot_names_.end(), tensor);
  if (it == slot_names_.end()) TILEC_USER_ERROR("tensor '{}' has no device buffer", tensor);
  size_t storage = storage_of_[static_cast<size_t>(it - slot_names_.begin())];
  if (storage >= staged_->owned.size() || !staged_->owned[storage])
    TILEC_USER_ERROR("tensor '{}' has no staged buffer yet (Upload or Execute first)", tensor);
  return staged_->owned[storage].get();
}

std::vector<std::byte> Program::ReadBuffer(const std::string& tensor) const {
  hal::DeviceBuffer* b = StagedBuffer(tensor);
  // A shared buffer may be larger than this tensor: its bytes come first.
  size_t size = std::min(b->size(), slot_bytes_[std::find(slot_names_.begin(), slot_names_.end(), tensor) -
                                                slot_names_.begin()]);
  std::vector<std::byte> bytes(size);
  device_->Read(*b, bytes.data(), bytes.size());
  return bytes;
}

void Program::WriteBuffer(const std::string& tensor, const std::vector<std::byte>& bytes) {
  hal::DeviceBuffer* b = StagedBuffer(tensor);
  size_t size = std::min(b->size(), slot_bytes_[std::find(slot_names_.begin(), slot_names_.end(), tensor) -
                                                slot_names_.begin()]);
  if (bytes.size() != size)
    TILEC_USER_ERROR("{} bytes for the {}-byte buffer of '{}'", bytes.size(), size, tensor);
  device_->Write(*b, bytes.data(), bytes.size());
  staged_->constants_generation = 0;
}

}  // namespace tilec::runtime
