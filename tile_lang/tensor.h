// Host tensors: a logical shape and its elements, dense and row-major.
// The reference evaluator, .npy I/O and tests exchange data in this form;
// physical layouts (strides, blocking, images) are applied by the runtime when
// data moves to a device (see layout.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "tile_lang/types.h"

namespace tilec::lang {

class Tensor {
 public:
  Tensor() = default;
  // Zero-filled tensor of the given shape. Throws UserError if the byte size overflows.
  explicit Tensor(Shape shape);
  // A tensor of the given shape holding a copy of the ElementCount x ByteSize
  // bytes at `bytes` (which must hold that many), written once rather than
  // zeroed first: weights of a model are read this way.
  Tensor(Shape shape, const void* bytes);

  const Shape& shape() const { return shape_; }
  DataType dtype() const { return shape_.dtype; }
  int64_t size() const { return count_; }  // element count
  size_t bytes() const { return data_.size(); }
  std::byte* data() { return data_.data(); }
  const std::byte* data() const { return data_.data(); }

  template <typename T>
  T* as() { return reinterpret_cast<T*>(data_.data()); }
  template <typename T>
  const T* as() const { return reinterpret_cast<const T*>(data_.data()); }

  // Element i (row-major flat index) converted to/from double; for tests, the
  // CLI and printing. Integer values beyond 2^53 lose precision here.
  double GetDouble(int64_t i) const;
  void SetDouble(int64_t i, double v);
  // Exact access for integer types (bool reads 0/1; floats are truncated).
  int64_t GetInt(int64_t i) const;
  void SetInt(int64_t i, int64_t v);

 private:
  Shape shape_;
  int64_t count_ = 0;
  std::vector<std::byte> data_;
};

// Fills with deterministic pseudo-random values for `seed`: floats uniform in
// [-1, 1), signed ints in [-8, 8], unsigned ints in [0, 16], bools 0/1.
void FillRandom(Tensor& t, uint64_t seed);

// IEEE half <-> float (round to nearest even), for f16 storage.
float HalfToFloat(uint16_t h);
uint16_t FloatToHalf(float f);

}  // namespace tilec::lang
