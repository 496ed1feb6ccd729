#include "tools/tilec/program_file.h"

#include <algorithm>
#include <filesystem>

#include "runtime/npy.h"

namespace tilec::tools {

std::string ProgramFile::TileName(const std::string& name) const {
  auto it = tile_names.find(name);
  return it == tile_names.end() ? name : it->second;
}

std::string ProgramFile::UserName(const std::string& name) const {
  auto it = onnx_names.find(name);
  return it == onnx_names.end() ? name : it->second;
}

std::vector<std::string> ProgramFile::Rename(const std::vector<std::string>& args) const {
  if (!model) return args;
  std::vector<std::string> out;
  for (const std::string& a : args) {
    size_t eq = a.find('=');
    out.push_back(eq == std::string::npos ? a : TileName(a.substr(0, eq)) + a.substr(eq));
  }
  return out;
}

std::map<std::string, lang::Shape> ProgramFile::BindShapes() const {
  std::map<std::string, lang::Shape> shapes = args.shapes;
  for (const auto& [name, shape] : model_shapes) shapes.emplace(name, shape);
  return shapes;
}

std::string& WeightsDir() {
  static std::string dir;
  return dir;
}

CLI::Option* AddWeightsOption(CLI::App* app) {
  return app->add_option("--weights", WeightsDir(),
                         "A folder of constant inputs, NAME.npy each (what `tilec import` writes for a model's "
                         "weights): they are given to the program and marked constant")
      ->type_name("DIR");
}

namespace {

// The constants of --weights DIR: every NAME.npy in it.
void ReadWeights(ProgramFile& file, const GlobalOptions& global) {
  const std::string& dir = WeightsDir();
  if (dir.empty()) return;
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) TILEC_USER_ERROR("--weights {}: not a folder", dir);
  Timed(global, "read weights", [&] {
    for (const auto& e : fs::directory_iterator(dir)) {
      if (e.path().extension() != ".npy") continue;
      std::string name = e.path().stem().string();
      if (file.constants.count(name)) continue;  // the model's own
      lang::Tensor t = runtime::ReadNpy(e.path().string());
      file.model_shapes[name] = t.shape();
      file.constants[name] = std::move(t);
    }
  });
}

}  // namespace

std::vector<std::vector<std::string>> KernelOrigins(const ProgramFile& file, const compiler::CompiledProgram& compiled) {
  const lang::Program& p = compiled.program;
  std::map<std::string, size_t> kernel_of;  // tensor -> kernel that defines it
  for (size_t k = 0; k < compiled.kernels.size(); ++k)
    for (const std::string& out : compiled.kernels[k].spec.outputs) kernel_of.emplace(out, k);
  std::map<std::string, std::vector<size_t>> readers;  // tensor -> ops that read it
  for (size_t i = 0; i < p.ops.size(); ++i)
    for (const std::string& t : lang::Reads(p.ops[i])) readers[t].push_back(i);
  // Backwards: a tensor no kernel stores was fused into its reader's kernel.
  std::vector<std::vector<std::string>> tensors(compiled.kernels.size());
  for (size_t i = p.ops.size(); i-- > 0;) {
    for (const std::string& t : lang::Writes(p.ops[i])) {
      auto it = kernel_of.find(t);
      if (it == kernel_of.end())
        for (size_t r : readers[t]) {
          for (const std::string& rt : lang::Writes(p.ops[r]))
            if (auto k = kernel_of.find(rt); k != kernel_of.end()) {
              it = kernel_of.emplace(t, k->second).first;
              break;
            }
          if (it != kernel_of.end()) break;
        }
      if (it != kernel_of.end()) tensors[it->second].push_back(t);
    }
  }
  std::vector<std::vector<std::string>> out(compiled.kernels.size());
  for (size_t k = 0; k < tensors.size(); ++k) {
    std::vector<std::string>& names = out[k];
    // A kernel the compiler added (a relayout): what it writes.
    if (tensors[k].empty())
      for (const std::string& t : compiled.kernels[k].spec.outputs) names.push_back(fmt::format("{} (compiler's copy)", t));
    for (auto t = tensors[k].rbegin(); t != tensors[k].rend(); ++t) {
      auto o = file.origins.find(*t);
      if (!file.model) {
        names.push_back(*t);
      } else if (o != file.origins.end()) {
        for (const std::string& n : o->second)
          if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
      }
    }
  }
  return out;
}

ProgramFile ReadProgramFile(const std::string& path, const std::vector<std::string>& shape_args,
                            const std::vector<std::string>& layout_args, const GlobalOptions& global) {
  ProgramFile file;
  if (!onnx_import::IsModelPath(path)) {
    file.source = ReadSourceFile(path);
    file.args = ParseShapeLayoutArgs(shape_args, layout_args);
    ReadWeights(file, global);
    return file;
  }
  file.model = true;
  onnx_import::ImportOptions options;
  ShapeLayoutArgs given = ParseShapeLayoutArgs(shape_args, {});
  options.shapes = given.shapes;
  onnx_import::ImportedModel m = Timed(global, "import", [&] { return onnx_import::ImportFile(path, options); });
  for (const auto& t : m.inputs) {
    file.tile_names[t.onnx_name] = t.tile_name;
    file.onnx_names[t.tile_name] = t.onnx_name;
    file.model_shapes[t.tile_name] = t.shape;
  }
  for (const auto& t : m.outputs) {
    file.tile_names[t.onnx_name] = t.tile_name;
    file.onnx_names[t.tile_name] = t.onnx_name;
  }
  for (auto& [name, t] : m.constants) file.model_shapes[name] = t.shape();
  file.origins = std::move(m.origins);
  file.constants = std::move(m.constants);
  file.source = MakeSource(path + " (as Tile)", std::move(m.source));
  file.args = ParseShapeLayoutArgs(file.Rename(shape_args), file.Rename(layout_args));
  ReadWeights(file, global);
  return file;
}

}  // namespace tilec::tools
