// MACE's OpenCL image mappings (seed 000) as layouts: each is a dense tag
// (the element order of the image's linear equivalent, pixels row-major with
// 4 elements each) plus the image size in pixels (layout.h, ImageStorage).
//
// Derivation, channel-major over logical NHWC (a=n, b=h, c=w, d=c): the
// seed's image is [W * C4, N * H] with P[i, j] holding E[n=j/H, h=j%H,
// w=i%W, c=(i/W)*4+k], so the element's offset (j * width + i) * 4 + k is
//     n * (H*W*C4*4) + h * (W*C4*4) + (c/4) * (W*4) + w * 4 + c%4,
// the tag abDc4d. The others alike (C4 = ceil(C/4), …):
//     height-major  [W * C, N * H4]     n, h/4, c, w, h%4      aBdc4b
//     width-major   [W4 * C, N * H]     n, h, c, w/4, w%4      abdC4c
//     conv filter   [I, O4 * H * W]     o/4, h, w, i, o%4      Acdb4a   (OIHW)
//     dw filter     [H * W * M, I4]     m, i/4, h, w, i%4      aBcd4b   (MIHW, M = 1)
//     argument      [W4, 1]             w/4, w%4               A4a      (W)
// The 4-blocks pad with zeros like every blocked tail (docs/layouts.md).
#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "tile_lang/layout.h"
#include "tile_lang/layout_spec.h"

namespace tilec::lang {

const std::vector<ImageMapping>& ImageMappings() {
  static const std::vector<ImageMapping> mappings = {
      {"image_channel_major", "IN_OUT_CHANNEL", "Channel-Major Input/Output", "nhwc", "abDc4d",
       "[W * (C+3)/4, N * H]", "P[i, j] = {E[n, h, w, c] | (n=j/H, h=j%H, w=i%W, c=[i/W * 4 + k])}"},
      {"image_height_major", "IN_OUT_HEIGHT", "Height-Major Input/Output", "nhwc", "aBdc4b",
       "[W * C, N * (H+3)/4]", "P[i, j] = {E[n, h, w, c] | (n=j/H4, h=[j%H4 * 4 + k], w=i%W, c=i/W)}, H4=(H+3)/4"},
      {"image_width_major", "IN_OUT_WIDTH", "Width-Major Input/Output", "nhwc", "abdC4c",
       "[(W+3)/4 * C, N * H]", "P[i, j] = {E[n, h, w, c] | (n=j/H, h=j%H, w=[i%W4 * 4 + k], c=i/W4)}, W4=(W+3)/4"},
      {"image_conv_filter", "CONV2D_FILTER", "Convolution Filter", "oihw", "Acdb4a", "[I, (O+3)/4 * W * H]",
       "P[m, n] = {E[o, i, h, w] | (o=[n/HW*4+k], i=m, h=T/W, w=T%W)}, HW=H*W, T=n%HW"},
      {"image_dw_filter", "DW_CONV2D_FILTER", "Depthwise Convlution Filter", "mihw", "aBcd4b", "[H * W * M, (I+3)/4]",
       "P[m, n] = {E[0, i, h, w] | (i=[n*4+k], h=m/W, w=m%W)}"},
      {"image_argument", "ARGUMENT", "1-D Argument", "w", "A4a", "[(W+3)/4, 1]", "P[i, 0] = {E[w] | w=i*4+k}"},
  };
  return mappings;
}

const ImageMapping* FindImageMapping(std::string_view spec) {
  for (const ImageMapping& m : ImageMappings())
    if (m.name == spec || m.mace_name == spec) return &m;
  return nullptr;
}

namespace layout_internal {

std::optional<Layout> ParseImageLayout(std::string_view spec, const SpecContext& ctx) {
  const ImageMapping* m = FindImageMapping(spec);
  if (!m) return std::nullopt;
  int rank = static_cast<int>(m->letters.size());
  std::string order(m->letters);
  std::transform(order.begin(), order.end(), order.begin(), [](char c) { return std::toupper(c); });
  if (ctx.rank() != rank) {
    ctx.Fail(fmt::format("the MACE image {} needs a rank-{} tensor (logical order {}), not rank {}", m->name,
                         rank, fmt::join(std::vector<char>(order.begin(), order.end()), ", "), ctx.rank()));
  }
  const std::vector<int64_t>& d = ctx.dims();
  auto div4 = [](int64_t x) { return x / 4 + (x % 4 != 0); };
  int64_t width = 0, height = 0;
  std::string_view name = m->name;
  if (name == "image_channel_major") {
    width = ctx.Mul(d[2], div4(d[3]));
    height = ctx.Mul(d[0], d[1]);
  } else if (name == "image_height_major") {
    width = ctx.Mul(d[2], d[3]);
    height = ctx.Mul(d[0], div4(d[1]));
  } else if (name == "image_width_major") {
    width = ctx.Mul(div4(d[2]), d[3]);
    height = ctx.Mul(d[0], d[1]);
  } else if (name == "image_conv_filter") {
    width = d[1];
    height = ctx.Mul(ctx.Mul(div4(d[0]), d[2]), d[3]);
  } else if (name == "image_dw_filter") {
    if (d[0] != 1)
      ctx.Fail(fmt::format("the MACE depthwise filter image supports multiplier M = 1 only (seed 000), not M = {}",
                           d[0]));
    width = ctx.Mul(ctx.Mul(d[2], d[3]), d[0]);
    height = div4(d[1]);
  } else {  // image_argument
    width = div4(d[0]);
    height = 1;
  }
  std::vector<TagPart> parts = ParseTag(m->tag, ctx, fmt::format("it is the tag {}, which", m->tag));
  Layout l = BuildTagLayout(std::string(spec), parts, ctx);
  // The tag's linear order is exactly the image's pixels (header comment).
  if (l.elements != 0 && l.elements != ctx.Mul(ctx.Mul(width, height), 4))
    ctx.Fail(fmt::format("internal: image [{}, {}] does not hold the {} elements", width, height, l.elements));
  l.image = ImageStorage{width, height};
  return l;
}

}  // namespace layout_internal
}  // namespace tilec::lang
