// `tilec layout SPEC -s TYPE[DIMS] [--form F] [--count N] [--names A,B,…]`:
// parse a layout spec for a tensor shape and print its physical dims,
// padding, offset function and first elements in one of the seeds' forms.
#include <memory>

#include "tile_lang/binder.h"
#include "tile_lang/layout.h"
#include "tools/tilec/common.h"
#include "tools/tilec/layout_print.h"

namespace tilec::tools {
namespace {

struct LayoutOptions {
  std::string spec;
  std::string shape;
  std::string form = "table";
  int64_t count = 16;
  std::string names;  // comma-separated
};

void RunLayout(const LayoutOptions& o) {
  LayoutPrintOptions print;
  bool known = false;
  std::vector<std::string> forms;
  for (const auto& [name, form] : LayoutForms()) {
    forms.push_back(name);
    if (name == o.form) print.form = form, known = true;
  }
  if (!known) TILEC_USER_ERROR("--form {}: unknown form (available: {})", o.form, JoinNames(forms));
  print.count = o.count;
  if (!o.names.empty()) {
    size_t pos = 0;
    while (true) {
      size_t comma = o.names.find(',', pos);
      std::string n = o.names.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
      if (n.empty()) TILEC_USER_ERROR("--names {}: an empty name", o.names);
      print.names.push_back(n);
      if (comma == std::string::npos) break;
      pos = comma + 1;
    }
  }
  lang::Shape shape;
  try {
    shape = lang::ParseShape(o.shape);
  } catch (const UserError& e) {
    TILEC_USER_ERROR("-s {}: {}", o.shape, e.message());
  }
  lang::Layout layout = lang::ParseLayout(o.spec, shape.dims);
  fmt::print("{}", PrintLayout(o.spec, layout, shape, print));
}

}  // namespace

Command AddLayoutCommand(CLI::App& parent, const GlobalOptions& /*global*/) {
  auto opts = std::make_shared<LayoutOptions>();
  CLI::App* app = parent.add_subcommand(
      "layout", "Print a memory layout: physical dims, padding, offset function and the first elements");
  app->footer(Footer(
              "SPEC is a oneDNN tag (abcd, acdb, aBcd16b, ABcd16b16a, ABcd8a16b2a, …), a named format of\n"
              "oneDNN (nchw, nChw16c, OIhw16i16o, …), clDNN (bfyx, b_fs_yx_fsv16, os_iyx_osv16, …), MegEngine\n"
              "(NCHW4, CHWN4, …) or MACE (NCHW, OIHW, MIHW), row-major, order(...) or strides(...); see\n"
              "docs/layouts.md.\n\n"
              "Forms: table (default), cldnn (i = 0 => [b=0; …] list in memory order), onednn\n"
              "(offset_nChw8c(n, c, h, w) = … and the blocking descriptor), megengine (memory order as\n"
              "NCHW element numbers), mace (buffer elements as E[n, c, h, w]).\n\n"
              "Examples:\n  tilec layout nChw8c -s f32[2,17,3,3] --form onednn\n"
              "  tilec layout b_fs_yx_fsv16 -s f32[2,2,2,2] --form cldnn --count 0\n"
              "  tilec layout CHWN4 -s f32[2,64,3,3] --form megengine"));
  app->add_option("spec", opts->spec, "Layout spec")->required()->type_name("SPEC");
  app->add_option("-s,--shape", opts->shape, "The tensor's type and logical dims, e.g. f32[2,17,3,3]")
      ->required()
      ->type_name("TYPE[DIMS]");
  app->add_option("--form", opts->form, "Output form: table, cldnn, onednn, megengine, mace")
      ->capture_default_str()
      ->type_name("FORM");
  app->add_option("--count", opts->count, "Buffer elements to list, in memory order (0: all)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber)
      ->type_name("N");
  app->add_option("--names", opts->names, "Names of the logical dims, e.g. b,f,y,x (default: the spec's own)")
      ->type_name("A,B,...");
  return {app, [opts] { RunLayout(*opts); }};
}

}  // namespace tilec::tools
