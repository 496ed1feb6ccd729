// runtime::Model::Run: an imported ONNX model run by its graph's names, its
// weights read where the imported model keeps them (so a constant kernel,
// here the weight's transpose, runs once and is skipped after), checked
// against the reference evaluator; misuse is a UserError naming the input.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <map>
#include <random>
#include <string>

#include "runtime/model.h"
#include "support/error.h"
#include "tests/unit/pipeline_check.h"
#include "tile_lang/evaluator.h"

namespace tilec {
namespace {

constexpr int64_t kRows = 3, kIn = 261, kOut = 301;  // the weight is larger than import folds

void AddValueInfo(::onnx::ValueInfoProto* v, const std::string& name, std::vector<int64_t> dims) {
  v->set_name(name);
  auto* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(::onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t->mutable_shape()->add_dim()->set_dim_value(d);
}

// Y = Relu(X · Transpose(W)), W an initializer.
std::string TransposedWeightModel() {
  ::onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  ::onnx::GraphProto* g = m.mutable_graph();
  g->set_name("t");
  AddValueInfo(g->add_input(), "x", {kRows, kIn});
  AddValueInfo(g->add_output(), "y", {kRows, kOut});
  ::onnx::TensorProto* w = g->add_initializer();
  w->set_name("w");
  w->set_data_type(::onnx::TensorProto::FLOAT);
  w->add_dims(kOut);
  w->add_dims(kIn);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (int64_t i = 0; i < kOut * kIn; ++i) w->add_float_data(dist(rng));
  auto node = [&](const std::string& op, std::vector<std::string> in, const std::string& out) {
    ::onnx::NodeProto* n = g->add_node();
    n->set_op_type(op);
    for (const auto& s : in) n->add_input(s);
    n->add_output(out);
  };
  node("Transpose", {"w"}, "wt");
  node("MatMul", {"x", "wt"}, "xw");
  node("Relu", {"xw"}, "y");
  return m.SerializeAsString();
}

class ModelRunTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    device_ = testing::DeviceFor(GetParam());
    if (!device_) GTEST_SKIP() << "no " << GetParam() << " device";
  }
  std::shared_ptr<hal::Device> device_;
};

TEST_P(ModelRunTest, WeightsStayPutAndConstantKernelsRunOnce) {
  onnx_import::ImportedModel imported = onnx_import::Import(TransposedWeightModel(), "t.onnx", {});
  ASSERT_EQ(imported.constants.size(), 1u) << "the weight is too large to fold at import";
  lang::Program bound = runtime::BindModel(imported);
  runtime::Model m = runtime::Model::Compile(imported, device_);
  const std::vector<bool>& constant = m.program().constant_kernels();
  const int num_constant = static_cast<int>(std::count(constant.begin(), constant.end(), true));
  ASSERT_GE(num_constant, 1) << "the transpose reads only the weight";

  std::mt19937 rng(11);
  std::uniform_real_distribution<float> dist(-1, 1);
  lang::Tensor x(lang::Shape{lang::DataType::F32, {kRows, kIn}});
  for (int64_t i = 0; i < x.size(); ++i) x.as<float>()[i] = dist(rng);
  std::map<std::string, lang::Tensor> eval_inputs = imported.constants;
  eval_inputs[imported.inputs.at(0).tile_name] = x;
  lang::Tensor want = lang::Evaluate(bound, eval_inputs).at(imported.outputs.at(0).tile_name);

  // The caller allocates between runs, as a framework does (a copy of the
  // weights made per run would then land elsewhere).
  std::vector<std::vector<std::byte>> caller_heap;
  for (int run = 0; run < 3; ++run) {
    caller_heap.emplace_back(static_cast<size_t>(kOut * kIn * 4));
    runtime::RunStats stats;
    std::map<std::string, lang::Tensor> got = m.Run({{"x", x}}, &stats);
    ASSERT_EQ(got.size(), 1u);
    const lang::Tensor& y = got.at("y");
    ASSERT_EQ(y.shape(), want.shape());
    for (int64_t i = 0; i < want.size(); ++i)
      ASSERT_NEAR(y.GetDouble(i), want.GetDouble(i), 1e-4 * (1 + std::abs(want.GetDouble(i))))
          << "y[" << i << "], run " << run;
    if (run == 0)
      EXPECT_EQ(stats.skipped_kernels, 0) << "the first run computes the transpose";
    else
      EXPECT_EQ(stats.skipped_kernels, num_constant)
          << "run " << run << " reads the weights at the same place: the transpose is kept";
  }
}

TEST_P(ModelRunTest, MisuseNamesTheInput) {
  runtime::Model m = runtime::Model::Compile(onnx_import::Import(TransposedWeightModel(), "t.onnx", {}), device_);
  lang::Tensor x(lang::Shape{lang::DataType::F32, {kRows, kIn}});
  lang::Tensor wrong(lang::Shape{lang::DataType::F32, {kRows, kIn + 1}});
  auto message = [&](const std::map<std::string, lang::Tensor>& inputs) -> std::string {
    try {
      m.Run(inputs);
    } catch (const UserError& e) {
      return e.message();
    }
    return "(no error)";
  };
  EXPECT_NE(message({}).find("model input 'x' is not given"), std::string::npos) << message({});
  EXPECT_NE(message({{"x", wrong}}).find("model input 'x' is f32[3, 262]"), std::string::npos)
      << message({{"x", wrong}});
  EXPECT_NE(message({{"x", x}, {"z", x}}).find("'z' is not an input of the model (its inputs: x)"),
            std::string::npos)
      << message({{"x", x}, {"z", x}});
}

INSTANTIATE_TEST_SUITE_P(Backends, ModelRunTest, ::testing::Values("llvm", "opencl"));

}  // namespace
}  // namespace tilec
