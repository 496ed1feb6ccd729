// MACE's OpenCL image layouts (seed 000; tile_lang/layout_image.cc): each
// mapping's pixel formula and image size, pack/unpack round trips, user
// errors, and programs whose tensors live in images run on both backends
// (OpenCL: image2d_t read with read_imagef or through its linear buffer,
// written through the linear buffer; LLVM: the linear equivalent in a
// buffer) against the reference evaluator, with sizes that fill no pixel
// (C = 5, 7, 17; odd H and W).
#include <gtest/gtest.h>

#include <cstring>

#include "hal/opencl/opencl_images.h"
#include "runtime/layout_pack.h"
#include "tests/unit/pipeline_check.h"
#include "tile_lang/layout.h"

namespace tilec {
namespace {

using lang::Layout;
using lang::ParseLayout;
using testing::Case;
using testing::F32;

int64_t Div4(int64_t x) { return (x + 3) / 4; }

// Where the seed puts element `i` of a tensor of `d` (logical order of the
// mapping): pixel (x, y) and component k, as seed 000 writes it (with the
// errata of docs/layouts.md for height- and width-major).
struct Pixel {
  int64_t x, y, k;
};
Pixel SeedPixel(std::string_view name, const std::vector<int64_t>& d, const std::vector<int64_t>& i) {
  if (name == "image_channel_major")  // [W * C4, N * H]
    return {i[3] / 4 * d[2] + i[2], i[0] * d[1] + i[1], i[3] % 4};
  if (name == "image_height_major")  // [W * C, N * H4]
    return {i[3] * d[2] + i[2], i[0] * Div4(d[1]) + i[1] / 4, i[1] % 4};
  if (name == "image_width_major")  // [W4 * C, N * H]
    return {i[3] * Div4(d[2]) + i[2] / 4, i[0] * d[1] + i[1], i[2] % 4};
  if (name == "image_conv_filter")  // [I, O4 * H * W]: P[m, n], o = n/HW*4+k, i = m, h = T/W, w = T%W
    return {i[1], i[0] / 4 * d[2] * d[3] + i[2] * d[3] + i[3], i[0] % 4};
  if (name == "image_dw_filter")  // [H * W * M, I4]: P[m, n], i = n*4+k, h = m/W, w = m%W
    return {i[2] * d[3] + i[3], i[1] / 4, i[1] % 4};
  return {i[0] / 4, 0, i[0] % 4};  // image_argument [W4, 1]
}

std::vector<int64_t> SeedSize(std::string_view name, const std::vector<int64_t>& d) {
  if (name == "image_channel_major") return {d[2] * Div4(d[3]), d[0] * d[1]};
  if (name == "image_height_major") return {d[2] * d[3], d[0] * Div4(d[1])};
  if (name == "image_width_major") return {Div4(d[2]) * d[3], d[0] * d[1]};
  if (name == "image_conv_filter") return {d[1], Div4(d[0]) * d[3] * d[2]};
  if (name == "image_dw_filter") return {d[2] * d[3] * d[0], Div4(d[1])};
  return {Div4(d[0]), 1};
}

std::vector<int64_t> DimsFor(std::string_view name) {
  if (name == "image_argument") return {7};
  if (name == "image_dw_filter") return {1, 7, 3, 5};
  if (name == "image_conv_filter") return {7, 5, 3, 3};
  return {2, 5, 3, 7};  // N, H, W, C
}

TEST(ImageLayout, EveryMappingIsTheSeeds) {
  for (const lang::ImageMapping& m : lang::ImageMappings()) {
    std::vector<int64_t> d = DimsFor(m.name);
    for (std::string_view spec : {m.name, m.mace_name}) {
      Layout l = ParseLayout(spec, d);
      ASSERT_TRUE(l.image) << spec;
      EXPECT_EQ((std::vector<int64_t>{l.image->width, l.image->height}), SeedSize(m.name, d)) << spec;
      EXPECT_EQ(l.elements, l.image->width * l.image->height * 4) << spec;
      EXPECT_EQ(lang::TagOf(spec, static_cast<int>(d.size())), std::string(m.tag)) << spec;
      EXPECT_EQ(lang::ToSpec(l), std::string(spec));
    }
    // Pack a tensor holding 1, 2, 3, … and find each element where the seed says.
    lang::Shape shape = F32(d);
    lang::Tensor t(shape);
    for (int64_t e = 0; e < t.size(); ++e) t.SetDouble(e, static_cast<double>(e + 1));
    Layout l = ParseLayout(m.name, d);
    std::vector<std::byte> bytes = runtime::PackToLayout(t, l);
    std::vector<float> pixels(bytes.size() / 4);
    std::memcpy(pixels.data(), bytes.data(), bytes.size());
    std::vector<bool> used(pixels.size(), false);
    std::vector<int64_t> i(d.size(), 0);
    for (int64_t e = 0; e < t.size(); ++e) {
      Pixel p = SeedPixel(m.name, d, i);
      ASSERT_LT(p.x, l.image->width) << m.name;
      int64_t at = (p.y * l.image->width + p.x) * 4 + p.k;
      EXPECT_EQ(pixels[at], static_cast<float>(e + 1)) << m.name << " element " << e;
      used[at] = true;
      for (size_t k = d.size(); k-- > 0;) {
        if (++i[k] < d[k]) break;
        i[k] = 0;
      }
    }
    for (size_t at = 0; at < pixels.size(); ++at)
      if (!used[at]) {
        EXPECT_EQ(pixels[at], 0.0f) << m.name << ": padding at " << at;
      }
    lang::Tensor back = runtime::UnpackFromLayout(bytes.data(), bytes.size(), shape, l);
    EXPECT_EQ(std::memcmp(back.data(), t.data(), t.bytes()), 0) << m.name;
  }
}

TEST(ImageLayout, UserErrors) {
  auto message = [](std::string_view spec, std::vector<int64_t> d) {
    try {
      ParseLayout(spec, d);
    } catch (const UserError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };

  EXPECT_NE(message("image_channel_major", {2, 3, 4}).find(
                "bad layout 'image_channel_major' for a tensor of dimensions [2, 3, 4]: the MACE image "
                "image_channel_major needs a rank-4 tensor (logical order N, H, W, C), not rank 3"),
            std::string::npos);
  EXPECT_NE(message("DW_CONV2D_FILTER", {2, 8, 3, 3}).find(
                "bad layout 'DW_CONV2D_FILTER' for a tensor of dimensions [2, 8, 3, 3]: the MACE depthwise "
                "filter image supports multiplier M = 1 only (seed 000), not M = 2"),
            std::string::npos);
  EXPECT_NE(message("image_argument", {2, 3}).find("needs a rank-1 tensor (logical order W)"), std::string::npos);
}

// Conv 3x3 "same" over logical NHWC, weights OIHW, then ReLU.
constexpr const char* kConvRelu =
    "function (D[N, H, W, C], K[CO, C, KH, KW]) -> (R) {\n"
    "  O[n, x, y, co : N, H, W, CO] = +(D[n, x + i - 1, y + j - 1, ci] * K[co, ci, i, j]), i < 3, j < 3;\n"
    "  R = relu(O);\n"
    "}\n";

std::vector<std::pair<std::string, Case>> Cases() {
  return {
      {"conv+relu, channel-major in and out, filter image",
       Case(kConvRelu, {{"D", F32({1, 5, 7, 5})}, {"K", F32({7, 5, 3, 3})}},
            {{"D", "image_channel_major"}, {"K", "image_conv_filter"}, {"R", "image_channel_major"}})},
      {"conv+relu, NHWC buffer in, channel-major image out (mixed)",
       Case(kConvRelu, {{"D", F32({2, 7, 5, 17})}, {"K", F32({5, 17, 3, 3})}},
            {{"R", "IN_OUT_CHANNEL"}})},
      {"depthwise, depthwise filter image",
       Case("function (D[N, H, W, C], K[M, C, KH, KW]) -> (O) {\n"
            "  O[n, x, y, c : N, H, W, C] = +(D[n, x + i - 1, y + j - 1, c] * K[0, c, i, j]), i < 3, j < 3;\n"
            "}\n",
            {{"D", F32({1, 5, 7, 7})}, {"K", F32({1, 7, 3, 3})}},
            {{"D", "image_channel_major"}, {"K", "image_dw_filter"}, {"O", "image_channel_major"}})},
      {"bias add, 1-D argument image",
       Case("function (D[N, H, W, C], B[C]) -> (O) { O = D + B; }", {{"D", F32({1, 3, 5, 7})}, {"B", F32({7})}},
            {{"D", "image_channel_major"}, {"B", "image_argument"}, {"O", "image_channel_major"}})},
      {"elementwise exp(x) + 1, height-major in, width-major out",
       Case("function (D[N, H, W, C]) -> (O) { O = exp(D) + 1; }", {{"D", F32({2, 5, 3, 7})}},
            {{"D", "image_height_major"}, {"O", "image_width_major"}})},
      {"max pooling 2x2, channel-major",
       Case("function (I[N, H, W, C]) -> (O) {\n"
            "  O[n, x, y, c : N, H / 2, W / 2, C] = >(I[n, 2 * x + i, 2 * y + j, c]), i < 2, j < 2;\n"
            "}\n",
            {{"I", F32({1, 7, 9, 5})}}, {{"I", "image_channel_major"}, {"O", "image_channel_major"}})},
  };
}

std::shared_ptr<hal::Device> OpenCl() { return testing::DeviceFor("opencl"); }

// llvm, and the first OpenCL device once per image access (sampler, linear).
std::vector<std::shared_ptr<hal::Device>> Devices() {
  std::vector<std::shared_ptr<hal::Device>> devices = {hal::OpenDevice("llvm")};
  if (OpenCl()) {
    for (hal::ImageAccess a : {hal::ImageAccess::kSampler, hal::ImageAccess::kLinear})
      devices.push_back(hal::OpenDevice("opencl", {.cl_images = a, .cpu = ""}));
  }
  return devices;
}

std::string Label(const hal::Device& device) {
  return device.id() + (device.id() == "llvm:cpu" ? "" : " (" + device.Describe() + ")");
}

TEST(ImageLayout, ProgramsMatchEvaluatorOnBothBackends) {
  std::vector<std::shared_ptr<hal::Device>> devices = Devices();
  for (const auto& [what, c] : Cases()) {
    std::vector<std::map<std::string, lang::Tensor>> results;
    lang::Program bound = testing::BindCase(c);
    auto inputs = testing::RandomInputs(bound);
    for (const auto& device : devices) {
      std::string label = fmt::format("{} on {}", what, Label(*device));
      compiler::CompileOptions options;
      options.hw = device->hardware_model();
      auto program = runtime::Program::Compile(bound, device, options, true);
      auto actual = program.Run(inputs);
      if (!testing::OutputsMatch(lang::Evaluate(bound, inputs), actual, label))
        ADD_FAILURE() << program.TargetCode();
      results.push_back(std::move(actual));
    }
    // The backends agree (up to float rounding of the reduction order).
    for (size_t d = 1; d < results.size(); ++d)
      testing::OutputsMatch(results[0], results[d], what + ": llvm vs " + Label(*devices[d]), 1e-5);
  }
}

// An output image's padding channels stay 0 after a post-op with f(0) != 0.
TEST(ImageLayout, OutputPaddingStaysZero) {
  Case c("function (D[N, H, W, C]) -> (O) { O = exp(D) + 1; }", {{"D", F32({1, 3, 5, 5})}},
         {{"D", "image_channel_major"}, {"O", "image_channel_major"}});
  for (const auto& device : Devices()) {
    lang::Program bound = testing::BindCase(c);
    compiler::CompileOptions options;
    options.hw = device->hardware_model();
    auto program = runtime::Program::Compile(bound, device, options, true);
    program.Upload(testing::RandomInputs(bound));
    program.Execute();
    std::vector<std::byte> bytes = program.ReadBuffer("O");
    // [W * C4, N * H] = [10, 3]: channels 5..7 of every (h, w) are padding.
    ASSERT_EQ(bytes.size(), 10u * 3 * 4 * 4);
    std::vector<float> v(bytes.size() / 4);
    std::memcpy(v.data(), bytes.data(), bytes.size());
    for (int64_t y = 0; y < 3; ++y)
      for (int64_t x = 5; x < 10; ++x)  // second block of channels: c = 4 (real), 5, 6, 7 (padding)
        for (int k = 1; k < 4; ++k)
          EXPECT_EQ(v[(y * 10 + x) * 4 + k], 0.0f) << Label(*device) << " pixel " << x << "," << y << " k " << k;
  }
}

// Writes `v` into `b` through `device`'s queue, as a kernel would.
void WriteLinear(const hal::Device& device, const hal::opencl::Buffer& b, const std::vector<float>& v) {
  auto queue = static_cast<cl_command_queue>(device.native_handles().queue);
  ASSERT_EQ(clEnqueueWriteBuffer(queue, b.handle(), CL_TRUE, 0, v.size() * 4, v.data(), 0, nullptr, nullptr),
            CL_SUCCESS);
}

// An image's two forms (opencl_images.h): written by the host or a kernel
// in one, read in the other after one copy; read in the form last written
// without any. Each step's contents are checked.
TEST(ImageLayout, FormsAreCopiedOnlyWhenTheOtherIsRead) {
  if (!OpenCl()) GTEST_SKIP() << "no OpenCL device";
  // A host write to the image, a read of the linear
  // buffer (one copy), a kernel-style write of the linear buffer, a read of
  // the image (one copy), and reads that copy nothing.
  for (hal::ImageAccess a : {hal::ImageAccess::kSampler, hal::ImageAccess::kLinear}) {
    std::shared_ptr<hal::Device> device = hal::OpenDevice("opencl", {.cl_images = a, .cpu = ""});
    std::unique_ptr<hal::DeviceBuffer> b = device->AllocateImage(3, 2, lang::DataType::F32);
    auto& image = static_cast<hal::opencl::ClImage&>(*b);
    std::vector<float> in(24), out(24);
    for (int i = 0; i < 24; ++i) in[i] = static_cast<float>(i) + 0.5f;
    device->Write(*b, in.data(), in.size() * 4);
    uint64_t ns = 0;
    bool linear = a == hal::ImageAccess::kLinear;  // the host wrote the linear buffer
    if (linear) image.ImageForRead(&ns);
    else image.LinearForRead(&ns);
    EXPECT_EQ(image.copies(), 1) << Label(*device);
    image.LinearForRead(&ns);
    image.ImageForRead(&ns);
    EXPECT_EQ(image.copies(), 1) << Label(*device) << ": both forms were current";
    device->Read(*b, out.data(), out.size() * 4);
    EXPECT_EQ(out, in) << Label(*device);
    // A kernel's write to the linear buffer (here through the device's own queue).
    std::vector<float> twice(24);
    for (int i = 0; i < 24; ++i) twice[i] = 2 * in[i];
    hal::opencl::Buffer& lin = image.LinearForWrite(&ns);
    WriteLinear(*device, lin, twice);
    device->Read(*b, out.data(), out.size() * 4);  // from the linear buffer, no copy
    EXPECT_EQ(out, twice) << Label(*device);
    EXPECT_EQ(image.copies(), 1) << Label(*device);
    image.ImageForRead(&ns);
    EXPECT_EQ(image.copies(), 2) << Label(*device);
    std::vector<float> pixels(24);
    size_t origin[3] = {0, 0, 0}, region[3] = {3, 2, 1};
    auto handles = device->native_handles();
    ASSERT_EQ(clEnqueueReadImage(static_cast<cl_command_queue>(handles.queue), image.ImageForRead(&ns), CL_TRUE,
                                 origin, region, 0, 0, pixels.data(), 0, nullptr, nullptr),
              CL_SUCCESS);
    EXPECT_EQ(pixels, twice) << Label(*device) << ": the image after the copy";
  }
}

TEST(ImageLayout, OpenClErrors) {
  auto device = OpenCl();
  if (!device) GTEST_SKIP() << "no OpenCL device";
  auto compile = [&](const Case& c) {
    compiler::CompileOptions options;
    options.hw = device->hardware_model();
    runtime::Program::Compile(testing::BindCase(c), device, options, true);
  };
  // Images hold f32 and f16 only.
  Case ints("function (D[N, H, W, C]) -> (O) { O = D + 1; }",
            {{"D", lang::Shape{lang::DataType::I32, {1, 3, 3, 5}}}}, {{"D", "image_channel_major"}});
  try {
    compile(ints);
    ADD_FAILURE() << "no error for an i32 image";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("tensor 'D' is i32 in an image layout"), std::string::npos) << e.what();
  }
  // Wider than CL_DEVICE_IMAGE2D_MAX_WIDTH (PoCL: 16384).
  Case wide("function (D[N, H, W, C]) -> (O) { O = D + 1; }", {{"D", F32({1, 1, 70000, 3})}},
            {{"D", "image_channel_major"}});
  try {
    compile(wide);
    ADD_FAILURE() << "no error for a 70000-pixel-wide image";
  } catch (const DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("tensor 'D' needs an image of [70000, 1] pixels"), std::string::npos)
        << e.what();
  }
  // A device without images.
  hal::opencl::ImageSupport none;
  none.device = "opencl:9:9";
  try {
    hal::opencl::CheckImage(none, "R", 4, 4, lang::DataType::F32);
    ADD_FAILURE() << "no error without image support";
  } catch (const DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("OpenCL device opencl:9:9 has no image support (CL_DEVICE_IMAGE_SUPPORT is "
                                         "false)"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tilec
