// Lint (lint.h).
#include "tile_lang/lint.h"

#include <fmt/format.h>

#include <map>
#include <set>
#include <string>

namespace tilec::lang {
namespace {

void AddReads(const ast::ExprPtr& e, std::set<std::string>& reads) {
  if (!e) return;
  if (e->kind == ast::ExprKind::Name && e->name_class == ast::NameClass::Tensor) reads.insert(e->name);
  for (const ast::ExprPtr& a : e->args) AddReads(a, reads);
}

void AddReads(const ast::TensorRef& r, std::set<std::string>& reads) {
  reads.insert(r.name);
  for (const ast::ExprPtr& i : r.indices) AddReads(i, reads);
}

// The tensor names statement `s` reads.
std::set<std::string> Reads(const ast::Statement& s) {
  std::set<std::string> reads;
  if (s.kind == ast::Statement::Kind::Assignment) {
    AddReads(s.assignment.value, reads);
    return reads;
  }
  const ast::Contraction& c = s.contraction;
  for (const ast::ExprPtr& i : c.output.indices) AddReads(i, reads);
  for (const ast::ExprPtr& e : c.sizes) AddReads(e, reads);
  for (const ast::TensorRef& r : c.inputs) AddReads(r, reads);
  for (const ast::Constraint& k : c.constraints) {
    AddReads(k.poly, reads);
    AddReads(k.bound, reads);
  }
  if (c.default_tensor) reads.insert(*c.default_tensor);
  return reads;
}

const std::string& Defined(const ast::Statement& s) {
  return s.kind == ast::Statement::Kind::Assignment ? s.assignment.name : s.contraction.output.name;
}

}  // namespace

std::vector<UserError> Lint(const ast::Function& f) {
  std::set<std::string> outputs;
  for (const ast::Output& o : f.outputs) outputs.insert(o.name);
  // The last statement that reads each tensor (one pass over the body).
  std::map<std::string, size_t> last_reader;
  for (size_t i = 0; i < f.body.size(); ++i)
    for (const std::string& n : Reads(f.body[i])) last_reader[n] = i;
  std::vector<UserError> warnings;
  for (const ast::Input& in : f.inputs) {
    if (!last_reader.count(in.name) && !outputs.count(in.name))
      warnings.push_back(UserError::Warning(fmt::format("input '{}' is never used", in.name), f.source, in.span));
  }
  for (size_t i = 0; i < f.body.size(); ++i) {
    const std::string& name = Defined(f.body[i]);
    if (outputs.count(name)) continue;
    // `Ok = assert_square(N == M);`: a check whose value is never meant to be read.
    const ast::Statement& s = f.body[i];
    if (s.kind == ast::Statement::Kind::Assignment && s.assignment.value &&
        s.assignment.value->kind == ast::ExprKind::Call && s.assignment.value->name.starts_with("assert_"))
      continue;
    auto r = last_reader.find(name);
    if (r == last_reader.end() || r->second <= i)
      warnings.push_back(UserError::Warning(
          fmt::format("'{}' is computed but never used (it is not an output and no later statement reads it)", name),
          f.source, f.body[i].name_span));
  }
  return warnings;
}

}  // namespace tilec::lang
