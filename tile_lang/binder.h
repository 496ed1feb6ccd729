// Bind: ast::Function + input shapes -> Program (typed, shapes bound).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>

#include "tile_lang/ast.h"
#include "tile_lang/program.h"
#include "tile_lang/types.h"

namespace tilec::lang {

// Pre: `f` came from Parse (spans point into f.source).
// `inputs` gives a shape for every input of `f` (a rank-0 shape for scalars).
// Post: a Program whose every op is typed and whose contractions carry
// index bounds; or a UserError at the offending source span (unknown name,
// rank or size mismatch, non-affine index, unbounded index, reassignment,
// missing/extra input shape, …).
Program Bind(const ast::Function& f, const std::map<std::string, Shape>& inputs);

// As above, then gives the tensors named in `layouts` (inputs, outputs, or
// intermediates that survive dead-op removal) the layout its spec describes
// (see ParseLayout), parsed against that tensor's bound dimensions. UserError
// for an unknown tensor name (listing the tensors) or a bad spec.
Program Bind(const ast::Function& f, const std::map<std::string, Shape>& inputs,
             const std::map<std::string, std::string>& layouts);

// Parses a shape spec "f32[32, 224, 224, 64]" (also "f32[]"); UserError if malformed.
Shape ParseShape(std::string_view spec);

// Parses "f32[1, 64, 56, 56]:nhwc": a shape, then optionally ':' and a layout
// spec, which is checked against the shape (ParseLayout). UserError if either
// part is malformed.
std::pair<Shape, std::optional<std::string>> ParseShapeAndLayout(std::string_view spec);

}  // namespace tilec::lang
