// The importer's graph state, the converters' view of a node, and the
// helpers converters share for writing Tile.
#include "frontend/onnx/graph.h"

#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include <cctype>
#include <cmath>

#include "support/error.h"
#include "tile_lang/binder.h"
#include "tile_lang/evaluator.h"
#include "tile_lang/parser.h"

namespace tilec::onnx_import {

// --- Names and statements --------------------------------------------------------------------

std::string Graph::Unique(std::string_view hint) {
  std::string base;
  for (char ch : hint) {
    bool ok = std::isalnum(static_cast<unsigned char>(ch));
    if (ok)
      base += ch;
    else if (!base.empty() && base.back() != '_')
      base += '_';
  }
  while (!base.empty() && base.back() == '_') base.pop_back();
  // An ONNX name that is a Tile name but for its lower-case first letter
  // ("input") keeps its spelling, escaped as a tensor name (`#input`).
  if (base == hint && std::islower(static_cast<unsigned char>(base[0])) && used_.insert(base).second)
    return "#" + base;
  // A Tile tensor name starts with a capital letter.
  if (base.empty() || !std::isalpha(static_cast<unsigned char>(base[0])))
    base.insert(base.begin(), 'T');
  base[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(base[0])));
  std::string name = base;
  for (int n = 2; !used_.insert(name).second; ++n) name = fmt::format("{}_{}", base, n);
  return name;
}

void Graph::Emit(const std::string& statement) {
  (folding_ ? fold_statements_ : statements_).push_back(statement);
}

std::vector<std::pair<std::string, lang::Tensor>> Graph::TakeConstants() {
  std::vector<std::pair<std::string, lang::Tensor>> out;
  for (auto& [name, t] : constants_) {
    if (t.use_count() == 1)
      out.emplace_back(name, std::move(*std::const_pointer_cast<lang::Tensor>(t)));
    else
      out.emplace_back(name, *t);
    t.reset();
  }
  constants_.clear();
  return out;
}

std::string Graph::AddConstant(std::string_view hint, std::shared_ptr<const lang::Tensor> t) {
  std::string name = Unique(hint);
  (folding_ ? fold_inputs_ : constants_).emplace_back(name, std::move(t));
  return name;
}

std::string Graph::Materialize(Value& v, std::string_view hint) {
  if (!folding_) {
    if (v.tile.empty()) v.tile = AddConstant(hint, v.constant);
    return v.tile;
  }
  auto it = fold_names_.find(v.constant.get());
  if (it != fold_names_.end()) return it->second;
  std::string name = AddConstant(hint, v.constant);
  fold_names_[v.constant.get()] = name;
  return name;
}

void Graph::BeginFold() {
  folding_ = true;
  fold_statements_.clear();
  fold_inputs_.clear();
  fold_names_.clear();
}

void Graph::AbortFold() { folding_ = false; }

std::map<std::string, lang::Tensor> Graph::EndFold(const std::map<std::string, lang::Shape>& outputs) {
  folding_ = false;
  if (outputs.empty()) return {};
  std::vector<std::string> ins, outs;
  std::map<std::string, lang::Shape> shapes;
  std::map<std::string, lang::Tensor> data;
  for (auto& [name, t] : fold_inputs_) {
    ins.push_back(name);  // as spelled (#class_token); bound by its name
    shapes[TensorName(name)] = t->shape();
    data[TensorName(name)] = *t;
  }
  for (auto& [name, shape] : outputs) outs.push_back(name);
  std::string text = fmt::format("function ({}) -> ({}) {{\n", Join(ins), Join(outs));
  for (const std::string& s : fold_statements_) text += "  " + s + ";\n";
  text += "}\n";
  lang::ast::Function f = lang::Parse(MakeSource(origin_ + " (folded node)", text));
  lang::Program p = lang::Bind(f, shapes);
  return lang::Evaluate(p, data);
}

// --- Tensors ---------------------------------------------------------------------------------

std::optional<lang::DataType> ElementType(int t) {
  using TP = ::onnx::TensorProto;
  switch (t) {
    case TP::FLOAT: return lang::DataType::F32;
    case TP::DOUBLE: return lang::DataType::F64;
    case TP::FLOAT16: return lang::DataType::F16;
    case TP::INT8: return lang::DataType::I8;
    case TP::INT16: return lang::DataType::I16;
    case TP::INT32: return lang::DataType::I32;
    case TP::INT64: return lang::DataType::I64;
    case TP::UINT8: return lang::DataType::U8;
    case TP::UINT16: return lang::DataType::U16;
    case TP::UINT32: return lang::DataType::U32;
    case TP::UINT64: return lang::DataType::U64;
    case TP::BOOL: return lang::DataType::Bool;
    default: return std::nullopt;
  }
}

lang::Tensor ReadTensorProto(const ::onnx::TensorProto& t) {
  auto type = ElementType(t.data_type());
  if (!type)
    throw Unsupported{fmt::format("tensor '{}' has element type {} ({}), which Tilec has no type for", t.name(),
                                  ::onnx::TensorProto::DataType_Name(t.data_type()), t.data_type())};
  if (t.data_location() == ::onnx::TensorProto::EXTERNAL)
    throw Unsupported{fmt::format("tensor '{}' keeps its data in an external file, which is not supported",
                                  t.name())};
  lang::Shape shape{*type, {}};
  for (int64_t d : t.dims()) {
    if (d < 0) throw Unsupported{fmt::format("tensor '{}' has a negative dimension {}", t.name(), d)};
    shape.dims.push_back(d);
  }
  // The data must match the shape before anything is allocated: a corrupt
  // file's dims can be far larger than the bytes it holds.
  int64_t n = shape.ElementCount();
  size_t element = static_cast<size_t>(lang::ByteSize(*type));
  if (t.has_raw_data()) {
    if (t.raw_data().size() % element != 0 || static_cast<int64_t>(t.raw_data().size() / element) != n)
      throw Unsupported{fmt::format("tensor '{}' has {} bytes of raw data where {} needs {} elements of {} bytes",
                                    t.name(), t.raw_data().size(), lang::ToString(shape), n, element)};
    return lang::Tensor(shape, t.raw_data().data());
  }
  int64_t count = 0;
  switch (*type) {
    case lang::DataType::F32: count = t.float_data_size(); break;
    case lang::DataType::F64: count = t.double_data_size(); break;
    case lang::DataType::I64: count = t.int64_data_size(); break;
    case lang::DataType::U32:
    case lang::DataType::U64: count = t.uint64_data_size(); break;
    default: count = t.int32_data_size(); break;
  }
  if (count != n)
    throw Unsupported{fmt::format("tensor '{}' has {} values where {} needs {}", t.name(), count, lang::ToString(shape), n)};
  lang::Tensor out(shape);
  switch (*type) {
    case lang::DataType::F32:
      for (int64_t i = 0; i < n; ++i) out.as<float>()[i] = t.float_data(static_cast<int>(i));
      break;
    case lang::DataType::F64:
      for (int64_t i = 0; i < n; ++i) out.as<double>()[i] = t.double_data(static_cast<int>(i));
      break;
    case lang::DataType::I64:
      for (int64_t i = 0; i < n; ++i) out.as<int64_t>()[i] = t.int64_data(static_cast<int>(i));
      break;
    case lang::DataType::U32:
    case lang::DataType::U64:
      for (int64_t i = 0; i < n; ++i) out.SetInt(i, static_cast<int64_t>(t.uint64_data(static_cast<int>(i))));
      break;
    case lang::DataType::F16:  // int32_data holds the half's bits
      for (int64_t i = 0; i < n; ++i) out.as<uint16_t>()[i] = static_cast<uint16_t>(t.int32_data(static_cast<int>(i)));
      break;
    default:  // bool and the narrow integers live in int32_data
      for (int64_t i = 0; i < n; ++i) out.SetInt(i, t.int32_data(static_cast<int>(i)));
      break;
  }
  return out;
}

// --- NodeContext -------------------------------------------------------------------------------

NodeContext::NodeContext(Graph& graph, const ::onnx::NodeProto& node, int opset, int since)
    : graph_(graph), node_(node), opset_(opset), since_(since) {}

const std::string& NodeContext::op() const { return node_.op_type(); }

void NodeContext::Fail(std::string reason) const { throw Unsupported{std::move(reason)}; }

size_t NodeContext::input_count() const { return static_cast<size_t>(node_.input_size()); }
bool NodeContext::HasInput(size_t i) const {
  return i < input_count() && !node_.input(static_cast<int>(i)).empty();
}

const Value& NodeContext::In(size_t i) const {
  if (!HasInput(i)) Fail(fmt::format("input {} is required", i));
  return graph_.values.at(node_.input(static_cast<int>(i)));
}

std::string NodeContext::Ref(size_t i) {
  if (!HasInput(i)) Fail(fmt::format("input {} is required", i));
  Value& v = graph_.values.at(node_.input(static_cast<int>(i)));
  if (!v.IsConstant()) return v.tile;
  if (v.constant->size() == 1 && v.shape.rank() == 0)
    if (auto lit = Literal(v.constant->GetDouble(0), v.shape.dtype)) return *lit;
  return graph_.Materialize(v, node_.input(static_cast<int>(i)));
}

const lang::Tensor& NodeContext::ConstantIn(size_t i, std::string_view what) const {
  const Value& v = In(i);
  if (!v.IsConstant())
    Fail(fmt::format("its {} (input {}, '{}') must be known when the model is imported (a constant or "
                     "computed from shapes only)",
                     what, i, node_.input(static_cast<int>(i))));
  return *v.constant;
}

std::vector<int64_t> NodeContext::ConstantInts(size_t i, std::string_view what) const {
  const lang::Tensor& t = ConstantIn(i, what);
  std::vector<int64_t> out;
  for (int64_t k = 0; k < t.size(); ++k) out.push_back(t.GetInt(k));
  return out;
}

const ::onnx::AttributeProto* NodeContext::Attr(std::string_view name) const {
  for (const auto& a : node_.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

bool NodeContext::Has(std::string_view name) const { return Attr(name) != nullptr; }

int64_t NodeContext::Int(std::string_view name, int64_t fallback) const {
  const auto* a = Attr(name);
  return a ? a->i() : fallback;
}
float NodeContext::Float(std::string_view name, float fallback) const {
  const auto* a = Attr(name);
  return a ? a->f() : fallback;
}
std::string NodeContext::String(std::string_view name, std::string_view fallback) const {
  const auto* a = Attr(name);
  return a ? a->s() : std::string(fallback);
}
std::vector<int64_t> NodeContext::Ints(std::string_view name, std::vector<int64_t> fallback) const {
  const auto* a = Attr(name);
  if (!a) return fallback;
  return {a->ints().begin(), a->ints().end()};
}
std::vector<float> NodeContext::Floats(std::string_view name) const {
  const auto* a = Attr(name);
  if (!a) return {};
  return {a->floats().begin(), a->floats().end()};
}
std::optional<lang::Tensor> NodeContext::TensorAttr(std::string_view name) const {
  const auto* a = Attr(name);
  if (!a) return std::nullopt;
  return ReadTensorProto(a->t());
}

size_t NodeContext::output_count() const { return static_cast<size_t>(node_.output_size()); }
bool NodeContext::WantsOutput(size_t i) const {
  return i < output_count() && !node_.output(static_cast<int>(i)).empty();
}

std::string NodeContext::OutName(size_t i) {
  const std::string& onnx = node_.output(static_cast<int>(i));
  Value& v = graph_.values[onnx];
  if (v.tile.empty()) v.tile = graph_.Unique(onnx);
  return v.tile;
}

void NodeContext::Define(size_t i, lang::Shape shape) {
  Value& v = graph_.values[node_.output(static_cast<int>(i))];
  v.shape = std::move(shape);
  v.constant = nullptr;
  if (!graph_.folding()) graph_.RecordOrigin(v.tile);
}

void NodeContext::Alias(size_t i, const Value& in) { graph_.values[node_.output(static_cast<int>(i))] = in; }

void NodeContext::DefineConstant(size_t i, lang::Tensor t) {
  Value& v = graph_.values[node_.output(static_cast<int>(i))];
  v.shape = t.shape();
  v.tile.clear();
  v.constant = std::make_shared<lang::Tensor>(std::move(t));
}

std::string NodeContext::Temp(std::string_view hint) {
  std::string base = node_.name().empty() ? node_.op_type() : node_.name();
  return graph_.Unique(fmt::format("{}_{}", base, hint));
}

void NodeContext::Emit(const std::string& statement) { graph_.Emit(statement); }

std::string NodeContext::AddConstant(std::string_view hint, lang::Tensor t) {
  std::string base = node_.name().empty() ? node_.op_type() : node_.name();
  return graph_.AddConstant(fmt::format("{}_{}", base, hint), std::make_shared<lang::Tensor>(std::move(t)));
}

// --- Helpers -----------------------------------------------------------------------------------

std::vector<std::string> IndexNames(int rank, std::string_view prefix) {
  std::vector<std::string> out;
  for (int i = 0; i < rank; ++i) out.push_back(fmt::format("{}{}", prefix, i));
  return out;
}

std::string Join(const std::vector<std::string>& parts) { return fmt::format("{}", fmt::join(parts, ", ")); }

std::string JoinInts(const std::vector<int64_t>& v) { return fmt::format("{}", fmt::join(v, ", ")); }

std::string Affine(int64_t coeff, std::string_view var, int64_t offset) {
  std::string s;
  if (coeff == 0)
    return std::to_string(offset);
  else if (coeff == 1)
    s = std::string(var);
  else if (coeff == -1)
    s = fmt::format("-{}", var);
  else
    s = fmt::format("{}*{}", coeff, var);
  if (offset > 0) s += fmt::format(" + {}", offset);
  if (offset < 0) s += fmt::format(" - {}", -offset);
  return s;
}

std::optional<std::string> Literal(double v, lang::DataType type) {
  if (!std::isfinite(v)) return std::nullopt;
  std::string s;
  if (lang::IsFloat(type)) {
    s = fmt::format("{:.17g}", v);
    if (type == lang::DataType::F32) s = fmt::format("{:.9g}", v);
    if (s.find_first_of(".e") == std::string::npos) s += ".0";
  } else {
    s = fmt::format("{}", static_cast<int64_t>(v));
  }
  if (s[0] == '-') {
    s.insert(0, 1, '(');
    s.push_back(')');
  }
  return s;
}

int64_t NormalizeAxis(const NodeContext& c, int64_t axis, int rank) {
  if (axis < -rank || axis >= std::max(rank, 1))
    c.Fail(fmt::format("axis {} is out of range for rank {}", axis, rank));
  return axis < 0 ? axis + rank : axis;
}

std::vector<int64_t> BroadcastDims(const NodeContext& c, const std::vector<int64_t>& a,
                                   const std::vector<int64_t>& b) {
  size_t r = std::max(a.size(), b.size());
  std::vector<int64_t> out(r);
  for (size_t k = 0; k < r; ++k) {
    int64_t x = k + a.size() >= r ? a[k + a.size() - r] : 1;
    int64_t y = k + b.size() >= r ? b[k + b.size() - r] : 1;
    if (x != y && x != 1 && y != 1)
      c.Fail(fmt::format("cannot broadcast [{}] and [{}]", JoinInts(a), JoinInts(b)));
    out[k] = x == 1 ? y : x;
  }
  return out;
}

std::string CastExpr(const std::string& expr, lang::DataType to) {
  if (to == lang::DataType::Bool) return fmt::format("as_bool({})", expr);
  const char* fn = lang::IsFloat(to) ? "as_float" : lang::IsSigned(to) ? "as_int" : "as_uint";
  return fmt::format("{}({}, {})", fn, expr, lang::BitWidth(to));
}

int64_t Product(const std::vector<int64_t>& dims, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t k = from; k < std::min(to, dims.size()); ++k) p *= dims[k];
  return p;
}

// --- Registry ----------------------------------------------------------------------------------

const std::map<std::string, std::vector<Registration>>& Registry() {
  static const auto* registry = [] {
    auto* r = new std::map<std::string, std::vector<Registration>>;
    for (auto* list : {&ElementwiseConverters, &NnConverters, &ShapeConverters, &ReduceConverters, &IndexConverters})
      for (Registration& reg : (*list)()) (*r)[reg.op].push_back(std::move(reg));
    for (auto& [op, regs] : *r)
      std::sort(regs.begin(), regs.end(), [](const Registration& a, const Registration& b) { return a.since < b.since; });
    return r;
  }();
  return *registry;
}

}  // namespace tilec::onnx_import
