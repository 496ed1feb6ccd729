// Internal to bench/: the state of one oneDNN runner and the helpers that
// place inputs in the layouts a primitive wants (peer_onednn.cc for
// bench_peers, suite/onednn_case.cc for bench/suite).
#pragma once

#include <dnnl.hpp>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "bench/peer.h"
#include "support/error.h"

namespace tilec::bench::onednn {

using dnnl::memory;
using Tag = memory::format_tag;
using Dt = memory::data_type;

// The engine, the stream, the primitive and its arguments of one runner.
struct State {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  dnnl::primitive primitive;
  std::unordered_map<int, memory> args;
  // The output as a row-major tensor of these dims in this plain format.
  memory::desc output_user;
  int output_arg = DNNL_ARG_DST;
};

inline const lang::Tensor& Input(const Inputs& inputs, const std::string& name) {
  auto it = inputs.find(name);
  TILEC_CHECK(it != inputs.end(), "the workload has no input '{}'", name);
  TILEC_CHECK(it->second.dtype() == lang::DataType::F32, "input '{}' is not f32", name);
  return it->second;
}

// A oneDNN-owned memory of `want` holding `t`, which is laid out as `user`.
inline memory Place(State& s, const memory::desc& want, const memory::desc& user, const lang::Tensor& t) {
  TILEC_CHECK(user.get_size() == t.bytes(), "tensor of {} bytes for a oneDNN desc of {}", t.bytes(),
              user.get_size());
  // oneDNN takes a non-const handle; the reorder only reads it.
  memory src(user, s.engine, const_cast<std::byte*>(t.data()));
  memory dst(want, s.engine);
  dnnl::reorder(src, dst).execute(s.stream, src, dst);
  s.stream.wait();
  return dst;
}

inline Runner MakeRunner(std::shared_ptr<State> s, std::string name, const char* impl) {
  Runner r;
  r.name = std::move(name);
  r.detail = impl ? impl : "";
  r.run = [s] {
    s->primitive.execute(s->stream, s->args);
    s->stream.wait();
  };
  r.output = [s] {
    std::vector<float> out(s->output_user.get_size() / sizeof(float));
    memory user(s->output_user, s->engine, out.data());
    memory& dst = s->args.at(s->output_arg);
    dnnl::reorder(dst, user).execute(s->stream, dst, user);
    s->stream.wait();
    return out;
  };
  return r;
}

}  // namespace tilec::bench::onednn
