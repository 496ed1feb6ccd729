// Tests of the OpenCL C emitter: the text it writes, and (on the machine's
// OpenCL device, PoCL here) that the kernels it writes compile and compute
// the right numbers. The device part talks to the OpenCL C API directly so it
// depends on nothing but the emitter.
#include "hal/opencl/emit_opencl.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <cmath>
#include <cstring>

#include "compiler/sem/builder.h"
#include "compiler/sem/printer.h"
#include "compiler/sem/simplify.h"
#include "support/error.h"

namespace tilec::hal::opencl {
namespace {

using namespace tilec::sem;           // NOLINT
using namespace tilec::sem::builder;  // NOLINT
using ::testing::HasSubstr;
using ::testing::Not;

const Type kF32 = Type::Scalar(DataType::F32);
const Type kF64 = Type::Scalar(DataType::F64);
const Type kIdx = Type::Index();

Type Global(const Type& elem, bool is_const = false) {
  return Type::Pointer(elem, AddressSpace::Global, is_const);
}

Function MakeKernel(std::string name, std::vector<Param> params, std::vector<Stmt> body,
                    int64_t wg = 0) {
  Function f;
  f.name = std::move(name);
  f.params = std::move(params);
  f.body = _Block(std::move(body));
  if (wg) f.work_group_size = std::array<int64_t, 3>{wg, 1, 1};
  return f;
}

std::string Emit(const Function& f, const EmitOptions& options = {}) {
  return EmitOpenCL(Module{{f}}, options);
}

// --- Kernels shared by the text and the device tests ------------------------------------

// C[4i..4i+3] = A[..] + B[..] with float4 loads and stores.
Function VectorAdd() {
  Expr A = _Var("A", Global(kF32, true)), B = _Var("B", Global(kF32, true));
  Expr C = _Var("C", Global(kF32));
  Expr i = _Var("i", kIdx);
  return MakeKernel("vadd", {{"A", A->type, true}, {"B", B->type, true}, {"C", C->type, true}},
                    {_Declare(kIdx, "i", _Index(ThreadIndexKind::GlobalId, 0)),
                     _Store(C, i * 4, _Load(A, i * 4, 4) + _Load(B, i * 4, 4))},
                    64);
}

// The seed's kernel shape in one dimension: R[x] = relu(sum_k D[x+k-1] * K[k])
// with zero padding ("same"). 32 threads compute a 64-wide output tile (two
// accumulators each) from a 66-wide tile of D staged in __local memory with
// clamped loads; a group-uniform test picks a fast path without bounds checks
// or a slow path that guards each accumulation with select.
constexpr int64_t kConvLength = 200;
Function SeedConv() {
  Expr R = _Var("R", Global(kF32)), D = _Var("D", Global(kF32, true));
  Expr K = _Var("K", Type::Pointer(kF32, AddressSpace::Constant));
  Expr tid = _Var("tid", kIdx), x_gid = _Var("x_gid", kIdx), lid = _Var("lid", kIdx);
  Expr lidx = _Var("lidx", kIdx), k = _Var("k", kIdx), a = _Var("a", kIdx), x = _Var("x", kIdx);
  Expr agg = _Var("agg", Type::Array(kF32, 2));
  Expr shared = _Var("D_shared", Type::Array(kF32, 66, AddressSpace::Local));
  Expr val = _Var("val", kF32), lo = _Var("LO", kF32);
  Expr j_gid = _Var("j_gid", kIdx), taps = _Var("taps", kIdx);
  auto accumulate = [&](bool guarded) {
    Expr sum = _Load(agg, a) + val * _Load(K, k);
    Expr guard = _LogicalAnd(x + k - 1 >= 0, x + k - 1 < kConvLength);
    return _For("a", 0, 2, 1,
                _Block({_Declare(kIdx, "x", x_gid + tid + a * 32),
                        _Declare(kF32, "val", _Load(shared, tid + a * 32 + k)),
                        _Store(agg, a, guarded ? _Select(guard, sum, _Load(agg, a)) : sum)}));
  };
  return MakeKernel(
      "seed_conv", {{"R", R->type, true}, {"D", D->type, true}, {"K", K->type, false}},
      {_Declare(kIdx, "tid", _Index(ThreadIndexKind::LocalId, 0)),
       _Declare(agg->type, "agg", _Float(0)),
       _Declare(shared->type, "D_shared"),
       _Declare(kIdx, "x_gid", _Index(ThreadIndexKind::GroupId, 0) * 64),
       _Declare(kIdx, "taps", _Const(3)),
       _For("j_gid", 0, 3, 3,  // the seed's one-iteration loop over a whole range
            _Block({_Comment("Load a tile of D, clamped to the tensor"),
                    _For("lid", 0, 3, 1,
                         _Block({_Declare(kIdx, "lidx", lid * 32 + tid),
                                 _If(lidx < 66,
                                     _Block({_Store(shared, lidx,
                                                    _Load(D, _Clamp(x_gid + j_gid * 64 + lidx - 1,
                                                                    _Const(0),
                                                                    _Const(kConvLength - 1))))}))})),
                    _Barrier()})),
       _For("k", _Const(0), taps, 1,
            _Block({_If(_LogicalAnd(x_gid >= 1, x_gid + 64 + 1 <= kConvLength),
                        _Block({_Comment("fast path"), accumulate(false)}),
                        _Block({_Comment("slow path"), accumulate(true)}))})),
       _For("a", 0, 2, 1,
            _Block({_Declare(kIdx, "x", x_gid + tid + a * 32),
                     _Declare(kF32, "LO", _Load(agg, a)),
                     _If(x < kConvLength,
                         _Block({_Store(R, x, _Cond(lo > 0.0, lo, _Float(0)))}))}))},
      32);
}

// --- Text ----------------------------------------------------------------------------

TEST(EmitOpenCLTest, VectorAddText) {
  std::string cl = Emit(VectorAdd());
  EXPECT_THAT(cl, HasSubstr("__kernel __attribute__((reqd_work_group_size(64, 1, 1))) void vadd("
                            "__global const float* restrict A, __global const float* restrict B, "
                            "__global float* restrict C) {"));
  EXPECT_THAT(cl, HasSubstr("int i = ((int)get_global_id(0));"));
  EXPECT_THAT(cl, HasSubstr("vstore4((vload4(0, (A + (i * 4))) + vload4(0, (B + (i * 4)))), 0, "
                            "(C + (i * 4)));"));
  EXPECT_THAT(cl, Not(HasSubstr("#pragma")));  // no extension without f16/f64
}

TEST(EmitOpenCLTest, SeedKernelText) {
  std::string cl = Emit(SeedConv());
  EXPECT_THAT(cl, HasSubstr("__constant float* K"));
  EXPECT_THAT(cl, HasSubstr("float agg[2] = {0.0f, 0.0f};"));
  EXPECT_THAT(cl, HasSubstr("__local float D_shared[66];"));
  EXPECT_THAT(cl, HasSubstr("D[clamp((((x_gid + (j_gid * 64)) + lidx) - 1), 0, 199)]"));
  EXPECT_THAT(cl, HasSubstr("barrier(CLK_LOCAL_MEM_FENCE);"));
  EXPECT_THAT(cl, HasSubstr("// Load a tile of D, clamped to the tensor"));
  EXPECT_THAT(cl, HasSubstr("agg[a] = (((((x + k) - 1) >= 0) && (((x + k) - 1) < 200)) ? "
                            "(agg[a] + (val * K[k])) : agg[a]);"));
  EXPECT_THAT(cl, HasSubstr("R[x] = ((LO > 0.0f) ? LO : 0.0f);"));
}

TEST(EmitOpenCLTest, ExtensionsOnlyWhenUsed) {
  Expr out = _Var("O", Global(kF64));
  Function f = MakeKernel("d", {{"O", out->type}}, {_Store(out, _Const(0), _Float(0.1, DataType::F64))});
  std::string cl = Emit(f);
  EXPECT_THAT(cl, HasSubstr("#pragma OPENCL EXTENSION cl_khr_fp64 : enable"));
  EXPECT_THAT(cl, Not(HasSubstr("cl_khr_fp16")));
  EXPECT_THAT(cl, HasSubstr("O[0] = 0.1;"));
  EmitOptions no_fp64;
  no_fp64.fp64 = false;
  EXPECT_THROW(Emit(f, no_fp64), UserError);

  Expr h = _Var("H", Global(Type::Scalar(DataType::F16)));
  Function g = MakeKernel("h", {{"H", h->type}}, {_Store(h, _Const(1), _Load(h, _Const(0)) * 2.0)});
  std::string native = Emit(g);
  EXPECT_THAT(native, HasSubstr("#pragma OPENCL EXTENSION cl_khr_fp16 : enable"));
  EXPECT_THAT(native, HasSubstr("H[1] = (H[0] * ((half)2.0f));"));
  EmitOptions storage_only;
  storage_only.fp16 = false;
  std::string emulated = Emit(g, storage_only);
  EXPECT_THAT(emulated, Not(HasSubstr("#pragma")));
  EXPECT_THAT(emulated, HasSubstr("__global half* H"));
  EXPECT_THAT(emulated, HasSubstr("vstore_half((vload_half(0, (H + 0)) * 2.0f), 0, (H + 1));"));
}

TEST(EmitOpenCLTest, BoolsAreCharInMemoryAndMasksInVectors) {
  Expr bb = _Var("BB", Global(Type::Bool()));
  Expr x4 = _Var("x4", Type::Scalar(DataType::F32, 4));
  Expr d4 = _Var("d4", Type::Scalar(DataType::F64, 4));
  Expr m = _Var("m", Type::Bool(4));
  Function f = MakeKernel(
      "b", {{"BB", bb->type}},
      {_Declare(x4->type, "x4", _Broadcast(_Float(1), 4)),
       _Declare(d4->type, "d4", _Broadcast(_Float(1, DataType::F64), 4)),
       _Declare(Type::Bool(), "s", _Load(bb, _Const(0))),
       _Store(bb, _Const(1), _Not(_Var("s", Type::Bool()))),
       _Declare(m->type, "m", x4 > 0.5),
       _Store(bb, _Const(4), _LogicalAnd(m, _Load(bb, _Const(8), 4))),
       _Assign(d4, _Select(m, d4, _Broadcast(_Float(0, DataType::F64), 4))),
       _Assign(d4, _Select(x4 < 0.0, d4, d4 * 2.0))});
  std::string cl = Emit(f);
  EXPECT_THAT(cl, HasSubstr("__global char* BB"));
  EXPECT_THAT(cl, HasSubstr("bool s = (BB[0] != 0);"));
  EXPECT_THAT(cl, HasSubstr("BB[1] = ((char)(!s));"));
  EXPECT_THAT(cl, HasSubstr("int4 m = (x4 > ((float4)(0.5f)));"));
  // The char4 mask from memory is widened to the int4 mask it is combined with,
  // then narrowed back and turned into 0/1 to store.
  EXPECT_THAT(cl, HasSubstr("vstore4((-convert_char4((m && convert_int4((vload4(0, (BB + 8)) != "
                            "((char4)(0))))))), 0, (BB + 4));"));
  // select() on double4 needs a long4 condition.
  EXPECT_THAT(cl, HasSubstr("d4 = select(((double4)(0.0)), d4, convert_long4(m));"));
  EXPECT_THAT(cl, HasSubstr("d4 = select((d4 * ((double4)(2.0))), d4, convert_long4((x4 < "
                            "((float4)(0.0f)))));"));
}

TEST(EmitOpenCLTest, IntegerSemantics) {
  Type u8 = Type::Scalar(DataType::U8);
  Expr u = _Var("u", u8), o = _Var("O", Global(u8));
  Function f = MakeKernel(
      "i", {{"O", o->type}},
      {_Declare(u8, "u", _Const(200, u8)),
       _Store(o, _Const(0), u * _Const(3, u8) + _Const(7, u8)),
       _Store(o, _Const(1), -u),
       _Declare(kIdx, "n", _Const(INT32_MIN)),
       _Declare(Type::Scalar(DataType::I64), "l", _Const(INT64_MIN, DataType::I64)),
       _Declare(kIdx, "c", _Clamp(_Var("n", kIdx), _Const(0), _Var("n", kIdx))),
       _Declare(kIdx, "d", _Clamp(_Var("n", kIdx), _Const(5), _Const(1))),
       _Declare(kF32, "f", _Clamp(_Float(2), _Float(-1), _Float(1))),
       _Declare(Type::Scalar(DataType::U32), "w", _Const(4000000000, DataType::U32)),
       _Declare(kF32, "lim", _LimitConst(LimitKind::Min, kF32)),
       _Declare(kIdx, "ilim", _LimitConst(LimitKind::Min, kIdx)),
       _Declare(kF32, "inf", _Float(INFINITY)),
       _Declare(kF32, "neg", _Float(-0.5))});
  std::string cl = Emit(f);
  // C promotes uchar arithmetic to int; sem wraps, so each result is cast back.
  EXPECT_THAT(cl, HasSubstr("O[0] = ((uchar)(((uchar)(u * ((uchar)3))) + ((uchar)7)));"));
  EXPECT_THAT(cl, HasSubstr("O[1] = ((uchar)(-u));"));
  EXPECT_THAT(cl, HasSubstr("int n = (-2147483647 - 1);"));
  EXPECT_THAT(cl, HasSubstr("long l = (-9223372036854775807L - 1L);"));
  // clamp() only with constant, ordered bounds.
  EXPECT_THAT(cl, HasSubstr("int c = min(max(n, 0), n);"));
  EXPECT_THAT(cl, HasSubstr("int d = min(max(n, 5), 1);"));
  EXPECT_THAT(cl, HasSubstr("float f = clamp(2.0f, (-1.0f), 1.0f);"));
  EXPECT_THAT(cl, HasSubstr("uint w = 4000000000u;"));
  EXPECT_THAT(cl, HasSubstr("float lim = (-FLT_MAX);"));
  EXPECT_THAT(cl, HasSubstr("int ilim = (-2147483647 - 1);"));
  // `inf` is no OpenCL word, but INFINITY is a macro.
  EXPECT_THAT(cl, HasSubstr("float inf = INFINITY;"));
  EXPECT_THAT(cl, HasSubstr("float neg = (-0.5f);"));
}

// A reserved prefix stays reserved whatever suffix follows (`get_j_`, …):
// such names get a prefix. (Found by fuzz_compile: the suffix loop never
// ended for an index named get_j.)
TEST(EmitOpenCLTest, RenamesNamesWithAReservedPrefix) {
  Expr o = _Var("O", Global(kF32));
  Function f = MakeKernel("m", {{"O", o->type}},
                          {_Declare(kF32, "get_j", _Float(1)), _Declare(kF32, "r_get_j", _Float(2)),
                           _Declare(kF32, "CL_X", _Float(3)), _Declare(kF32, "__y", _Float(4)),
                           _Store(o, _Const(0),
                                  _Var("get_j", kF32) + _Var("r_get_j", kF32) +
                                      _Var("CL_X", kF32) + _Var("__y", kF32))});
  std::string cl = Emit(f);
  EXPECT_THAT(cl, HasSubstr("float r1_get_j = 1.0f;"));  // r_get_j is taken
  EXPECT_THAT(cl, HasSubstr("float r_get_j = 2.0f;"));
  EXPECT_THAT(cl, HasSubstr("float r_CL_X = 3.0f;"));
  EXPECT_THAT(cl, HasSubstr("float r___y = 4.0f;"));
  EXPECT_THAT(cl, HasSubstr("O[0] = (((r1_get_j + r_get_j) + r_CL_X) + r___y);"));
}

TEST(EmitOpenCLTest, RenamesReservedNamesAndMapsMath) {
  Expr min = _Var("min", kF32), f4 = _Var("float4", kF32), o = _Var("O", Global(kF32));
  Function f = MakeKernel("m", {{"O", o->type}},
                          {_Declare(kF32, "min", _Float(1)), _Declare(kF32, "float4", _Float(2)),
                           _Declare(kF32, "min_", _Float(3)),
                           _Store(o, _Const(0), _Min(min, f4) + _Var("min_", kF32)),
                           _Store(o, _Const(1), _Call(CallFn::Exp, {min}) +
                                                    _Call(CallFn::Sqrt, {f4}) +
                                                    _Fma(min, f4, min) + _Mad(min, f4, min))});
  std::string cl = Emit(f);
  EXPECT_THAT(cl, HasSubstr("float min__ = 1.0f;"));  // min_ is taken
  EXPECT_THAT(cl, HasSubstr("float float4_ = 2.0f;"));
  EXPECT_THAT(cl, HasSubstr("O[0] = (fmin(min__, float4_) + min_);"));
  EXPECT_THAT(cl, HasSubstr("exp(min__)"));
  EXPECT_THAT(cl, HasSubstr("fma(min__, float4_, min__)"));
  EXPECT_THAT(cl, HasSubstr("mad(min__, float4_, min__)"));
  EmitOptions fast;
  fast.fast_math = true;
  std::string fast_cl = Emit(f, fast);
  EXPECT_THAT(fast_cl, HasSubstr("native_exp(min__)"));
  EXPECT_THAT(fast_cl, HasSubstr("native_sqrt(float4_)"));
  // No native_ functions exist for double.
  Expr d = _Var("D", Global(kF64));
  Function g = MakeKernel("g", {{"D", d->type}},
                          {_Store(d, _Const(0), _Call(CallFn::Exp, {_Load(d, _Const(0))}))});
  EXPECT_THAT(Emit(g, fast), HasSubstr("D[0] = exp(D[0]);"));
}

TEST(EmitOpenCLTest, RejectsWhatOpenCLCannotExpress) {
  Function f = MakeKernel("k", {{"flag", Type::Bool()}}, {});
  EXPECT_THROW(Emit(f), InternalError);
  Function g = MakeKernel("k", {}, {_Declare(kIdx, "a"), _Declare(kIdx, "a")});
  EXPECT_THROW(Emit(g), InternalError);  // fails verification
  Function h = MakeKernel("select", {}, {});
  EXPECT_THROW(Emit(h), InternalError);
}

// --- Device ------------------------------------------------------------------------

// One OpenCL context on the first device found, and a way to run one kernel.
class Device {
 public:
  // The shared device, or nullptr (with `why`) when there is none.
  static Device* Get(std::string* why) {
    static Device* device = nullptr;
    static std::string reason;
    static bool tried = false;
    if (!tried) {
      tried = true;
      auto* d = new Device;
      if (d->Open(&reason)) device = d;
    }
    *why = reason;
    return device;
  }

  // A kernel argument: a host vector copied in and back out, or a value.
  struct Arg {
    void* data;
    size_t bytes;
    bool is_buffer;
  };
  template <typename T>
  static Arg Buffer(std::vector<T>& v) {
    return {v.data(), v.size() * sizeof(T), true};
  }
  template <typename T>
  static Arg Value(T& v) {
    return {&v, sizeof(T), false};
  }

  // Builds `source`, runs `kernel` over `global` work-items in groups of
  // `local`, and copies every buffer back. Returns "" or what failed.
  std::string Run(const std::string& source, const std::string& kernel, std::vector<Arg> args,
                  size_t global, size_t local) {
    cl_int err = CL_SUCCESS;
    const char* text = source.c_str();
    cl_program program = clCreateProgramWithSource(context_, 1, &text, nullptr, &err);
    if (err != CL_SUCCESS) return fmt::format("clCreateProgramWithSource: {}", err);
    err = clBuildProgram(program, 1, &device_, "", nullptr, nullptr);
    if (err != CL_SUCCESS) {
      size_t size = 0;
      clGetProgramBuildInfo(program, device_, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
      std::string log(size, '\0');
      clGetProgramBuildInfo(program, device_, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
      clReleaseProgram(program);
      return fmt::format("build failed ({}):\n{}\n--- source ---\n{}", err, log, source);
    }
    cl_kernel k = clCreateKernel(program, kernel.c_str(), &err);
    std::string failure;
    std::vector<cl_mem> mems;
    if (err != CL_SUCCESS) failure = fmt::format("clCreateKernel: {}", err);
    for (size_t i = 0; failure.empty() && i < args.size(); ++i) {
      if (args[i].is_buffer) {
        cl_mem m = clCreateBuffer(context_, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, args[i].bytes,
                                  args[i].data, &err);
        if (err != CL_SUCCESS) failure = fmt::format("clCreateBuffer: {}", err);
        mems.push_back(m);
        err = clSetKernelArg(k, i, sizeof(cl_mem), &m);
      } else {
        mems.push_back(nullptr);
        err = clSetKernelArg(k, i, args[i].bytes, args[i].data);
      }
      if (failure.empty() && err != CL_SUCCESS) failure = fmt::format("clSetKernelArg {}: {}", i, err);
    }
    if (failure.empty()) {
      err = clEnqueueNDRangeKernel(queue_, k, 1, nullptr, &global, &local, 0, nullptr, nullptr);
      if (err != CL_SUCCESS) failure = fmt::format("clEnqueueNDRangeKernel: {}", err);
    }
    for (size_t i = 0; failure.empty() && i < args.size(); ++i) {
      if (!args[i].is_buffer) continue;
      err = clEnqueueReadBuffer(queue_, mems[i], CL_TRUE, 0, args[i].bytes, args[i].data, 0,
                                nullptr, nullptr);
      if (err != CL_SUCCESS) failure = fmt::format("clEnqueueReadBuffer: {}", err);
    }
    for (cl_mem m : mems)
      if (m) clReleaseMemObject(m);
    if (k) clReleaseKernel(k);
    clReleaseProgram(program);
    return failure;
  }

 private:
  bool Open(std::string* why) {
    cl_uint count = 0;
    if (clGetPlatformIDs(0, nullptr, &count) != CL_SUCCESS || count == 0) {
      *why = "no OpenCL platform";
      return false;
    }
    std::vector<cl_platform_id> platforms(count);
    clGetPlatformIDs(count, platforms.data(), nullptr);
    for (cl_platform_id p : platforms) {
      if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &device_, nullptr) != CL_SUCCESS) continue;
      cl_int err = CL_SUCCESS;
      context_ = clCreateContext(nullptr, 1, &device_, nullptr, nullptr, &err);
      if (err != CL_SUCCESS) continue;
      queue_ = clCreateCommandQueue(context_, device_, 0, &err);
      if (err == CL_SUCCESS) return true;
    }
    *why = "no usable OpenCL device";
    return false;
  }

  cl_device_id device_ = nullptr;
  cl_context context_ = nullptr;
  cl_command_queue queue_ = nullptr;
};

class EmitOpenCLDeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    device_ = Device::Get(&why);
    if (!device_) GTEST_SKIP() << "skipping device tests: " << why;
  }
  Device* device_ = nullptr;
};

TEST_F(EmitOpenCLDeviceTest, VectorAdd) {
  const size_t n = 1024;
  std::vector<float> a(n), b(n), c(n, -1.0f);
  for (size_t i = 0; i < n; ++i) {
    a[i] = 0.5f * i;
    b[i] = 1000.0f - 2.0f * i;
  }
  ASSERT_EQ(device_->Run(Emit(VectorAdd()), "vadd",
                         {Device::Buffer(a), Device::Buffer(b), Device::Buffer(c)}, n / 4, 64),
            "");
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(c[i], a[i] + b[i]) << "at " << i;
}

TEST_F(EmitOpenCLDeviceTest, SeedConvWithLocalMemoryBeforeAndAfterSimplify) {
  std::vector<float> d(kConvLength), k = {0.25f, -1.0f, 0.5f};
  for (int64_t i = 0; i < kConvLength; ++i) d[i] = static_cast<float>((i * 37) % 23) - 9.0f;
  std::vector<float> want(kConvLength);
  for (int64_t x = 0; x < kConvLength; ++x) {
    float sum = 0;
    for (int64_t j = 0; j < 3; ++j)
      if (x + j - 1 >= 0 && x + j - 1 < kConvLength) sum += d[x + j - 1] * k[j];
    want[x] = sum > 0 ? sum : 0;
  }
  Function original = SeedConv();
  Function simplified = Simplify(original);
  ASSERT_NE(Print(simplified), Print(original));  // the simplifier did something
  for (const Function* f : {&original, &simplified}) {
    std::vector<float> r(kConvLength, -7.0f);
    ASSERT_EQ(device_->Run(Emit(*f), "seed_conv", {Device::Buffer(r), Device::Buffer(d), Device::Buffer(k)},
                           4 * 32, 32),
              "");
    for (int64_t x = 0; x < kConvLength; ++x)
      ASSERT_FLOAT_EQ(r[x], want[x]) << "at " << x << (f == &simplified ? " (simplified)" : "");
  }
}

// f64 math, integer semantics (negative division, narrow wrap-around, i64,
// shifts) and bool output, with a 64-bit index type.
TEST_F(EmitOpenCLDeviceTest, DoubleAndIntegerOps) {
  Type i32 = Type::Scalar(DataType::I32), u8 = Type::Scalar(DataType::U8);
  Type i64 = Type::Scalar(DataType::I64);
  Expr od = _Var("OD", Global(kF64)), oq = _Var("OQ", Global(i32)), ou = _Var("OU", Global(u8));
  Expr ob = _Var("OB", Global(Type::Bool())), ol = _Var("OL", Global(i64));
  Expr i = _Var("i", kIdx), dv = _Var("dv", kF64), v = _Var("v", i32), u = _Var("u", u8);
  Expr w = _Var("w", u8);
  Function f = MakeKernel(
      "mixed",
      {{"OD", od->type}, {"OQ", oq->type}, {"OU", ou->type}, {"OB", ob->type}, {"OL", ol->type}},
      {_Declare(kIdx, "i", _Index(ThreadIndexKind::GlobalId, 0)),
       _Declare(kF64, "dv", _Cast(kF64, i) * 0.5 + 1.0),
       _Store(od, i,
              _Call(CallFn::Sqrt, {dv}) + _Call(CallFn::Pow, {dv, _Float(2, DataType::F64)}) -
                  _Call(CallFn::Floor, {dv / 3.0}) + _Fma(dv, dv, _Float(-1, DataType::F64))),
       _Declare(i32, "v", _Cast(i32, i) - 100),
       _Store(oq, i * 4, v / 7),
       _Store(oq, i * 4 + 1, v % 7),
       _Store(oq, i * 4 + 2,
              ((_Min(v, _Const(50, i32)) + 100) << _Const(2, i32)) ^ _Max(v, _Const(-3, i32))),
       _Store(oq, i * 4 + 3, _Clamp(v, _Const(-20, i32), _Const(20, i32)) * _Const(3, i32)),
       _Declare(u8, "u", _Cast(u8, i)),
       _Declare(u8, "w", u * _Const(3, u8) + _Const(7, u8)),
       _Store(ou, i, w),
       // Compared before any store truncates it: only the emitted casts make
       // this the wrapped value, as sem says.
       _Store(ob, i, u * _Const(3, u8) + _Const(7, u8) < _Const(100, u8)),
       _Store(ol, i, _Cast(i64, v) * _Const(3000000000, i64) + _LimitConst(LimitKind::Max, i64) / 2)});
  f.index_type = DataType::I64;
  const size_t n = 256;
  std::vector<double> d(n);
  std::vector<int32_t> q(4 * n);
  std::vector<uint8_t> uo(n), bo(n, 9);
  std::vector<int64_t> lo(n);
  std::string cl = Emit(f);
  ASSERT_THAT(cl, HasSubstr("long i = ((long)get_global_id(0));"));
  ASSERT_EQ(device_->Run(cl, "mixed",
                         {Device::Buffer(d), Device::Buffer(q), Device::Buffer(uo),
                          Device::Buffer(bo), Device::Buffer(lo)},
                         n, 64),
            "");
  for (size_t x = 0; x < n; ++x) {
    double dv_ = x * 0.5 + 1.0;
    double want = std::sqrt(dv_) + std::pow(dv_, 2.0) - std::floor(dv_ / 3.0) + std::fma(dv_, dv_, -1.0);
    EXPECT_NEAR(d[x], want, 1e-12 * std::fabs(want)) << x;
    int32_t vv = static_cast<int32_t>(x) - 100;
    EXPECT_EQ(q[4 * x], vv / 7) << x;
    EXPECT_EQ(q[4 * x + 1], vv % 7) << x;
    EXPECT_EQ(q[4 * x + 2], ((std::min(vv, 50) + 100) * 4) ^ std::max(vv, -3)) << x;
    EXPECT_EQ(q[4 * x + 3], std::clamp(vv, -20, 20) * 3) << x;
    auto ww = static_cast<uint8_t>(static_cast<uint8_t>(x) * 3 + 7);
    EXPECT_EQ(uo[x], ww) << x;
    EXPECT_EQ(bo[x], ww < 100 ? 1 : 0) << x;  // on the wrapped value, stored as 0/1
    EXPECT_EQ(lo[x], int64_t{vv} * 3000000000 + INT64_MAX / 2) << x;
  }
}

// Vector compares feeding select() on double4 (mask widening), bool vectors
// through char buffers, lane extract/insert, and emulated-half storage.
TEST_F(EmitOpenCLDeviceTest, VectorMasksAndHalfStorage) {
  Type f4 = Type::Scalar(DataType::F32, 4), d4 = Type::Scalar(DataType::F64, 4);
  Type h = Type::Scalar(DataType::F16);
  Expr X = _Var("X", Global(kF32, true)), OD = _Var("OD", Global(kF64));
  Expr IB = _Var("IB", Global(Type::Bool(), true)), OB = _Var("OB", Global(Type::Bool()));
  Expr OF = _Var("OF", Global(f4)), H = _Var("H", Global(h));
  Expr i = _Var("i", kIdx), x4 = _Var("x4", f4), m = _Var("m", Type::Bool(4));
  Function f = MakeKernel(
      "vec", {{"X", X->type}, {"OD", OD->type}, {"IB", IB->type}, {"OB", OB->type}, {"OF", OF->type},
              {"H", H->type}},
      {_Declare(kIdx, "i", _Index(ThreadIndexKind::GlobalId, 0)),
       _Declare(f4, "x4", _Load(X, i * 4, 4)),
       _Declare(m->type, "m", x4 > 0.0),
       _Store(OD, i * 4,
              _Select(m, _Cast(d4, x4) * 2.0, _Broadcast(_Float(-1, DataType::F64), 4))),
       _Store(OB, i * 4, _LogicalAnd(_Load(IB, i * 4, 4), _Not(m))),
       _Store(OF, i, _Insert(x4, 2, _Extract(x4, 0) + _Extract(x4, 3))),
       _Store(H, i * 4, _Load(H, i * 4, 4) * 2.0 + 1.0),
       _Store(H, i * 4 + 1, _Cast(h, _Extract(x4, 1)))},
      16);
  EmitOptions options;
  options.fp16 = false;  // PoCL's CPU device has no cl_khr_fp16
  const size_t n = 64;
  std::vector<float> x(4 * n), of(4 * n);
  std::vector<double> od(4 * n);
  std::vector<uint8_t> ib(4 * n), ob(4 * n, 9);
  std::vector<_Float16> hv(4 * n);
  for (size_t j = 0; j < 4 * n; ++j) {
    x[j] = static_cast<float>((static_cast<int>(j) * 7) % 11) - 5.0f;
    ib[j] = (j % 3) != 0;
    hv[j] = static_cast<_Float16>(0.25f * static_cast<float>(j % 128));
  }
  std::vector<_Float16> h_in = hv;
  ASSERT_EQ(device_->Run(Emit(f, options), "vec",
                         {Device::Buffer(x), Device::Buffer(od), Device::Buffer(ib),
                          Device::Buffer(ob), Device::Buffer(of), Device::Buffer(hv)},
                         n, 16),
            "");
  for (size_t j = 0; j < 4 * n; ++j) {
    EXPECT_EQ(od[j], x[j] > 0 ? 2.0 * x[j] : -1.0) << j;
    EXPECT_EQ(ob[j], ib[j] && !(x[j] > 0) ? 1 : 0) << j;
    size_t lane = j % 4, base = j - lane;
    EXPECT_EQ(of[j], lane == 2 ? x[base] + x[base + 3] : x[j]) << j;
    float want_h = lane == 1 ? x[j] : static_cast<float>(h_in[j]) * 2.0f + 1.0f;
    EXPECT_EQ(static_cast<float>(hv[j]), want_h) << j;
  }
}

}  // namespace
}  // namespace tilec::hal::opencl
