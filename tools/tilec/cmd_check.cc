// `tilec check FILE -s NAME=SHAPE[:LAYOUT]... [--layout NAME=SPEC...]`: parse
// and bind a Tile program (shapes and memory layouts), print the bound program.
#include <memory>

#include "tile_lang/parser.h"
#include "tile_lang/program.h"
#include "tools/tilec/common.h"

namespace tilec::tools {
namespace {

struct CheckOptions {
  std::string file;
  std::vector<std::string> shapes;
  std::vector<std::string> layouts;
};

void RunCheck(const CheckOptions& opts, const GlobalOptions& global) {
  SourceFilePtr source = ReadSourceFile(opts.file);
  ShapeLayoutArgs args = ParseShapeLayoutArgs(opts.shapes, opts.layouts);
  lang::ast::Function f = Timed(global, "parse", [&] { return lang::Parse(source); });
  lang::Program program = Timed(global, "bind", [&] { return BindWithLayouts(f, args.shapes, args.layouts); });
  std::string text = lang::ToString(program);
  if (!text.empty() && text.back() != '\n') text += '\n';
  fmt::print("{}", text);
}

}  // namespace

Command AddCheckCommand(CLI::App& parent, const GlobalOptions& global) {
  auto opts = std::make_shared<CheckOptions>();
  CLI::App* app = parent.add_subcommand("check", "Parse a Tile program, bind its inputs to shapes and print "
                                                 "the typed program");
  app->footer(std::string(kExitCodesHelp) +
              "\n\nA tensor whose layout is not row-major is printed with it, one entry per physical dimension\n"
              "(outermost first: logical dim[/divisor]:size@stride), e.g.\n"
              "  D: f32[1, 8, 8, 4] @ nhwc(d0:1@256, d2:8@32, d3:4@8, d1:8@1; 256 elements)\n"
              "Named layouts read a rank-4 tensor's logical dimensions as N, C, H, W.\n\n"
              "Examples:\n  tilec check examples/conv_relu.tile -s D=f32[1,56,56,64] -s K=f32[3,3,64,64]\n"
              "  tilec check examples/conv_relu.tile -s 'D=f32[1,56,56,64]:order(0,3,1,2)' -s K=f32[3,3,64,64] "
              "--layout 'R=order(0,3,1,2)'");
  app->add_option("file", opts->file, "Tile source file")->required()->type_name("FILE.tile");
  AddShapeLayoutOptions(app, opts->shapes, opts->layouts);
  return {app, [opts, &global] { RunCheck(*opts, global); }};
}

}  // namespace tilec::tools
