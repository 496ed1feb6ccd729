#include "runtime/host_view.h"

#include <algorithm>
#include <cstring>

#include "support/error.h"

namespace tilec::runtime {
namespace {

// Calls fn(row_major_index, element_offset) for every element of the view.
template <typename F>
void ForEachElement(const HostView& view, F&& fn) {
  const std::vector<int64_t>& dims = view.shape.dims;
  int64_t count = view.shape.ElementCount();
  if (count == 0) return;
  std::vector<int64_t> index(dims.size(), 0);
  int64_t offset = 0;
  for (int64_t i = 0; i < count; ++i) {
    fn(i, offset);
    for (int d = static_cast<int>(dims.size()) - 1; d >= 0; --d) {
      if (++index[d] < dims[d]) {
        offset += view.strides[d];
        break;
      }
      offset -= view.strides[d] * (dims[d] - 1);
      index[d] = 0;
    }
  }
}

}  // namespace

void CheckView(const HostView& view, const lang::TensorDecl& tensor, std::string_view kind,
               std::string_view name, bool writable) {
  auto role = [&] { return fmt::format("{} '{}'", kind, name); };
  const lang::Shape& want = tensor.shape;
  if (view.shape.dtype != want.dtype)
    TILEC_USER_ERROR("{} has element type {} but the program was compiled for {}", role(),
                     lang::Name(view.shape.dtype), lang::Name(want.dtype));
  if (view.shape.dims != want.dims)
    TILEC_USER_ERROR("{} has shape {} but the program was compiled for {}", role(),
                     lang::ToString(view.shape), lang::ToString(want));
  if (view.device_memory) {
    if (!view.strides.empty())
      throw UsageError(fmt::format("{} is device memory (a cl_mem): it holds the tensor in the "
                                   "compiled layout and takes no strides",
                                   role()));
    return;
  }
  int64_t esize = lang::ByteSize(want.dtype);
  int64_t needed = 0;  // elements
  if (view.strides.empty()) {
    needed = tensor.layout.elements;
  } else {
    if (view.strides.size() != want.dims.size())
      TILEC_USER_ERROR("{} has {} strides for {} dimensions", role(), view.strides.size(),
                       want.dims.size());
    int64_t last = 0;
    // An empty tensor has no elements to alias (NumPy gives [N, 0] row-major
    // strides 0).
    bool empty = std::find(want.dims.begin(), want.dims.end(), 0) != want.dims.end();
    for (size_t d = 0; d < want.dims.size(); ++d) {
      int64_t s = view.strides[d], n = want.dims[d];
      if (s < 0) TILEC_USER_ERROR("{} has a negative stride {} in dimension {}", role(), s, d);
      if (writable && s == 0 && n > 1 && !empty)
        TILEC_USER_ERROR("{} has stride 0 in dimension {} of extent {}: output elements would alias",
                         role(), d, n);
      if (n > 0 && s > 0 && (n - 1) > (INT64_MAX - last) / s)
        TILEC_USER_ERROR("{}: strides overflow", role());
      if (n > 0) last += (n - 1) * s;
    }
    needed = empty ? 0 : last + 1;
  }
  if (needed > 0 && view.data == nullptr) TILEC_USER_ERROR("{} has a null data pointer", role());
  if (needed > 0 && static_cast<uint64_t>(needed) > view.bytes / static_cast<uint64_t>(esize))
    TILEC_USER_ERROR("{} needs {} bytes but {} are given", role(), needed * esize, view.bytes);
}

std::optional<std::vector<int64_t>> PlainStrides(const lang::Layout& layout, int rank) {
  if (static_cast<int>(layout.phys.size()) != rank) return std::nullopt;
  std::vector<int64_t> strides(rank, -1);
  for (const lang::PhysicalDim& p : layout.phys) {
    if (p.divisor != 1 || p.dim < 0 || p.dim >= rank || strides[p.dim] != -1) return std::nullopt;
    strides[p.dim] = p.stride;
  }
  return strides;
}

bool MatchesLayout(const HostView& view, const lang::Layout& layout) {
  if (view.strides.empty()) return true;
  std::optional<std::vector<int64_t>> plain = PlainStrides(layout, view.shape.rank());
  if (!plain) return false;
  for (int d = 0; d < view.shape.rank(); ++d)
    if (view.shape.dims[d] > 1 && (*plain)[d] != view.strides[d]) return false;
  return true;
}

std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (int d = static_cast<int>(dims.size()) - 2; d >= 0; --d) strides[d] = strides[d + 1] * dims[d + 1];
  return strides;
}

lang::Tensor Gather(const HostView& view) {
  TILEC_CHECK(view.strides.size() == view.shape.dims.size(), "gather without strides");
  lang::Tensor t(view.shape);
  size_t esize = lang::ByteSize(view.shape.dtype);
  const auto* src = static_cast<const std::byte*>(view.data);
  ForEachElement(view, [&](int64_t i, int64_t offset) {
    std::memcpy(t.data() + i * esize, src + offset * esize, esize);
  });
  return t;
}

void Scatter(const lang::Tensor& t, const HostView& view) {
  TILEC_CHECK(view.strides.size() == view.shape.dims.size(), "scatter without strides");
  TILEC_CHECK(t.shape() == view.shape, "scatter of {} into {}", lang::ToString(t.shape()),
              lang::ToString(view.shape));
  size_t esize = lang::ByteSize(view.shape.dtype);
  auto* dst = static_cast<std::byte*>(view.data);
  ForEachElement(view, [&](int64_t i, int64_t offset) {
    std::memcpy(dst + offset * esize, t.data() + i * esize, esize);
  });
}

HostView ViewOf(const lang::Tensor& t) {
  return HostView{const_cast<std::byte*>(t.data()), t.bytes(), t.shape(), RowMajorStrides(t.shape().dims)};
}

}  // namespace tilec::runtime
