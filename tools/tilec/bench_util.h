// Benchmark measurement shared by `tilec bench` and bench/bench_peers: the
// work one execution of a bound program does (FLOPs and bytes, by one
// documented convention), timing statistics, and the default device.
#pragma once

#include <string>
#include <vector>

#include "tile_lang/program.h"

namespace tilec::tools {

// The work of one execution, by the convention oneDNN's benchdnn and BLAS
// use, so GFLOP/s figures compare across libraries:
//  * a contraction visits its full index box: the product of the ranges of
//    all its index variables (the bounds the binder derives), taps that fall
//    into padding included. A sum of products (`+(A * B)`) counts 2 FLOPs
//    per point (one multiply-accumulate); every other contraction counts 1;
//  * an elementwise operation counts 1 FLOP per output element (so ReLU,
//    bound as a compare and a select, counts 2);
//  * special operations (gather, scatter, reshape, shape, prng) count 0;
//  * bytes are the logical sizes of the program's inputs and outputs, each
//    moved once (temporaries, padding of blocked layouts and re-reads of
//    inputs are not counted): what a perfect kernel must move.
struct Work {
  double flops = 0;
  double bytes = 0;
};
Work CountWork(const lang::Program& program);

// Statistics of wall times in milliseconds.
struct TimeStats {
  int runs = 0;
  double median_ms = 0;  // the mean of the two middle values for an even count
  double min_ms = 0;
  double mean_ms = 0;
  double max_ms = 0;
};
// Pre: `ms` is not empty.
TimeStats Summarize(std::vector<double> ms);

// The device benchmarks use unless told otherwise: "llvm" (the host CPU
// through LLVM) when this build lists an llvm device, otherwise "opencl".
std::string DefaultDeviceId();

}  // namespace tilec::tools
