// `tilec check FILE -s NAME=SHAPE[:LAYOUT]... [--layout NAME=SPEC...]`: parse
// and bind a Tile program (shapes and memory layouts), print the bound program.
#include <memory>

#include "tile_lang/parser.h"
#include "tile_lang/program.h"
#include "tools/tilec/common.h"
#include "tools/tilec/program_file.h"
#include "tools/tilec/json.h"

namespace tilec::tools {
namespace {

struct CheckOptions {
  std::string file;
  std::vector<std::string> shapes;
  std::vector<std::string> layouts;
  bool json = false;
};

std::string_view RoleName(lang::TensorRole role) {
  switch (role) {
    case lang::TensorRole::Input: return "input";
    case lang::TensorRole::Output: return "output";
    case lang::TensorRole::Temporary: return "temporary";
  }
  return "temporary";
}

// Every tensor of the bound program: inputs and outputs in signature order, then the temporaries.
std::string ProgramJson(const std::string& file, const lang::Program& program) {
  std::vector<std::string> names = program.inputs;
  names.insert(names.end(), program.outputs.begin(), program.outputs.end());
  for (const auto& [name, decl] : program.tensors)
    if (decl.role == lang::TensorRole::Temporary) names.push_back(name);
  Json tensors = Json::Array();
  for (const std::string& name : names) {
    const lang::TensorDecl& t = program.Tensor(name);
    tensors.Push(Json::Object()
                     .Set("name", name)
                     .Set("role", RoleName(t.role))
                     .Set("dtype", lang::Name(t.shape.dtype))
                     .Set("shape", Json::ArrayOf(t.shape.dims))
                     .Set("layout", t.layout.name));
  }
  return Json::Object()
      .Set("file", file)
      .Set("inputs", Json::ArrayOf(program.inputs))
      .Set("outputs", Json::ArrayOf(program.outputs))
      .Set("tensors", std::move(tensors))
      .Dump(2);
}

void RunCheck(const CheckOptions& opts, const GlobalOptions& global) {
  ProgramFile file = ReadProgramFile(opts.file, opts.shapes, opts.layouts, global);
  lang::ast::Function f = Timed(global, "parse", [&] { return ParseSource(file.source); });
  lang::Program program =
      Timed(global, "bind", [&] { return BindWithLayouts(f, file.BindShapes(), file.args.layouts); });
  std::string text = opts.json ? ProgramJson(opts.file, program) : lang::ToString(program);
  if (!text.empty() && text.back() != '\n') text += '\n';
  fmt::print("{}", text);
}

}  // namespace

Command AddCheckCommand(CLI::App& parent, const GlobalOptions& global) {
  auto opts = std::make_shared<CheckOptions>();
  CLI::App* app = parent.add_subcommand("check", "Parse a Tile program, bind its inputs to shapes and print "
                                                 "the typed program");
  app->footer(Footer(
              "A tensor whose layout is not row-major is printed with it, one entry per physical dimension\n"
              "(outermost first: logical dim[/divisor]:size@stride), e.g.\n"
              "  D: f32[1, 8, 8, 4] @ nhwc(d0:1@256, d2:8@32, d3:4@8, d1:8@1; 256 elements)\n"
              "Named layouts read a rank-4 tensor's logical dimensions as N, C, H, W.\n\n"
              "Examples:\n  tilec check examples/conv_relu.tile -s D=f32[1,56,56,64] -s K=f32[3,3,64,64]\n"
              "  tilec check examples/conv_relu.tile -s 'D=f32[1,56,56,64]:order(0,3,1,2)' -s K=f32[3,3,64,64] "
              "--layout 'R=order(0,3,1,2)'\n"
              "  tilec check examples/conv_relu.tile -s D=f32[1,56,56,64] -s K=f32[3,3,64,64] --json"));
  app->add_option("file", opts->file, std::string(kProgramFileHelp))->required()->type_name("FILE");
  AddWeightsOption(app);
  AddShapeLayoutOptions(app, opts->shapes, opts->layouts);
  AddJsonFlag(app, opts->json, "file, inputs, outputs, tensors [{name, role, dtype, shape, layout}]");
  return {app, [opts, &global] { RunCheck(*opts, global); }};
}

}  // namespace tilec::tools
