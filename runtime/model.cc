#include "runtime/model.h"

#include <fmt/format.h>

#include <algorithm>

#include "runtime/host_view.h"
#include "support/error.h"
#include "tile_lang/binder.h"
#include "tile_lang/parser.h"

namespace tilec::runtime {

lang::Program BindModel(const onnx_import::ImportedModel& model) {
  std::map<std::string, lang::Shape> shapes;
  for (const auto& t : model.inputs) shapes[t.tile_name] = t.shape;
  for (const auto& [name, t] : model.constants) shapes[name] = t.shape();
  SourceFilePtr source = MakeSource(model.origin + " (as Tile)", model.source);
  return lang::Bind(lang::Parse(source), shapes);
}

Model Model::Compile(onnx_import::ImportedModel model, std::shared_ptr<hal::Device> device,
                     compiler::CompileOptions options) {
  auto m = std::make_shared<const onnx_import::ImportedModel>(std::move(model));
  std::vector<std::string> constants;
  for (const auto& [name, t] : m->constants) constants.push_back(name);
  options.lower.constants.insert(constants.begin(), constants.end());
  Program p = Program::Compile(BindModel(*m), std::move(device), std::move(options));
  p.SetConstantInputs(constants);
  return Model(std::move(m), std::move(p));
}

std::map<std::string, lang::Tensor> Model::Run(const std::map<std::string, lang::Tensor>& inputs, RunStats* stats) {
  // Graph inputs by Tile name, each checked against its imported shape.
  std::map<std::string, const lang::Tensor*> given;
  for (const auto& [name, t] : inputs) {
    const onnx_import::ModelTensor* found = nullptr;
    for (const auto& in : imported_->inputs)
      if (in.onnx_name == name || in.tile_name == name) found = &in;
    if (!found) {
      std::vector<std::string> names;
      for (const auto& in : imported_->inputs) names.push_back(in.onnx_name);
      TILEC_USER_ERROR("'{}' is not an input of the model (its inputs: {})", name, fmt::join(names, ", "));
    }
    if (given.count(found->tile_name)) TILEC_USER_ERROR("model input '{}' is given twice", found->onnx_name);
    if (t.shape() != found->shape)
      TILEC_USER_ERROR("model input '{}' is {}, but the model was imported for {}", found->onnx_name,
                       lang::ToString(t.shape()), lang::ToString(found->shape));
    given[found->tile_name] = &t;
  }
  for (const auto& in : imported_->inputs)
    if (!given.count(in.tile_name)) TILEC_USER_ERROR("model input '{}' is not given", in.onnx_name);
  // The weights are viewed where the imported model keeps them: the same
  // memory on every run, so the program's constant kernels are not rerun.
  for (const auto& [name, t] : imported_->constants) given[name] = &t;

  const lang::Program& prog = program_.compiled().program;
  std::vector<HostView> in_views;
  for (const std::string& name : prog.inputs) in_views.push_back(ViewOf(*given.at(name)));
  std::map<std::string, lang::Tensor> results;
  std::vector<HostView> out_views;
  for (const std::string& name : prog.outputs) {
    lang::Tensor& t = results.emplace(name, lang::Tensor(prog.Tensor(name).shape)).first->second;
    out_views.push_back(ViewOf(t));
  }
  program_.RunOn(in_views, out_views, stats);
  std::map<std::string, lang::Tensor> out;
  // Moved, not copied, unless two graph outputs name one tensor.
  const auto& outputs = imported_->outputs;
  for (size_t i = 0; i < outputs.size(); ++i) {
    bool again = std::any_of(outputs.begin() + i + 1, outputs.end(),
                             [&](const auto& later) { return later.tile_name == outputs[i].tile_name; });
    lang::Tensor& t = results.at(outputs[i].tile_name);
    out[outputs[i].onnx_name] = again ? t : std::move(t);
  }
  return out;
}

}  // namespace tilec::runtime
