// The program a subcommand works on: a Tile source file, or an ONNX model
// (FILE.onnx) imported as one Tile program whose weights are constant
// inputs. Every subcommand that takes a program takes a model the same way;
// a model's inputs and outputs are named as in the graph (`-s input=…`,
// `--in input=x.npy`, `--out output=y.npy`), and its Tile names work too.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "frontend/onnx/import.h"
#include "tools/tilec/common.h"

namespace tilec::tools {

struct ProgramFile {
  SourceFilePtr source;
  bool model = false;
  // -s/--layout arguments, a model's ONNX names made Tile names.
  ShapeLayoutArgs args;
  // A model's graph inputs (imported shapes) and constants, by Tile name.
  std::map<std::string, lang::Shape> model_shapes;
  std::map<std::string, lang::Tensor> constants;
  // A model's input and output names: ONNX -> Tile, and back.
  std::map<std::string, std::string> tile_names, onnx_names;
  // A model's ONNX nodes ("name (OpType)") each Tile tensor comes from.
  std::map<std::string, std::vector<std::string>> origins;

  // `name` as the program calls it (a model's ONNX name made its Tile name).
  std::string TileName(const std::string& name) const;
  // `name` as the user knows it (a model's Tile name made its ONNX name).
  std::string UserName(const std::string& name) const;
  // NAME=VALUE arguments with NAME made a Tile name.
  std::vector<std::string> Rename(const std::vector<std::string>& args) const;
  // The shapes to bind: the arguments', then a model's own.
  std::map<std::string, lang::Shape> BindShapes() const;
};

// Reads FILE.tile, or imports FILE.onnx (shape arguments by ONNX name give
// the model's symbolic dimensions), and parses the -s/--layout arguments.
ProgramFile ReadProgramFile(const std::string& path, const std::vector<std::string>& shape_args,
                            const std::vector<std::string>& layout_args, const GlobalOptions& global);

// `--weights DIR` (one subcommand runs per process): a Tile program's
// constant inputs as DIR/NAME.npy, as `tilec import` writes a model's.
std::string& WeightsDir();
CLI::Option* AddWeightsOption(CLI::App* app);

// What each compiled kernel computes: the program's tensors it defines,
// those stored and those fused into it (a fused tensor belongs to the kernel
// that consumes it), as the model's ONNX nodes ("conv1 (Conv)") for a model
// and as Tile tensor names for a program. One list per kernel.
std::vector<std::vector<std::string>> KernelOrigins(const ProgramFile& file, const compiler::CompiledProgram& compiled);

// Help text for a subcommand's FILE argument.
inline constexpr std::string_view kProgramFileHelp =
    "Tile source file, or an ONNX model (FILE.onnx) imported as one Tile program";

}  // namespace tilec::tools
