// What bench_peers compares: a Runner is one side of a workload (Tilec on a
// device, a oneDNN primitive, an OpenBLAS call, a bandwidth probe) that runs
// the workload once, synchronously, with its inputs already in place, and
// can hand back its output for the correctness check.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "tile_lang/tensor.h"

namespace tilec::bench {

// The logical (row-major) inputs of a workload, by the Tile program's names.
using Inputs = std::map<std::string, lang::Tensor>;

struct Runner {
  std::string name;           // "tilec opencl:0:0", "onednn nhwc", "openblas sgemm"
  std::function<void()> run;  // one execution, complete when it returns
  // The output after run(), logical and row-major like Tilec's; empty when
  // the runner computes something else (the bandwidth probe).
  std::function<std::vector<float>()> output;
  std::string detail;  // e.g. the implementation oneDNN chose ("brg:avx512_core")
};

// A convolution as oneDNN describes it; data NHWC, weights as the Tile
// workloads give them: K[KH, KW, CI, CO] (HWIO), or K[KH, KW, C] when
// depthwise. Input names are "D" and "K".
struct ConvSpec {
  int64_t n = 1, h = 56, w = 56, ci = 64, co = 64, kh = 3, kw = 3;
  int64_t pad = 1;         // on every side ("same" for 3x3: 1)
  bool depthwise = false;  // groups = ci = co, one filter per channel
  bool relu = true;        // fused ReLU post-op
  // "nhwc": the layout above. "nchw", "nChw16c" or "nChw8c": the inputs are
  // logical NCHW data D[N, C, H, W] and OIHW weights K[CO, CI, KH, KW], and
  // src and dst live in that layout (weights in oneDNN's choice).
  std::string layout = "nhwc";
};

// oneDNN convolution forward (inference). `blocked`: src, weights and dst in
// the layouts oneDNN prefers (`any`); otherwise src/dst in spec.layout and
// only the weights in oneDNN's choice. Inputs are reordered once, here.
Runner OneDnnConv(const ConvSpec& spec, const Inputs& inputs, bool blocked);

// oneDNN matmul C = A * B, row-major f32 [m, k] x [k, n]; inputs "A", "B".
Runner OneDnnMatmul(int64_t m, int64_t n, int64_t k, const Inputs& inputs);

// oneDNN R = relu(A * B + C) over `count` f32: one binary mul primitive with
// a binary-add and a ReLU post-op (or, if this oneDNN cannot fuse a
// full-tensor binary post-op, mul then add+ReLU). Inputs "A", "B", "C".
Runner OneDnnMulAddRelu(int64_t count, const Inputs& inputs);

// OpenBLAS cblas_sgemm, row-major, C = A * B; inputs "A", "B".
Runner OpenBlasSgemm(int64_t m, int64_t n, int64_t k, const Inputs& inputs);

// The machine's streaming bandwidth probe: a[i] = b[i] * s + c[i] over
// `count` floats per stream (3 streams), split over `threads` threads.
// Moves 3 * count * 4 bytes per run. No output.
Runner Triad(int64_t count, int threads);

// Thread counts the peers use: set (threads > 0) or report the current ones
// (the OpenMP runtime's for oneDNN, OpenBLAS's own).
int SetOneDnnThreads(int threads);
int SetOpenBlasThreads(int threads);

}  // namespace tilec::bench
