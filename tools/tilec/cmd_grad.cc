// `tilec grad FILE -s NAME=SHAPE... [--wrt X,Y] [--outputs O] [--saved T] [-o OUT.tile]`:
// derive the reverse-mode gradient of a Tile program (lang::Gradient) and
// print it as Tile source.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "tile_lang/gradient.h"
#include "tile_lang/printer.h"
#include "tools/tilec/common.h"

namespace tilec::tools {
namespace {

struct GradOptions {
  std::string file;
  std::vector<std::string> shapes;
  std::vector<std::string> wrt;
  std::vector<std::string> outputs;
  std::vector<std::string> saved;
  std::string output_file;
};

// A comment naming what the program is and the shapes it binds to.
std::string Header(const GradOptions& opts, const lang::GradientProgram& g) {
  std::string text = fmt::format("// The gradient of {} (tilec grad), derived for these input shapes:\n//  ", opts.file);
  for (const auto& in : g.function.inputs)
  {
    const lang::Shape& s = g.input_shapes.at(in.name);
    text += fmt::format(" -s {}={}[{}]", in.name, lang::Name(s.dtype), fmt::join(s.dims, ","));
  }
  return text + "\n";
}

void RunGrad(const GradOptions& opts, const GlobalOptions& global) {
  SourceFilePtr source = ReadSourceFile(opts.file);
  std::map<std::string, lang::Shape> shapes = ParseShapeArgs(opts.shapes, "-s");
  lang::ast::Function f = Timed(global, "parse", [&] { return ParseSource(source); });
  lang::GradientOptions options{opts.wrt, opts.outputs, opts.saved};
  lang::GradientProgram g = Timed(global, "grad", [&] { return lang::Gradient(f, shapes, options); });
  if (global.verbose > 0 && !g.forward_reads.empty())
    fmt::print(stderr, "tilec: the backward reads the forward tensors {} (--saved takes them from a forward run)\n",
               fmt::join(g.forward_reads, ", "));
  std::string text = Header(opts, g) + lang::Print(g.function);
  if (opts.output_file.empty()) {
    fmt::print("{}", text);
    return;
  }
  std::unique_ptr<FILE, int (*)(FILE*)> out(std::fopen(opts.output_file.c_str(), "w"), &std::fclose);
  if (!out) TILEC_USER_ERROR("cannot write '{}': {}", opts.output_file, std::strerror(errno));
  if (std::fwrite(text.data(), 1, text.size(), out.get()) != text.size())
    TILEC_USER_ERROR("cannot write '{}': {}", opts.output_file, std::strerror(errno));
}

}  // namespace

Command AddGradCommand(CLI::App& parent, const GlobalOptions& global) {
  auto opts = std::make_shared<GradOptions>();
  CLI::App* app = parent.add_subcommand("grad", "Derive the reverse-mode gradient of a Tile program, as a Tile program");
  app->footer(Footer(
      "The gradient program's inputs are the program's inputs, then O_grad (the incoming gradient,\n"
      "shaped like O) per differentiated output O, then the --saved tensors; its outputs are X_grad\n"
      "per input X of --wrt. A forward tensor it needs and is not given is computed again (-v lists them).\n"
      "Its sizes are those of the -s shapes. Rules and limits: docs/user-guide.md, \"tilec grad\".\n\n"
      "Examples:\n"
      "  tilec grad examples/conv_relu.tile -s D=f32[1,8,8,4] -s K=f32[3,3,4,4] --wrt D,K\n"
      "  tilec grad examples/conv_relu.tile -s D=f32[1,8,8,4] -s K=f32[3,3,4,4] --saved O\n"
      "  tilec grad examples/softmax.tile -s X=f32[4,10] -o softmax_grad.tile\n"
      "  tilec run softmax_grad.tile --random-inputs -s X=f32[4,10] -s Y_grad=f32[4,10]"));
  app->add_option("file", opts->file, "Tile source file")->required()->type_name("FILE.tile");
  app->add_option("-s,--shape", opts->shapes, "Shape of an input, e.g. -s D=f32[1,8,8,4] (repeat per input)")
      ->check(NameValueValidator())
      ->type_name("NAME=TYPE[DIMS]")
      ->allow_extra_args(false);
  app->add_option("--wrt", opts->wrt, "Inputs to differentiate with respect to (default: every float input)")
      ->delimiter(',')
      ->type_name("NAME[,NAME...]");
  app->add_option("--outputs", opts->outputs, "Outputs to differentiate (default: every float output)")
      ->delimiter(',')
      ->type_name("NAME[,NAME...]");
  app->add_option("--saved", opts->saved,
                  "Forward outputs or named intermediates the gradient program takes as inputs (from the "
                  "forward run) instead of computing them again")
      ->delimiter(',')
      ->type_name("NAME[,NAME...]");
  app->add_option("-o,--output", opts->output_file, "Write the gradient program to this file instead of stdout")
      ->type_name("OUT.tile");
  return {app, [opts, &global] { RunGrad(*opts, global); }};
}

}  // namespace tilec::tools
