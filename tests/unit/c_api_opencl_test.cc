// The C ABI on memory already on an OpenCL device (tilec_program_run_memory
// with cl_mem buffers): Tilec opened on the caller's own cl_context and
// queue, or the caller using the context of a device Tilec opened; blocked
// layouts in the buffers; every misuse a TILEC_ERROR_USAGE error, never a
// crash. The caller's side is written as a framework would: plain OpenCL
// through the ICD loader (PoCL here).
// OpenCL 1.2, as a framework targeting the widest set of drivers would.
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <gtest/gtest.h>
#include <tilec/tilec.h>

#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "runtime/layout_pack.h"
#include "tests/unit/c_api_check.h"
#include "tile_lang/binder.h"
#include "tile_lang/evaluator.h"
#include "tile_lang/layout.h"
#include "tile_lang/parser.h"

namespace {

using tilec::testing::Take;

using tilec::lang::DataType;
using tilec::lang::Tensor;

// NCHW conv+ReLU (the seed's conv with channels second, so nChw8c blocks them).
const char* kConvRelu = R"(function (D[N, CI, X, Y], K[CO, CI, I, J]) -> (R) {
  O[n, co, x, y : N, CO, X, Y] = +(D[n, ci, x + i - 1, y + j - 1] * K[co, ci, i, j]);
  R = (O > 0 ? O : 0);
})";
const char* kMatmul = "function (A[M, K], B[K, N]) -> (C) { C[m, n : M, N] = +(A[m, k] * B[k, n]); }";
const char* kAdd = "function (A[N], B[N]) -> (C) { C = A + B; }";




tilec::lang::Program BindSource(const char* src, const std::map<std::string, tilec::lang::Shape>& shapes) {
  return tilec::lang::Bind(tilec::lang::Parse(tilec::MakeSource("t.tile", src)), shapes);
}

// The caller's OpenCL objects: the first device of the first platform (the
// device "opencl" names), its own context and an in-order queue without
// profiling (Tilec must not need it).
class CApiOpenClTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cl_uint n = 0;
    if (clGetPlatformIDs(1, &platform_, &n) != CL_SUCCESS || n == 0) GTEST_SKIP() << "no OpenCL platform";
    if (clGetDeviceIDs(platform_, CL_DEVICE_TYPE_ALL, 1, &device_, &n) != CL_SUCCESS || n == 0)
      GTEST_SKIP() << "no OpenCL device";
    cl_int st = CL_SUCCESS;
    context_ = clCreateContext(nullptr, 1, &device_, nullptr, nullptr, &st);
    ASSERT_EQ(st, CL_SUCCESS);
    queue_ = clCreateCommandQueue(context_, device_, 0, &st);
    ASSERT_EQ(st, CL_SUCCESS);
  }
  void TearDown() override {
    for (cl_mem m : mems_) clReleaseMemObject(m);
    if (queue_) clReleaseCommandQueue(queue_);
    if (context_) clReleaseContext(context_);
  }

  // A buffer of `context` holding `bytes` (copied from `data` if not null).
  cl_mem Buffer(cl_context context, size_t bytes, const void* data = nullptr,
                cl_mem_flags flags = CL_MEM_READ_WRITE) {
    cl_int st = CL_SUCCESS;
    cl_mem m = clCreateBuffer(context, flags | (data ? CL_MEM_COPY_HOST_PTR : 0), bytes,
                              const_cast<void*>(data), &st);
    EXPECT_EQ(st, CL_SUCCESS);
    mems_.push_back(m);
    return m;
  }
  // `t` packed into the layout `info` reports, in a new buffer of `context`.
  cl_mem Packed(cl_context context, const Tensor& t, const tilec_tensor_info& info) {
    std::vector<std::byte> bytes =
        tilec::runtime::PackToLayout(t, tilec::lang::ParseLayout(info.layout, t.shape().dims));
    EXPECT_EQ(bytes.size(), info.bytes);
    return Buffer(context, bytes.size(), bytes.data());
  }
  // The logical tensor in `mem` (laid out as `info` says), read on `queue`.
  static Tensor Unpacked(cl_command_queue queue, cl_mem mem, const tilec_tensor_info& info) {
    std::vector<std::byte> bytes(info.bytes);
    EXPECT_EQ(clEnqueueReadBuffer(queue, mem, CL_TRUE, 0, bytes.size(), bytes.data(), 0, nullptr,
                                  nullptr),
              CL_SUCCESS);
    std::vector<int64_t> dims(info.dims, info.dims + info.rank);
    return tilec::runtime::UnpackFromLayout(bytes.data(), bytes.size(), {DataType::F32, dims},
                                            tilec::lang::ParseLayout(info.layout, dims));
  }
  static tilec_tensor_info Info(tilec_program p, size_t i, bool input) {
    tilec_tensor_info info{};
    tilec_error e = nullptr;
    EXPECT_EQ(input ? tilec_program_input(p, i, &info, &e) : tilec_program_output(p, i, &info, &e),
              TILEC_OK)
        << Take(e);
    return info;
  }
  static void ExpectNear(const Tensor& got, const Tensor& want) {
    ASSERT_EQ(got.size(), want.size());
    for (int64_t j = 0; j < want.size(); ++j)
      ASSERT_NEAR(got.GetDouble(j), want.GetDouble(j), 1e-4 * std::max(1.0, std::abs(want.GetDouble(j))))
          << "element " << j;
  }

  cl_platform_id platform_ = nullptr;
  cl_device_id device_ = nullptr;
  cl_context context_ = nullptr;
  cl_command_queue queue_ = nullptr;
  std::vector<cl_mem> mems_;
};

// Sizes that divide no block (channels 5 and 11 in blocks of 8, odd images).
TEST_F(CApiOpenClTest, ConvReluOnTheCallersContextInBlockedLayout) {
  std::vector<int64_t> d_dims = {1, 5, 7, 6}, k_dims = {11, 5, 3, 3};
  Tensor d({DataType::F32, d_dims}), k({DataType::F32, k_dims});
  tilec::lang::FillRandom(d, 11);
  tilec::lang::FillRandom(k, 12);
  Tensor want = tilec::lang::Evaluate(BindSource(kConvRelu, {{"D", d.shape()}, {"K", k.shape()}}),
                                      {{"D", d}, {"K", k}})
                    .at("R");

  tilec_device dev = nullptr;
  ASSERT_TILEC_OK(tilec_device_open_cl(context_, queue_, &dev, &e_));
  void *ctx = nullptr, *queue = nullptr;
  ASSERT_TILEC_OK(tilec_device_cl_handles(dev, &ctx, &queue, &e_));
  EXPECT_EQ(ctx, static_cast<void*>(context_));
  EXPECT_EQ(queue, static_cast<void*>(queue_));

  tilec_tensor_spec in[2] = {{"D", TILEC_F32, 4, d_dims.data(), "nChw8c"},
                             {"K", TILEC_F32, 4, k_dims.data(), nullptr}};
  tilec_layout_spec out_layout = {"R", "nChw8c"};
  tilec_compile_options opts{};
  opts.layouts = &out_layout;
  opts.num_layouts = 1;
  tilec_program p = nullptr;
  ASSERT_TILEC_OK(tilec_program_compile(dev, kConvRelu, "conv.tile", in, 2, &opts, &p, &e_));
  tilec_tensor_info di = Info(p, 0, true), ki = Info(p, 1, true), ri = Info(p, 0, false);
  EXPECT_EQ(std::string(di.layout), "nChw8c");
  EXPECT_EQ(di.strides, nullptr);  // blocked
  EXPECT_EQ(ri.bytes, size_t{1 * 2 * 7 * 6 * 8 * 4});  // 11 channels padded to 16

  cl_mem dm = Packed(context_, d, di), km = Packed(context_, k, ki);
  std::vector<float> poison(ri.bytes / 4, std::nanf(""));
  cl_mem rm = Buffer(context_, ri.bytes, poison.data());
  tilec_tensor ins[2] = {{dm, 0, TILEC_F32, 4, d_dims.data(), nullptr},
                         {km, 0, TILEC_F32, 4, k_dims.data(), nullptr}};
  tilec_tensor out = {rm, 0, TILEC_F32, 4, ri.dims, nullptr};
  tilec_memory cl[2] = {TILEC_MEMORY_CL_MEM, TILEC_MEMORY_CL_MEM};
  ASSERT_TILEC_OK(tilec_program_run_memory(p, ins, cl, 2, &out, cl, 1, &e_));
  // The run is complete when it returns: read on the caller's queue.
  ExpectNear(Unpacked(queue_, rm, ri), want);

  EXPECT_EQ(tilec_program_release(p), TILEC_OK);
  EXPECT_EQ(tilec_device_release(dev), TILEC_OK);
}

// A matmul mixing a cl_mem input, a host input and a cl_mem output.
TEST_F(CApiOpenClTest, MatmulMixesDeviceAndHostMemory) {
  std::vector<int64_t> a_dims = {13, 7}, b_dims = {7, 9};
  Tensor a({DataType::F32, a_dims}), b({DataType::F32, b_dims});
  tilec::lang::FillRandom(a, 21);
  tilec::lang::FillRandom(b, 22);
  Tensor want = tilec::lang::Evaluate(BindSource(kMatmul, {{"A", a.shape()}, {"B", b.shape()}}),
                                      {{"A", a}, {"B", b}})
                    .at("C");
  tilec_device dev = nullptr;
  ASSERT_TILEC_OK(tilec_device_open_cl(context_, queue_, &dev, &e_));
  tilec_tensor_spec in[2] = {{"A", TILEC_F32, 2, a_dims.data(), nullptr},
                             {"B", TILEC_F32, 2, b_dims.data(), nullptr}};
  tilec_program p = nullptr;
  ASSERT_TILEC_OK(tilec_program_compile(dev, kMatmul, "mm.tile", in, 2, nullptr, &p, &e_));
  tilec_tensor_info ci = Info(p, 0, false);
  cl_mem am = Packed(context_, a, Info(p, 0, true)), cm = Buffer(context_, ci.bytes);
  tilec_tensor ins[2] = {{am, 0, TILEC_F32, 2, a_dims.data(), nullptr},
                         {b.data(), b.bytes(), TILEC_F32, 2, b_dims.data(), nullptr}};
  tilec_tensor out = {cm, 0, TILEC_F32, 2, ci.dims, nullptr};
  tilec_memory in_mem[2] = {TILEC_MEMORY_CL_MEM, TILEC_MEMORY_HOST}, out_mem = TILEC_MEMORY_CL_MEM;
  for (int run = 0; run < 2; ++run) {  // the second run reuses the pooled buffers
    ASSERT_TILEC_OK(tilec_program_run_memory(p, ins, in_mem, 2, &out, &out_mem, 1, &e_));
    ExpectNear(Unpacked(queue_, cm, ci), want);
  }
  EXPECT_EQ(tilec_program_release(p), TILEC_OK);
  EXPECT_EQ(tilec_device_release(dev), TILEC_OK);
}

// A device opened by id: the caller makes its buffers in Tilec's context.
TEST_F(CApiOpenClTest, BuffersInTheContextOfADeviceOpenedById) {
  tilec_device dev = nullptr;
  ASSERT_TILEC_OK(tilec_device_open("opencl", &dev, &e_));
  void *ctx = nullptr, *queue = nullptr;
  ASSERT_TILEC_OK(tilec_device_cl_handles(dev, &ctx, &queue, &e_));
  ASSERT_NE(ctx, nullptr);
  ASSERT_NE(queue, nullptr);
  int64_t dims[1] = {37};
  tilec_tensor_spec in[2] = {{"A", TILEC_F32, 1, dims, nullptr}, {"B", TILEC_F32, 1, dims, nullptr}};
  tilec_program p = nullptr;
  ASSERT_TILEC_OK(tilec_program_compile(dev, kAdd, "add.tile", in, 2, nullptr, &p, &e_));
  std::vector<float> a(37), b(37), c(37, -1.0f);
  for (int i = 0; i < 37; ++i) a[i] = static_cast<float>(i), b[i] = 0.5f * i;
  cl_context tc = static_cast<cl_context>(ctx);
  cl_mem am = Buffer(tc, 37 * 4, a.data()), bm = Buffer(tc, 37 * 4, b.data()), cm = Buffer(tc, 37 * 4);
  tilec_tensor ins[2] = {{am, 0, TILEC_F32, 1, dims, nullptr}, {bm, 0, TILEC_F32, 1, dims, nullptr}};
  tilec_tensor out = {cm, 0, TILEC_F32, 1, dims, nullptr};
  tilec_memory cl[2] = {TILEC_MEMORY_CL_MEM, TILEC_MEMORY_CL_MEM};
  ASSERT_TILEC_OK(tilec_program_run_memory(p, ins, cl, 2, &out, cl, 1, &e_));
  ASSERT_EQ(clEnqueueReadBuffer(static_cast<cl_command_queue>(queue), cm, CL_TRUE, 0, 37 * 4, c.data(),
                                0, nullptr, nullptr),
            CL_SUCCESS);
  for (int i = 0; i < 37; ++i) EXPECT_EQ(c[i], a[i] + b[i]) << i;
  EXPECT_EQ(tilec_program_release(p), TILEC_OK);
  EXPECT_EQ(tilec_device_release(dev), TILEC_OK);
}

TEST_F(CApiOpenClTest, MisuseIsAUsageErrorAndTheProgramStillRuns) {
  tilec_device dev = nullptr, cpu = nullptr;
  ASSERT_TILEC_OK(tilec_device_open_cl(context_, queue_, &dev, &e_));
  ASSERT_TILEC_OK(tilec_device_open("llvm", &cpu, &e_));
  int64_t dims[1] = {37};
  tilec_tensor_spec in[2] = {{"A", TILEC_F32, 1, dims, nullptr}, {"B", TILEC_F32, 1, dims, nullptr}};
  tilec_program p = nullptr, cpu_p = nullptr;
  ASSERT_TILEC_OK(tilec_program_compile(dev, kAdd, "add.tile", in, 2, nullptr, &p, &e_));
  ASSERT_TILEC_OK(tilec_program_compile(cpu, kAdd, "add.tile", in, 2, nullptr, &cpu_p, &e_));

  std::vector<float> host(37, 1.0f);
  cl_mem am = Buffer(context_, 37 * 4, host.data()), cm = Buffer(context_, 37 * 4);
  cl_mem small = Buffer(context_, 36 * 4);
  cl_mem read_only = Buffer(context_, 37 * 4, nullptr, CL_MEM_READ_ONLY);
  cl_int st = CL_SUCCESS;
  cl_context other = clCreateContext(nullptr, 1, &device_, nullptr, nullptr, &st);
  ASSERT_EQ(st, CL_SUCCESS);
  cl_mem foreign = Buffer(other, 37 * 4);
  cl_command_queue other_queue = clCreateCommandQueue(other, device_, 0, &st);
  ASSERT_EQ(st, CL_SUCCESS);

  auto T = [&](void* mem) { return tilec_tensor{mem, 0, TILEC_F32, 1, dims, nullptr}; };
  tilec_memory cl[2] = {TILEC_MEMORY_CL_MEM, TILEC_MEMORY_CL_MEM};
  auto run = [&](tilec_program prog, void* a, void* c, tilec_error* err) {
    tilec_tensor ins[2] = {T(a), T(am)}, out = T(c);
    return tilec_program_run_memory(prog, ins, cl, 2, &out, cl, 1, err);
  };
  EXPECT_USAGE(run(p, foreign, cm, &err_), "another cl_context");
  EXPECT_USAGE(run(p, am, foreign, &err_), "another cl_context");
  EXPECT_USAGE(run(p, small, cm, &err_), "holds 144 bytes but the tensor needs 148");
  EXPECT_USAGE(run(p, am, small, &err_), "holds 144 bytes");
  EXPECT_USAGE(run(p, am, read_only, &err_), "READ_ONLY");
  EXPECT_USAGE(run(p, nullptr, cm, &err_), "cl_mem is NULL");
  EXPECT_USAGE(run(cpu_p, am, cm, &err_), "a cl_mem can only be used by a program compiled for an OpenCL");
  {
    int64_t stride[1] = {1};
    tilec_tensor ins[2] = {T(am), T(am)}, out = T(cm);
    ins[0].strides = stride;
    EXPECT_USAGE(tilec_program_run_memory(p, ins, cl, 2, &out, cl, 1, &err_), "bytes and strides");
    ins[0].strides = nullptr;
    ins[0].bytes = 148;
    EXPECT_USAGE(tilec_program_run_memory(p, ins, cl, 2, &out, cl, 1, &err_), "bytes and strides");
    ins[0].bytes = 0;
    tilec_memory bad[2] = {static_cast<tilec_memory>(7), TILEC_MEMORY_CL_MEM};
    EXPECT_USAGE(tilec_program_run_memory(p, ins, bad, 2, &out, cl, 1, &err_), "7 is not a tilec_memory");
    // A wrong shape is still the user error it is for host memory.
    int64_t wrong[1] = {36};
    ins[0].dims = wrong;
    tilec_error e = nullptr;
    EXPECT_EQ(tilec_program_run_memory(p, ins, cl, 2, &out, cl, 1, &e), TILEC_ERROR_USER);
    Take(e);
  }
  EXPECT_USAGE(tilec_device_cl_handles(cpu, nullptr, nullptr, &err_), "not an OpenCL device");
  tilec_device d2 = nullptr;
  EXPECT_USAGE(tilec_device_open_cl(nullptr, queue_, &d2, &err_), "NULL");
  EXPECT_USAGE(tilec_device_open_cl(context_, nullptr, &d2, &err_), "NULL");
  EXPECT_USAGE(tilec_device_open_cl(context_, other_queue, &d2, &err_), "another cl_context");
  EXPECT_EQ(d2, nullptr);

  // None of it broke the program.
  std::vector<float> c(37, 0.0f);
  ASSERT_TILEC_OK(run(p, am, cm, &e_));
  ASSERT_EQ(clEnqueueReadBuffer(queue_, cm, CL_TRUE, 0, 37 * 4, c.data(), 0, nullptr, nullptr), CL_SUCCESS);
  for (float v : c) EXPECT_EQ(v, 2.0f);

  clReleaseCommandQueue(other_queue);
  EXPECT_EQ(tilec_program_release(p), TILEC_OK);
  EXPECT_EQ(tilec_program_release(cpu_p), TILEC_OK);
  EXPECT_EQ(tilec_device_release(dev), TILEC_OK);
  EXPECT_EQ(tilec_device_release(cpu), TILEC_OK);
  // The buffers of `other` go before it.
  for (cl_mem& m : mems_)
    if (m == foreign) clReleaseMemObject(m), m = nullptr;
  std::erase(mems_, nullptr);
  clReleaseContext(other);
}

}  // namespace
