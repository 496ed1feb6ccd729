// `tilec check FILE -s NAME=SHAPE...`: parse and bind a Tile program, print
// the bound program.
#include <memory>

#include "tile_lang/binder.h"
#include "tile_lang/parser.h"
#include "tile_lang/program.h"
#include "tools/tilec/common.h"

namespace tilec::tools {
namespace {

struct CheckOptions {
  std::string file;
  std::vector<std::string> shapes;
};

void RunCheck(const CheckOptions& opts, const GlobalOptions& global) {
  SourceFilePtr source = ReadSourceFile(opts.file);
  std::map<std::string, lang::Shape> shapes = ParseShapeArgs(opts.shapes, "-s");
  lang::ast::Function f = Timed(global, "parse", [&] { return lang::Parse(source); });
  lang::Program program = Timed(global, "bind", [&] { return lang::Bind(f, shapes); });
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
              "\n\nExample:\n  tilec check examples/conv_relu.tile -s D=f32[1,56,56,64] -s K=f32[3,3,64,64]");
  app->add_option("file", opts->file, "Tile source file")->required()->type_name("FILE.tile");
  app->add_option("-s,--shape", opts->shapes, "Shape of an input, e.g. -s A=f32[32,224,224,64] (repeat per input)")
      ->check(NameShapeValidator())
      ->type_name("NAME=TYPE[DIMS]")
      ->allow_extra_args(false);
  return {app, [opts, &global] { RunCheck(*opts, global); }};
}

}  // namespace tilec::tools
