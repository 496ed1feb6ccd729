// Tilec from C++: the seed's 3x3 convolution + ReLU on NHWC data the program
// owns, on every device, checked against a plain loop. Exits 1 on a mismatch.
#include <tilec/tilec.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

namespace {

const char* kConvRelu = R"(function (D[N, X, Y, CI], K[I, J, CO, CI]) -> (R) {
  O[n, x, y, co : N, X, Y, CO] = +(D[n, x + i - 1, y + j - 1, ci] * K[i, j, co, ci]);
  R = (O > 0 ? O : 0);
})";

constexpr int64_t N = 1, X = 10, Y = 9, CI = 5, CO = 7;

float Reference(const std::vector<float>& d, const std::vector<float>& k, int64_t x, int64_t y, int64_t co) {
  float sum = 0;
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 3; ++j)
      for (int64_t ci = 0; ci < CI; ++ci) {
        int64_t xx = x + i - 1, yy = y + j - 1;
        if (xx < 0 || xx >= X || yy < 0 || yy >= Y) continue;
        sum += d[(xx * Y + yy) * CI + ci] * k[((i * 3 + j) * CO + co) * CI + ci];
      }
  return sum > 0 ? sum : 0;
}

}  // namespace

int main() {
  std::vector<int64_t> d_dims = {N, X, Y, CI}, k_dims = {3, 3, CO, CI}, r_dims = {N, X, Y, CO};
  std::vector<float> d(N * X * Y * CI), k(3 * 3 * CO * CI), r(N * X * Y * CO);
  for (size_t i = 0; i < d.size(); ++i) d[i] = std::sin(0.1f * static_cast<float>(i));
  for (size_t i = 0; i < k.size(); ++i) k[i] = std::cos(0.3f * static_cast<float>(i));
  try {
    for (const std::string& id : tilec::DeviceIds()) {
      tilec::Device device(id);
      tilec::Program conv =
          device.Compile(kConvRelu, {{"D", TILEC_F32, d_dims}, {"K", TILEC_F32, k_dims}}, {}, "conv_relu.tile");
      conv.Run({tilec::Tensor(std::span(d), d_dims), tilec::Tensor(std::span(k), k_dims)},
               {tilec::Tensor(std::span(r), r_dims)});
      for (int64_t x = 0; x < X; ++x)
        for (int64_t y = 0; y < Y; ++y)
          for (int64_t co = 0; co < CO; ++co) {
            float want = Reference(d, k, x, y, co), got = r[(x * Y + y) * CO + co];
            if (std::fabs(want - got) > 1e-4f * std::max(1.0f, std::fabs(want))) {
              std::fprintf(stderr, "%s: R[0,%ld,%ld,%ld] = %g, expected %g\n", id.c_str(), long(x),
                           long(y), long(co), got, want);
              return 1;
            }
          }
      std::printf("%s: conv+ReLU ok (%s)\n", id.c_str(), device.Description().c_str());
    }
  } catch (const tilec::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
