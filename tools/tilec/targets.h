// The targets `tilec run --target` can execute a program on.
#pragma once

#include <map>
#include <span>
#include <string>
#include <string_view>

#include "tile_lang/program.h"
#include "tile_lang/tensor.h"

namespace tilec::tools {

// Runs a bound program on inputs of exactly its bound shapes; returns every output.
using TargetFn = std::map<std::string, lang::Tensor> (*)(const lang::Program&,
                                                        const std::map<std::string, lang::Tensor>&);

struct Target {
  std::string_view name;         // the --target value
  std::string_view description;  // shown in --help
  TargetFn run;
};

// Every target, in the order --help lists them.
std::span<const Target> Targets();

// The target called `name`; UserError "unknown target 'x' (available: ref)" otherwise.
const Target& FindTarget(std::string_view name);

}  // namespace tilec::tools
