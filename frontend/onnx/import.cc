// ImportFile/Import: reads the model, folds BatchNormalization into Conv
// weights, converts node by node (folding nodes whose inputs are all known),
// and writes the Tile program. Every node that cannot be converted is
// collected and reported in one UserError.
#include "frontend/onnx/import.h"

#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "frontend/onnx/graph.h"
#include "support/error.h"

namespace tilec::onnx_import {
namespace {

// Nodes folded at import time read at most this many elements in all.
constexpr int64_t kMaxFoldElements = 1 << 16;
constexpr int kMinOpset = 7, kMaxOpset = 17;

std::string NodeLabel(const ::onnx::NodeProto& n) {
  return n.name().empty() ? fmt::format("({}) -> '{}'", n.op_type(), n.output_size() ? n.output(0) : "")
                          : fmt::format("'{}' ({})", n.name(), n.op_type());
}

// The graph input's shape: the model's dimensions, with `given` for those it
// leaves symbolic (and checked against the fixed ones).
lang::Shape InputShape(const ::onnx::ValueInfoProto& vi, const ImportOptions& options) {
  const std::string& name = vi.name();
  if (!vi.type().has_tensor_type())
    TILEC_USER_ERROR("model input '{}' is not a tensor (sequences and maps are not supported)", name);
  const auto& tt = vi.type().tensor_type();
  auto type = ElementType(tt.elem_type());
  if (!type)
    TILEC_USER_ERROR("model input '{}' has element type {}, which Tilec has no type for", name,
                     ::onnx::TensorProto::DataType_Name(tt.elem_type()));
  auto given = options.shapes.find(name);
  if (!tt.has_shape()) {
    if (given == options.shapes.end())
      TILEC_USER_ERROR("model input '{}' has no shape in the model: give it one (-s {}=f32[…])", name, name);
    return given->second;
  }
  lang::Shape shape{*type, {}};
  std::vector<std::string> symbolic;
  for (const auto& d : tt.shape().dim()) {
    if (d.has_dim_value() && d.dim_value() >= 0) {
      shape.dims.push_back(d.dim_value());
    } else {
      shape.dims.push_back(-1);
      symbolic.push_back(d.has_dim_param() ? d.dim_param() : "?");
    }
  }
  if (given == options.shapes.end()) {
    if (!symbolic.empty())
      TILEC_USER_ERROR("model input '{}' has symbolic dimensions ({}): give its shape (-s {}={}[…])", name,
                       fmt::join(symbolic, ", "), name, lang::Name(*type));
    return shape;
  }
  const lang::Shape& g = given->second;
  bool fits = g.dtype == shape.dtype && g.rank() == shape.rank();
  for (int k = 0; fits && k < shape.rank(); ++k) fits = shape.dims[k] < 0 || shape.dims[k] == g.dims[k];
  if (!fits) {
    std::vector<std::string> dims;
    size_t s = 0;
    for (int64_t d : shape.dims) dims.push_back(d < 0 ? symbolic[s++] : std::to_string(d));
    TILEC_USER_ERROR("shape {} given for model input '{}' does not fit the model's {}[{}]", lang::ToString(g),
                     name, lang::Name(shape.dtype), fmt::join(dims, ", "));
  }
  return g;
}

// Folds BatchNormalization into the Conv before it when the Conv's output
// feeds nothing else and the weights, bias and statistics are initializers:
// W' = W * s, B' = (B - mean) * s + beta with s = scale / sqrt(var + eps).
// The Conv then writes the normalization's output and the node is dropped.
int FoldBatchNorms(::onnx::GraphProto& g, Graph& graph) {
  std::map<std::string, int> readers;
  for (const auto& n : g.node())
    for (const auto& in : n.input()) readers[in]++;
  for (const auto& o : g.output()) readers[o.name()]++;
  std::map<std::string, int> producer;
  for (int i = 0; i < g.node_size(); ++i)
    for (const auto& o : g.node(i).output()) producer[o] = i;
  auto constant = [&](const std::string& name) -> const lang::Tensor* {
    auto it = graph.values.find(name);
    return it != graph.values.end() && it->second.IsConstant() ? it->second.constant.get() : nullptr;
  };
  std::vector<int> drop;
  for (int i = 0; i < g.node_size(); ++i) {
    const auto& bn = g.node(i);
    if (bn.op_type() != "BatchNormalization" || bn.input_size() != 5 || bn.output_size() != 1) continue;
    auto p = producer.find(bn.input(0));
    if (p == producer.end() || readers[bn.input(0)] != 1) continue;
    auto& conv = *g.mutable_node(p->second);
    if (conv.op_type() != "Conv" || conv.input_size() < 2) continue;
    const lang::Tensor* w = constant(conv.input(1));
    const lang::Tensor* b = conv.input_size() > 2 && !conv.input(2).empty() ? constant(conv.input(2)) : nullptr;
    if (!w || w->dtype() != lang::DataType::F32 || (conv.input_size() > 2 && !conv.input(2).empty() && !b)) continue;
    const lang::Tensor *scale = constant(bn.input(1)), *beta = constant(bn.input(2)), *mean = constant(bn.input(3)),
                       *var = constant(bn.input(4));
    int64_t co = w->shape().dims[0];
    bool ok = scale && beta && mean && var;
    for (const lang::Tensor* t : {scale, beta, mean, var}) ok = ok && t->size() == co && t->dtype() == lang::DataType::F32;
    if (!ok) continue;
    float eps = 1e-5f;
    for (const auto& a : bn.attribute())
      if (a.name() == "epsilon") eps = a.f();
    lang::Tensor nw = *w;
    lang::Tensor nb(lang::Shape{lang::DataType::F32, {co}});
    int64_t per = w->size() / co;
    for (int64_t c = 0; c < co; ++c) {
      double s = scale->as<float>()[c] / std::sqrt(static_cast<double>(var->as<float>()[c]) + eps);
      for (int64_t k = 0; k < per; ++k) nw.as<float>()[c * per + k] = static_cast<float>(w->as<float>()[c * per + k] * s);
      double bias = b ? b->as<float>()[c] : 0.0;
      nb.as<float>()[c] = static_cast<float>((bias - mean->as<float>()[c]) * s + beta->as<float>()[c]);
    }
    std::string wname = conv.input(1) + "/bn_folded", bname = bn.output(0) + "/bias_folded";
    graph.values[wname] = Value{"", nw.shape(), std::make_shared<lang::Tensor>(std::move(nw))};
    graph.values[bname] = Value{"", nb.shape(), std::make_shared<lang::Tensor>(std::move(nb))};
    conv.set_input(1, wname);
    if (conv.input_size() > 2)
      conv.set_input(2, bname);
    else
      conv.add_input(bname);
    conv.set_output(0, bn.output(0));
    drop.push_back(i);
  }
  for (auto it = drop.rbegin(); it != drop.rend(); ++it) g.mutable_node()->DeleteSubrange(*it, 1);
  return static_cast<int>(drop.size());
}

const Registration* Find(const std::string& op, int opset) {
  auto it = Registry().find(op);
  if (it == Registry().end()) return nullptr;
  const Registration* found = nullptr;
  for (const Registration& r : it->second)
    if (r.since <= opset) found = &r;
  return found;
}

}  // namespace

bool IsModelPath(std::string_view path) { return path.size() > 5 && path.substr(path.size() - 5) == ".onnx"; }

ImportedModel Import(std::string_view bytes, std::string_view origin_view, const ImportOptions& options) {
  std::string origin(origin_view);
  ::onnx::ModelProto model;
  if (bytes.size() > static_cast<size_t>(INT32_MAX) ||
      !model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    TILEC_USER_ERROR("{}: not an ONNX model (the protobuf does not parse)", origin);
  ImportedModel out;
  out.origin = origin;
  out.producer = model.producer_name() + (model.producer_version().empty() ? "" : " " + model.producer_version());
  for (const auto& o : model.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") out.opset = o.version();
  if (out.opset == 0 && model.opset_import_size() == 0) out.opset = 1;
  if (out.opset < kMinOpset || out.opset > kMaxOpset)
    TILEC_USER_ERROR("{}: opset {} of the default domain is not supported (Tilec converts opsets {} to {})", origin,
                     out.opset, kMinOpset, kMaxOpset);
  ::onnx::GraphProto& g = *model.mutable_graph();
  Graph graph(origin);

  // Constants: the initializers (which may also be listed as inputs).
  std::vector<std::string> problems;
  for (const auto& init : g.initializer()) {
    try {
      lang::Tensor t = ReadTensorProto(init);
      lang::Shape shape = t.shape();
      graph.values[init.name()] = Value{"", shape, std::make_shared<lang::Tensor>(std::move(t))};
    } catch (const Unsupported& u) {
      problems.push_back(fmt::format("initializer '{}': {}", init.name(), u.reason));
    }
  }
  for (const auto& in : g.input()) {
    if (graph.values.count(in.name())) continue;  // an initializer
    if (auto v = options.values.find(in.name()); v != options.values.end()) {
      graph.values[in.name()] = Value{"", v->second.shape(), std::make_shared<lang::Tensor>(v->second)};
      continue;
    }
    std::string spelling = graph.Unique(in.name());
    ModelTensor t{in.name(), TensorName(spelling), InputShape(in, options)};
    graph.values[in.name()] = Value{spelling, t.shape, nullptr};
    out.inputs.push_back(t);
  }
  std::set<std::string> given;
  for (const auto& [name, shape] : options.shapes) given.insert(name);
  for (const auto& [name, value] : options.values) given.insert(name);
  for (const std::string& name : given) {
    bool found = options.values.count(name) > 0;
    for (const ModelTensor& t : out.inputs) found = found || t.onnx_name == name;
    if (!found) {
      std::vector<std::string> names;
      for (const ModelTensor& t : out.inputs) names.push_back(t.onnx_name);
      TILEC_USER_ERROR("{}: '{}' is given, but it is not an input of the model (its inputs: {})", origin,
                       name, fmt::join(names, ", "));
    }
  }
  if (problems.empty()) out.folded_batch_norms = FoldBatchNorms(g, graph);

  for (const auto& node : g.node()) {
    std::string label = NodeLabel(node);
    if (!node.domain().empty() && node.domain() != "ai.onnx") {
      problems.push_back(fmt::format("{}: domain '{}' is not supported", label, node.domain()));
      continue;
    }
    const Registration* reg = Find(node.op_type(), static_cast<int>(out.opset));
    if (!reg) {
      problems.push_back(fmt::format("{} at opset {}: no converter for {}", label, out.opset, node.op_type()));
      for (const auto& o : node.output()) graph.values[o] = Value{};
      continue;
    }
    bool missing_input = false;
    for (const auto& in : node.input())
      if (!in.empty() && !graph.values.count(in)) {
        problems.push_back(fmt::format("{}: input '{}' is not defined before the node", label, in));
        missing_input = true;
      }
    if (missing_input) continue;
    // An input that an earlier unsupported node should have produced: skip quietly.
    bool unknown = false;
    for (const auto& in : node.input())
      if (!in.empty() && graph.values.at(in).tile.empty() && !graph.values.at(in).IsConstant()) unknown = true;
    if (unknown) {
      for (const auto& o : node.output()) graph.values[o] = Value{};
      continue;
    }
    NodeContext ctx(graph, node, static_cast<int>(out.opset), reg->since);
    graph.SetCurrentNode(fmt::format("{} ({})", node.name().empty() ? node.output(0) : node.name(), node.op_type()));
    bool all_constant = node.input_size() > 0;
    int64_t elements = 0;
    for (const auto& in : node.input()) {
      if (in.empty()) continue;
      const Value& v = graph.values.at(in);
      all_constant = all_constant && v.IsConstant();
      if (v.IsConstant()) elements += v.constant->size();
    }
    bool fold = (all_constant || node.op_type() == "Constant") && elements <= kMaxFoldElements;
    // The node is listed, and its outputs are left undefined (so the nodes
    // that read them are skipped, not reported again).
    auto reject = [&](const std::string& reason) {
      if (graph.folding()) graph.AbortFold();
      problems.push_back(fmt::format("{} at opset {}: {}", label, out.opset, reason));
      for (const auto& o : node.output()) graph.values[o] = Value{};
    };
    try {
      if (fold) {
        graph.BeginFold();
        reg->convert(ctx);
        std::map<std::string, lang::Shape> emitted;
        std::map<std::string, int> index;
        for (int i = 0; i < node.output_size(); ++i) {
          if (node.output(i).empty()) continue;
          Value& v = graph.values[node.output(i)];
          if (!v.IsConstant() && !v.tile.empty()) {
            emitted[v.tile] = v.shape;
            index[TensorName(v.tile)] = i;
          }
        }
        std::map<std::string, lang::Tensor> results = graph.EndFold(emitted);
        for (auto& [name, t] : results) {
          Value& v = graph.values[node.output(index[name])];
          v.tile.clear();
          v.constant = std::make_shared<lang::Tensor>(std::move(t));
          v.shape = v.constant->shape();
        }
        out.folded_nodes++;
      } else {
        reg->convert(ctx);
      }
    } catch (const Unsupported& u) {
      reject(u.reason);
    } catch (const UserError& e) {  // from binding or evaluating a folded node
      reject(e.message());
    }
  }
  if (!problems.empty()) {
    std::string list;
    for (const std::string& p : problems) list += "\n  " + p;
    TILEC_USER_ERROR("{}: {} node{} of the model cannot be imported:{}", origin, problems.size(),
                     problems.size() == 1 ? "" : "s", list);
  }

  // Outputs: a value defined by a node under the output's own name is the
  // output; a constant, an input or a value already returned is copied.
  std::vector<std::string> out_names;
  std::vector<std::string> tail;
  std::set<std::string> returned;
  std::set<std::string> input_names;
  for (const ModelTensor& t : out.inputs) input_names.insert("#" + t.tile_name), input_names.insert(t.tile_name);
  for (const auto& o : g.output()) {
    auto it = graph.values.find(o.name());
    if (it == graph.values.end()) TILEC_USER_ERROR("{}: model output '{}' is not computed by any node", origin, o.name());
    Value& v = it->second;
    std::string name = v.IsConstant() ? "" : v.tile;
    if (name.empty() || input_names.count(name) || returned.count(name)) {
      std::string copy = graph.Unique(o.name() + (name.empty() ? "" : "_out"));
      std::string src = name.empty() ? graph.Materialize(v, o.name()) : name;
      tail.push_back(fmt::format("{} = {}", copy, src));
      name = copy;
    }
    returned.insert(name);
    out_names.push_back(name);
    out.outputs.push_back(ModelTensor{o.name(), TensorName(name), v.shape});
  }

  std::vector<std::string> params;
  for (const ModelTensor& t : out.inputs) params.push_back(graph.values.at(t.onnx_name).tile);
  graph.values.clear();  // so that TakeConstants moves the tensors only the graph holds
  for (auto& [name, t] : graph.TakeConstants()) {
    params.push_back(name);
    out.constants[TensorName(name)] = std::move(t);
  }
  std::string src = fmt::format("// Imported from {} ({}opset {}).\n", origin,
                                out.producer.empty() ? "" : out.producer + ", ", out.opset);
  for (const ModelTensor& t : out.inputs)
    src += fmt::format("// input  {} = '{}': {}\n", t.tile_name, t.onnx_name, lang::ToString(t.shape));
  for (const ModelTensor& t : out.outputs)
    src += fmt::format("// output {} = '{}': {}\n", t.tile_name, t.onnx_name, lang::ToString(t.shape));
  src += fmt::format("function ({}) -> ({}) {{\n", Join(params), Join(out_names));
  for (const std::string& s : graph.statements()) src += "  " + s + ";\n";
  for (const std::string& s : tail) src += "  " + s + ";\n";
  src += "}\n";
  out.source = std::move(src);
  out.origins = std::move(graph.origins());
  return out;
}

ImportedModel ImportFile(const std::string& path, const ImportOptions& options) {
  // Read in one piece into a buffer of the file's size: a model is mostly
  // weights (resnet50: 100 MB), and a stream that grows its buffer, then
  // copies it out, touches every byte three times.
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) TILEC_USER_ERROR("cannot read model '{}': it is a directory", path);
  std::ifstream in(path, std::ios::binary);
  if (!in) TILEC_USER_ERROR("cannot read model '{}': {}", path, std::strerror(errno));
  std::string bytes;
  uintmax_t size = std::filesystem::is_regular_file(path, ec) ? std::filesystem::file_size(path, ec) : 0;
  if (!ec && size > 0) {
    bytes.resize(size);
    in.read(bytes.data(), static_cast<std::streamsize>(size));
    bytes.resize(static_cast<size_t>(in.gcount()));  // a file that shrank meanwhile
  } else {
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());  // a pipe, a device
  }
  if (in.bad()) TILEC_USER_ERROR("cannot read model '{}': {}", path, std::strerror(errno));
  return Import(bytes, path, options);
}

std::pair<std::string, lang::Tensor> ReadTensor(std::string_view bytes, std::string_view origin) {
  ::onnx::TensorProto t;
  if (bytes.size() > static_cast<size_t>(INT32_MAX) || !t.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    TILEC_USER_ERROR("{}: not an ONNX tensor (the protobuf does not parse)", origin);
  try {
    return {t.name(), ReadTensorProto(t)};
  } catch (const Unsupported& u) {
    TILEC_USER_ERROR("{}: {}", origin, u.reason);
  }
}

std::vector<SupportedOp> SupportedOps() {
  std::vector<SupportedOp> out;
  for (const auto& [op, regs] : Registry())
    for (const Registration& r : regs) out.push_back({op, r.since});
  return out;
}

}  // namespace tilec::onnx_import
