// The launch table (hal/launch_table.h), what a backend gets besides the sem
// module: runtime::LaunchTableOf carries each kernel's function, geometry and
// buffers, and every device builds and runs a module from a table written by
// hand, with no compiled program behind it.
#include <gtest/gtest.h>

#include <cstring>

#include "compiler/sem/parser.h"
#include "runtime/launch_table.h"
#include "tests/unit/pipeline_cases.h"

namespace tilec {
namespace {

TEST(LaunchTable, CarriesEachKernelsFunctionGeometryAndBuffers) {
  std::shared_ptr<hal::Device> llvm = testing::DeviceFor("llvm");
  ASSERT_NE(llvm, nullptr);
  lang::Program bound = testing::BindCase(
      {testing::kConvRelu, {{"D", testing::F32({1, 9, 7, 5})}, {"K", testing::F32({3, 3, 6, 5})}},
       {{"D", "image_channel_major"}}});
  compiler::CompileOptions options;
  options.hw = llvm->hardware_model();
  options.tuned = std::map<std::string, compiler::KernelConfig>{};
  compiler::CompiledProgram compiled = compiler::CompileProgram(bound, options);
  hal::LaunchTable table = runtime::LaunchTableOf(compiled);
  ASSERT_EQ(table.kernels.size(), compiled.kernels.size());
  bool saw_image = false;
  for (size_t k = 0; k < table.kernels.size(); ++k) {
    const compiler::CompiledKernel& c = compiled.kernels[k];
    const hal::LaunchTable::Kernel& t = table.kernels[k];
    EXPECT_EQ(t.function, c.code.function.name);
    EXPECT_EQ(t.global, c.code.global);
    EXPECT_EQ(t.local, c.code.local);
    std::vector<std::string> params = c.spec.outputs;
    params.insert(params.end(), c.spec.inputs.begin(), c.spec.inputs.end());
    ASSERT_EQ(t.buffers.size(), params.size()) << t.function;
    ASSERT_EQ(t.buffers.size(), c.code.function.params.size()) << t.function;
    for (size_t b = 0; b < params.size(); ++b) {
      const lang::TensorDecl& decl = compiled.program.Tensor(params[b]);
      EXPECT_EQ(t.buffers[b].tensor, params[b]);
      EXPECT_EQ(t.buffers[b].written, b < c.spec.outputs.size());
      EXPECT_EQ(t.buffers[b].dtype, decl.shape.dtype);
      EXPECT_EQ(t.buffers[b].image, decl.layout.image);
      saw_image |= t.buffers[b].image.has_value();
    }
    bool indexed = c.spec.kind != compiler::KernelKind::Special && c.spec.kind != compiler::KernelKind::Direct;
    if (indexed) {
      int64_t points = 1;
      for (const compiler::FlatIndex& idx : c.spec.flat.indices) points *= idx.range;
      EXPECT_EQ(t.points, points) << t.function;
    } else {
      EXPECT_EQ(t.points, -1) << t.function;
    }
  }
  EXPECT_TRUE(saw_image);  // D, stored as an image, is a buffer of the first kernel reading it
}

// B = A * 2 over 8 floats, one work item.
constexpr const char* kDouble =
    "kernel void twice(global float* restrict p0_B, global const float* restrict p1_A) index(i32) "
    "work_group_size(1, 1, 1) {\n"
    "  for (index i = 0; i < 8; i += 1) {\n"
    "    p0_B[i] = (p1_A[i] * 2.0f);\n"
    "  }\n"
    "}\n";

void BuildsFromAHandWrittenTable(const std::string& prefix) {
  std::shared_ptr<hal::Device> device = testing::DeviceFor(prefix);
  if (!device) GTEST_SKIP() << "no " << prefix << " device";
  sem::Module module = sem::Parse(MakeSource("twice.sem", kDouble));
  hal::LaunchTable table;
  table.kernels.push_back({"twice",
                           {1, 1, 1},
                           {1, 1, 1},
                           {{"B", true, lang::DataType::F32, std::nullopt}, {"A", false, lang::DataType::F32, std::nullopt}},
                           8});
  EXPECT_NE(device->EmitProgram(module, table).find("twice"), std::string::npos);
  std::unique_ptr<hal::Executable> exe = device->Build(module, table);
  std::vector<float> a = {1, 2, 3, 4, -5, 6.5f, 0, 8}, b(8, -1);
  std::unique_ptr<hal::DeviceBuffer> in = device->Allocate(sizeof(float) * 8);
  std::unique_ptr<hal::DeviceBuffer> out = device->Allocate(sizeof(float) * 8);
  device->Write(*in, a.data(), sizeof(float) * 8);
  exe->Launch(0, {out.get(), in.get()});
  device->Read(*out, b.data(), sizeof(float) * 8);
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(b[i], 2 * a[i]) << prefix << " element " << i;
}

TEST(LaunchTable, LlvmBuildsFromAHandWrittenTable) { BuildsFromAHandWrittenTable("llvm"); }
TEST(LaunchTable, OpenClBuildsFromAHandWrittenTable) { BuildsFromAHandWrittenTable("opencl"); }

}  // namespace
}  // namespace tilec
