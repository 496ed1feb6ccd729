// The hand-built kernels of the LLVM lowering tests (llvm_emit_test.cc,
// llvm_emit_memory_test.cc): the llvm:cpu device, host buffers, sem
// shorthands and a launcher that builds and runs one kernel.
#pragma once

#include <array>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "compiler/sem/builder.h"
#include "hal/launch_table.h"
#include "hal/llvm/llvm_device.h"

namespace tilec::hal::cpu::emit_fixture {

using namespace sem::builder;
using lang::DataType;
using sem::AddressSpace;
using sem::Expr;
using sem::Stmt;
using sem::Type;

inline LlvmDevice& Device() {
  static LlvmDevice device;
  return device;
}

// The bytes of a host buffer, typed on access.
struct Host {
  std::vector<std::byte> bytes;

  template <typename T>
  static Host Of(std::vector<T> values) {
    Host h;
    h.bytes.resize(values.size() * sizeof(T));
    if (!values.empty()) std::memcpy(h.bytes.data(), values.data(), h.bytes.size());
    return h;
  }
  template <typename T>
  static Host Zeros(size_t n) {
    return Of(std::vector<T>(n));
  }
  template <typename T>
  T At(size_t i) const {
    T v;
    std::memcpy(&v, bytes.data() + i * sizeof(T), sizeof(T));
    return v;
  }
};

inline Type Ptr(DataType d, int width = 1) {
  return Type::Pointer(Type::Scalar(d, width), AddressSpace::Global);
}
inline sem::Param Buf(const std::string& name, DataType d, int width = 1) {
  return {name, Ptr(d, width), true};
}
inline Expr P(const std::string& name, DataType d, int width = 1) { return _Var(name, Ptr(d, width)); }
inline Expr I(int64_t v) { return _Const(v); }
inline Expr C(int64_t v, DataType d) { return _Const(v, d); }

inline sem::Function Kernel(std::vector<sem::Param> params, std::vector<Stmt> body,
                     std::array<int64_t, 3> local = {1, 1, 1}, DataType index = DataType::I32) {
  sem::Function f;
  f.name = "k";
  f.params = std::move(params);
  f.body = _Block(std::move(body));
  f.index_type = index;
  f.work_group_size = local;
  return f;
}

// Builds `f` on the device and runs it over `global` work items in groups of
// `local`, its parameters bound to `bufs` (read back afterwards).
inline void Launch(const sem::Function& f, std::vector<Host*> bufs,
            std::array<int64_t, 3> global = {1, 1, 1}, std::array<int64_t, 3> local = {1, 1, 1}) {
  sem::Module module;
  module.functions.push_back(f);
  module.functions.back().work_group_size = local;
  // One launch of `f`; one index point, so it runs on the calling thread.
  hal::LaunchTable launches;
  launches.kernels.push_back({f.name, global, local, {}, 1});
  std::unique_ptr<Executable> exe = Device().Build(module, launches);
  std::vector<std::unique_ptr<DeviceBuffer>> owned;
  std::vector<DeviceBuffer*> args;
  for (Host* h : bufs) {
    owned.push_back(Device().Allocate(h->bytes.size()));
    Device().Write(*owned.back(), h->bytes.data(), h->bytes.size());
    args.push_back(owned.back().get());
  }
  exe->Launch(0, args);
  for (size_t i = 0; i < bufs.size(); ++i)
    Device().Read(*owned[i], bufs[i]->bytes.data(), bufs[i]->bytes.size());
}

// Stores `values` into o[0..] (o of their type).
inline std::vector<Stmt> StoreAll(const Expr& o, const std::vector<Expr>& values) {
  std::vector<Stmt> s;
  for (size_t i = 0; i < values.size(); ++i)
    s.push_back(_Store(o, I(static_cast<int64_t>(i)), values[i]));
  return s;
}

}  // namespace tilec::hal::cpu::emit_fixture
