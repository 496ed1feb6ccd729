// The C ABI with MACE image layouts (docs/layouts.md, Images): inputs and
// outputs in image_argument storage round-trip through tilec_program_run on
// every device (OpenCL: image2d_t; llvm: the linear equivalent), from
// logical strided views and from memory already in the compiled layout.
#include <gtest/gtest.h>
#include <tilec/tilec.h>

#include <string>
#include <vector>

namespace {

TEST(CApiImages, ArgumentImagesRoundTrip) {
  const char* kAdd = "function (A[N], B[N]) -> (C) { C = A * 2 + B; }";
  int64_t dims[1] = {7};  // 2 pixels, the last one holding 3 elements and a padding one
  int64_t strides[1] = {1};
  for (size_t d = 0; d < tilec_device_count(); ++d) {
    std::string id = tilec_device_id(d);
    tilec_device device = nullptr;
    tilec_error e = nullptr;
    ASSERT_EQ(tilec_device_open(id.c_str(), &device, &e), TILEC_OK) << id;
    tilec_tensor_spec in[2] = {{"A", TILEC_F32, 1, dims, "image_argument"}, {"B", TILEC_F32, 1, dims, "ARGUMENT"}};
    tilec_layout_spec out_layout = {"C", "image_argument"};
    tilec_compile_options options{};
    options.layouts = &out_layout;
    options.num_layouts = 1;
    tilec_program p = nullptr;
    ASSERT_EQ(tilec_program_compile(device, kAdd, "add.tile", in, 2, &options, &p, &e), TILEC_OK)
        << id << ": " << (e ? tilec_error_text(e) : "");
    tilec_tensor_info info{};
    ASSERT_EQ(tilec_program_output(p, 0, &info, nullptr), TILEC_OK);
    EXPECT_STREQ(info.layout, "image_argument") << id;
    EXPECT_EQ(info.bytes, 8 * sizeof(float)) << id;
    EXPECT_EQ(info.strides, nullptr) << id;

    // Logical views (strides given): packed in, unpacked out.
    std::vector<float> a(7), b(7), c(7, -1.0f);
    for (int i = 0; i < 7; ++i) a[i] = static_cast<float>(i), b[i] = 100.0f * i;
    tilec_tensor ins[2] = {{a.data(), a.size() * 4, TILEC_F32, 1, dims, strides},
                           {b.data(), b.size() * 4, TILEC_F32, 1, dims, strides}};
    tilec_tensor outs[1] = {{c.data(), c.size() * 4, TILEC_F32, 1, dims, strides}};
    ASSERT_EQ(tilec_program_run(p, ins, 2, outs, 1, &e), TILEC_OK) << id << ": " << (e ? tilec_error_text(e) : "");
    for (int i = 0; i < 7; ++i) EXPECT_EQ(c[i], 2.0f * i + 100.0f * i) << id << " C[" << i << "]";

    // Memory in the compiled layout (8 elements, the padding one 0).
    alignas(64) float pa[8] = {0, 1, 2, 3, 4, 5, 6, 0}, pb[8] = {1, 1, 1, 1, 1, 1, 1, 0}, pc[8];
    for (float& x : pc) x = -1.0f;
    tilec_tensor pins[2] = {{pa, sizeof(pa), TILEC_F32, 1, dims, nullptr},
                            {pb, sizeof(pb), TILEC_F32, 1, dims, nullptr}};
    tilec_tensor pouts[1] = {{pc, sizeof(pc), TILEC_F32, 1, dims, nullptr}};
    ASSERT_EQ(tilec_program_run(p, pins, 2, pouts, 1, &e), TILEC_OK) << id << ": " << (e ? tilec_error_text(e) : "");
    for (int i = 0; i < 7; ++i) EXPECT_EQ(pc[i], 2.0f * i + 1.0f) << id << " C[" << i << "]";
    EXPECT_EQ(pc[7], 0.0f) << id << ": the padding element";
    EXPECT_EQ(tilec_program_release(p), TILEC_OK);
    EXPECT_EQ(tilec_device_release(device), TILEC_OK);
  }
}

}  // namespace
