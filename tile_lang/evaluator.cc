// Evaluate: checks the inputs, runs the ops in order, and frees each computed
// tensor after its last use. The per-op semantics live in eval_contraction.cc,
// eval_elementwise.cc and eval_special.cc.
#include "tile_lang/evaluator.h"

#include <fmt/format.h>

#include <set>

#include "support/error.h"
#include "tile_lang/eval_internal.h"

namespace tilec::lang {
namespace eval {

std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (size_t d = dims.size(); d-- > 1;) strides[d - 1] = strides[d] * dims[d];
  return strides;
}

std::string ElementName(const std::string& tensor, const std::vector<int64_t>& dims,
                        int64_t offset) {
  std::vector<int64_t> coords(dims.size());
  for (size_t d = dims.size(); d-- > 0;) {
    if (dims[d] > 0) {
      coords[d] = offset % dims[d];
      offset /= dims[d];
    }
  }
  return fmt::format("{}[{}]", tensor, fmt::join(coords, ", "));
}

const Tensor& Env::Get(const std::string& name) const {
  if (auto it = owned_.find(name); it != owned_.end()) return it->second;
  auto it = borrowed_.find(name);
  TILEC_CHECK(it != borrowed_.end(), "tensor '{}' used before it is defined (or after it was freed)",
              name);
  return *it->second;
}

Tensor Env::Take(const std::string& name) {
  if (auto it = owned_.find(name); it != owned_.end()) {
    Tensor t = std::move(it->second);
    owned_.erase(it);
    return t;
  }
  return Get(name);
}

const TensorDecl& Decl(const Program& p, const std::string& name) {
  auto it = p.tensors.find(name);
  TILEC_CHECK(it != p.tensors.end(), "tensor '{}' is not declared in the program", name);
  return it->second;
}

}  // namespace eval

namespace {

void CheckInputs(const Program& program, const std::map<std::string, Tensor>& inputs) {
  std::set<std::string> expected(program.inputs.begin(), program.inputs.end());
  for (const auto& [name, tensor] : inputs) {
    if (!expected.count(name))
      TILEC_USER_ERROR("unexpected input '{}'; the program's inputs are: {}", name,
                       fmt::join(program.inputs, ", "));
  }
  for (const auto& name : program.inputs) {
    const Shape& bound = eval::Decl(program, name).shape;
    auto it = inputs.find(name);
    if (it == inputs.end())
      TILEC_USER_ERROR("missing input '{}' (the program was bound to {})", name, ToString(bound));
    if (it->second.shape() != bound)
      TILEC_USER_ERROR("input '{}' has shape {} but the program was bound to {}", name,
                       ToString(it->second.shape()), ToString(bound));
  }
}

}  // namespace

std::map<std::string, Tensor> Evaluate(const Program& program,
                                       const std::map<std::string, Tensor>& inputs) {
  CheckInputs(program, inputs);
  eval::Env env;
  for (const auto& name : program.inputs) env.Borrow(name, inputs.at(name));

  // Index of the last op reading each tensor; program outputs are kept to the end.
  const std::set<std::string> outputs(program.outputs.begin(), program.outputs.end());
  std::map<std::string, size_t> last_use;
  for (size_t k = 0; k < program.ops.size(); ++k) {
    for (const auto& name : Reads(program.ops[k])) last_use[name] = k;
  }
  auto free_dead = [&](const std::string& name, size_t k) {
    if (outputs.count(name)) return;
    auto it = last_use.find(name);
    if (it == last_use.end() || it->second <= k) env.Free(name);
  };

  for (size_t k = 0; k < program.ops.size(); ++k) {
    const Op& op = program.ops[k];
    if (const auto* c = std::get_if<ContractionOp>(&op)) {
      env.Put(c->output, eval::EvalContraction(program, *c, env));
    } else if (const auto* e = std::get_if<ElementwiseOp>(&op)) {
      env.Put(e->output, eval::EvalElementwise(program, *e, env));
    } else {
      const auto& s = std::get<SpecialOp>(op);
      std::vector<Tensor> results = eval::EvalSpecial(program, s, env);
      TILEC_CHECK(results.size() == s.outputs.size());
      for (size_t i = 0; i < results.size(); ++i) env.Put(s.outputs[i], std::move(results[i]));
    }
    // Written but never read (and not an output): free at once. Read: free
    // after the last reader.
    for (const auto& name : Writes(op)) free_dead(name, k);
    for (const auto& name : Reads(op)) free_dead(name, k);
  }

  std::map<std::string, Tensor> results;
  for (const auto& name : program.outputs) {
    // An output named twice, or that is also an input, is copied.
    if (results.count(name)) continue;
    results.emplace(name, env.Take(name));
  }
  return results;
}

}  // namespace tilec::lang
