// Times the reference evaluator on the seed's 3x3 "same" convolution
//   O[n, x, y, co : N, X, Y, CO] = +(D[n, x+i-1, y+j-1, ci] * K[i, j, co, ci])
// with D f32[1, 56, 56, 64] and K f32[3, 3, 64, 64] (115.6M multiply-adds).
// Not a test: a timing program. Build against a tilec build directory $B
// (one line):
//   c++ -O2 -std=c++20 -I. bench/eval_seed_conv.cc -o /tmp/eval_seed_conv
//       $B/tile_lang/libtilec_lang.a $B/support/libtilec_support.a -lfmt
// Reports the best wall time of N runs (argument, default 3); on a loaded
// machine prefer `/usr/bin/time` user time.
#include <chrono>
#include <cstdio>

#include "tile_lang/evaluator.h"

using namespace tilec::lang;

int main(int argc, char** argv) {
  const int runs = argc > 1 ? std::atoi(argv[1]) : 3;
  Program p;
  p.source = tilec::MakeSource("seed_conv.tile", "");
  p.inputs = {"D", "K"};
  p.outputs = {"O"};
  p.tensors["D"] = {"D", Shape{DataType::F32, {1, 56, 56, 64}}, {}, TensorRole::Input, {}};
  p.tensors["K"] = {"K", Shape{DataType::F32, {3, 3, 64, 64}}, {}, TensorRole::Input, {}};
  p.tensors["O"] = {"O", Shape{DataType::F32, {1, 56, 56, 64}}, {}, TensorRole::Output, {}};
  auto var = [](const char* v, int64_t c = 0) {
    Polynomial poly;
    poly.terms[v] = 1;
    poly.constant = c;
    return poly;
  };
  auto sum = [](Polynomial a, const char* v) {
    a.terms[v] = 1;
    return a;
  };
  ContractionOp op;
  op.output = "O";
  op.output_index = {var("n"), var("x"), var("y"), var("co")};
  op.agg = tilec::lang::ast::AggOp::Sum;
  op.comb = tilec::lang::ast::CombOp::Mul;
  op.inputs = {{"D", {var("n"), sum(var("x", -1), "i"), sum(var("y", -1), "j"), var("ci")}},
               {"K", {var("i"), var("j"), var("co"), var("ci")}}};
  op.index_vars = {"ci", "co", "i", "j", "n", "x", "y"};
  op.bounds = {{0, 63}, {0, 63}, {0, 2}, {0, 2}, {0, 0}, {0, 55}, {0, 55}};
  p.ops.push_back(op);

  Tensor d(p.tensors["D"].shape), k(p.tensors["K"].shape);
  FillRandom(d, 1);
  FillRandom(k, 2);
  double best = 1e30, checksum = 0;
  for (int r = 0; r < runs; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    auto out = Evaluate(p, {{"D", d}, {"K", k}});
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::min(best, s);
    checksum = 0;
    const Tensor& o = out.at("O");
    for (int64_t i = 0; i < o.size(); ++i) checksum += o.as<float>()[i];
  }
  std::printf("seed conv: best of %d runs %.3f s (checksum %.6f)\n", runs, best, checksum);
  return 0;
}
