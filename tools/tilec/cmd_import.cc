// `tilec import MODEL.onnx [-o MODEL.tile] [--weights DIR] [-s NAME=SHAPE]`:
// writes an ONNX model as one readable Tile program and its weights as
// .npy files; `--ops` lists the ONNX ops the importer converts.
#include <filesystem>
#include <fstream>

#include "frontend/onnx/import.h"
#include "runtime/npy.h"
#include "tools/tilec/common.h"
#include "tools/tilec/program_file.h"

namespace tilec::tools {
namespace {

struct ImportCliOptions {
  std::string file;
  std::string output;  // -o: the .tile file (stdout without it)
  std::vector<std::string> shapes;
  bool ops = false;
};

void PrintOps() {
  std::map<std::string, std::vector<int>> ops;
  for (const auto& op : onnx_import::SupportedOps()) ops[op.op].push_back(op.since);
  fmt::print("| op | converter versions (opset) |\n|---|---|\n");
  for (const auto& [op, versions] : ops) fmt::print("| {} | {} |\n", op, fmt::join(versions, ", "));
}

void RunImport(const ImportCliOptions& o, const GlobalOptions& global) {
  if (o.ops) return PrintOps();
  if (o.file.empty()) throw CLI::ValidationError("MODEL", "a model is required (or --ops)");
  if (!onnx_import::IsModelPath(o.file)) TILEC_USER_ERROR("'{}' is not an ONNX model (FILE.onnx)", o.file);
  onnx_import::ImportOptions options;
  options.shapes = ParseShapeLayoutArgs(o.shapes).shapes;
  onnx_import::ImportedModel m = Timed(global, "import", [&] { return onnx_import::ImportFile(o.file, options); });
  namespace fs = std::filesystem;
  std::string weights = WeightsDir();
  if (weights.empty() && !o.output.empty()) weights = fs::path(o.output).replace_extension(".weights").string();
  std::string header;
  if (!m.constants.empty()) {
    header = weights.empty()
                 ? fmt::format("// {} constant inputs (the weights) are not written: give -o or --weights.\n",
                               m.constants.size())
                 : fmt::format("// Run with its weights: tilec run {} --weights {} --in NAME=FILE.npy …\n",
                               o.output.empty() ? "FILE.tile" : o.output, weights);
  }
  std::string text = header + m.source;
  if (!weights.empty() && !m.constants.empty()) {
    std::error_code ec;
    fs::create_directories(weights, ec);
    if (ec) TILEC_USER_ERROR("--weights {}: cannot create the folder: {}", weights, ec.message());
    for (const auto& [name, t] : m.constants) runtime::WriteNpy((fs::path(weights) / (name + ".npy")).string(), t);
  }
  if (o.output.empty()) {
    fmt::print("{}", text);
  } else {
    std::ofstream out(o.output);
    out << text;
    if (!out) TILEC_USER_ERROR("-o {}: cannot write the file", o.output);
  }
  size_t bytes = 0;
  for (const auto& [name, t] : m.constants) bytes += t.bytes();
  fmt::print(stderr, "{}: {} inputs, {} outputs, {} constants ({:.1f} MB{}), {} nodes folded at import, {} "
                     "BatchNormalizations folded into Conv weights\n",
             o.file, m.inputs.size(), m.outputs.size(), m.constants.size(), bytes / 1e6,
             weights.empty() ? ", not written" : " in " + weights, m.folded_nodes, m.folded_batch_norms);
}

}  // namespace

Command AddImportCommand(CLI::App& parent, const GlobalOptions& global) {
  auto o = std::make_shared<ImportCliOptions>();
  CLI::App* app = parent.add_subcommand("import", "Write an ONNX model as one Tile program and its weights as .npy files");
  app->footer(Footer(
      "Every node of the model becomes Tile statements (see docs/onnx.md for the ops); the\n"
      "initializers become constant inputs, written as NAME.npy into the --weights folder\n"
      "(default: the -o file's name with .weights). Every node that cannot be converted is\n"
      "listed in one error. The other subcommands take the model itself too (tilec run MODEL.onnx).\n\n"
      "Examples:\n"
      "  tilec import resnet18.onnx -o resnet18.tile\n"
      "  tilec run resnet18.tile --weights resnet18.weights --in input=x.npy\n"
      "  tilec import model.onnx -s input=f32[8,3,224,224]     (a symbolic batch size)\n"
      "  tilec import --ops"));
  app->add_option("model", o->file, "ONNX model")->type_name("MODEL.onnx");
  app->add_option("-o,--output", o->output, "The Tile program's file (printed without it)")->type_name("FILE.tile");
  AddWeightsOption(app);
  app->add_option("-s,--shape", o->shapes, "Shape of a model input whose dimensions the model leaves symbolic")
      ->check(NameShapeLayoutValidator())
      ->type_name("NAME=TYPE[DIMS]")
      ->allow_extra_args(false);
  app->add_flag("--ops", o->ops, "List the ONNX ops the importer converts, with their versions (Markdown)");
  return {app, [o, &global] { RunImport(*o, global); }};
}

}  // namespace tilec::tools
