#include "tests/difftest/shrink.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <functional>

namespace tilec::difftest {
namespace {

// Every expression obtained by replacing one node of `e` by one of its
// arguments.
void Hoists(const Expr& e, std::vector<Expr>& out) {
  for (const Expr& a : e.args) out.push_back(a);
  for (size_t k = 0; k < e.args.size(); ++k) {
    std::vector<Expr> inner;
    Hoists(e.args[k], inner);
    for (Expr& sub : inner) {
      Expr copy = e;
      copy.args[k] = std::move(sub);
      out.push_back(std::move(copy));
    }
  }
}

// Simpler versions of a polynomial.
std::vector<Poly> PolyCandidates(const Poly& p) {
  std::vector<Poly> out;
  if (p.constant != 0) out.push_back(p), out.back().constant = 0;
  if (p.dim_coef != 0) out.push_back(p), out.back().dim_coef = 0, out.back().dim.clear();
  if (p.div != 1) out.push_back(p), out.back().div = 1;
  for (size_t k = 0; k < p.terms.size(); ++k) {
    if (p.terms.size() > 1) {
      out.push_back(p);
      out.back().terms.erase(out.back().terms.begin() + static_cast<std::ptrdiff_t>(k));
    }
    if (p.terms[k].first != 1) out.push_back(p), out.back().terms[k].first = 1;
  }
  return out;
}

std::vector<Size> SizeCandidates(const Size& s) {
  std::vector<Size> out;
  if (!s.dim.empty()) {
    if (s.coef != 1 || s.add != 0) out.push_back(Size{s.dim, 1, 0});
  } else {
    for (int64_t v : {int64_t{1}, s.add / 2, s.add - 1})
      if (v >= 0 && v < s.add) out.push_back(Size{"", 1, v});
  }
  return out;
}

// Replaces tensor `from` by `to` in every statement from `first` on.
void Rename(Prog& p, size_t first, const std::string& from, const std::string& to) {
  std::function<void(Expr&)> walk = [&](Expr& e) {
    if (e.kind == Expr::kRef && e.name == from) e.name = to;
    for (Expr& a : e.args) walk(a);
  };
  for (size_t k = first; k < p.stmts.size(); ++k) {
    Stmt& s = p.stmts[k];
    if (s.is_contraction) {
      for (Ref& r : s.c.refs)
        if (r.tensor == from) r.tensor = to;
      if (s.c.default_tensor == from) s.c.default_tensor = to;
    } else {
      walk(s.e);
    }
  }
}

std::vector<Prog> Candidates(const Prog& p) {
  std::vector<Prog> out;
  auto add = [&](Prog c) {
    RemoveDead(c);
    out.push_back(std::move(c));
  };
  // Fewer outputs.
  for (size_t k = 0; p.outputs.size() > 1 && k < p.outputs.size(); ++k) {
    Prog c = p;
    c.outputs.erase(c.outputs.begin() + static_cast<std::ptrdiff_t>(k));
    add(c);
  }
  for (size_t i = 0; i < p.stmts.size(); ++i) {
    const Stmt& s = p.stmts[i];
    // Bypass a statement: later statements read one of its operands instead.
    const bool is_output = std::find(p.outputs.begin(), p.outputs.end(), s.out) != p.outputs.end();
    if (!is_output)
      for (const std::string& u : Uses(s)) {
        Prog c = p;
        Rename(c, i + 1, s.out, u);
        add(c);
      }
    // Statement-level simplifications.
    auto with = [&](const std::function<void(Stmt&)>& f) {
      Prog c = p;
      f(c.stmts[i]);
      add(c);
    };
    if (!s.is_contraction) {
      std::vector<Expr> hoists;
      Hoists(s.e, hoists);
      for (Expr& h : hoists) with([&](Stmt& t) { t.e = h; });
      continue;
    }
    const Contraction& c = s.c;
    for (size_t k = 0; k < c.refs.size(); ++k)
      if (c.refs.size() > 1 && (c.comb != '?' || k == 2))
        with([&](Stmt& t) {
          t.c.refs = {t.c.refs[k]};
          t.c.comb = 0;
        });
    if (c.comb == '?') with([&](Stmt& t) { t.c.refs.pop_back(), t.c.comb = '='; });
    if (!c.default_tensor.empty()) with([](Stmt& t) { t.c.default_tensor.clear(); });
    for (size_t k = 0; k < c.constraints.size(); ++k)
      with([&](Stmt& t) { t.c.constraints.erase(t.c.constraints.begin() + static_cast<std::ptrdiff_t>(k)); });
    if (c.agg != '+') with([](Stmt& t) { t.c.agg = '+'; });
    for (size_t k = 0; k < c.out_idx.size(); ++k) {
      // Drop an output dimension.
      with([&](Stmt& t) {
        t.c.out_idx.erase(t.c.out_idx.begin() + static_cast<std::ptrdiff_t>(k));
        t.c.sizes.erase(t.c.sizes.begin() + static_cast<std::ptrdiff_t>(k));
      });
      for (Poly& q : PolyCandidates(c.out_idx[k])) with([&](Stmt& t) { t.c.out_idx[k] = q; });
      for (Size& z : SizeCandidates(c.sizes[k])) with([&](Stmt& t) { t.c.sizes[k] = z; });
    }
    for (size_t r = 0; r < c.refs.size(); ++r)
      for (size_t k = 0; k < c.refs[r].idx.size(); ++k)
        for (Poly& q : PolyCandidates(c.refs[r].idx[k])) with([&](Stmt& t) { t.c.refs[r].idx[k] = q; });
    for (size_t k = 0; k < c.constraints.size(); ++k) {
      for (Poly& q : PolyCandidates(c.constraints[k].first)) with([&](Stmt& t) { t.c.constraints[k].first = q; });
      for (Size& z : SizeCandidates(c.constraints[k].second)) with([&](Stmt& t) { t.c.constraints[k].second = z; });
    }
  }
  // Layouts: drop one.
  for (const auto& [name, spec] : p.layouts) {
    Prog c = p;
    c.layouts.erase(name);
    add(c);
  }
  // Smaller dimensions.
  for (const auto& [name, v] : p.dims)
    for (int64_t w : {int64_t{1}, int64_t{2}, v / 2, v - 1})
      if (w >= 1 && w < v) {
        Prog c = p;
        c.dims[name] = w;
        add(c);
      }
  // Plainer input types.
  for (size_t k = 0; k < p.inputs.size(); ++k)
    for (DataType t : {DataType::F32, DataType::I32})
      if (p.inputs[k].dtype != t) {
        Prog c = p;
        c.inputs[k].dtype = t;
        add(c);
      }
  return out;
}

// What must stay the same while shrinking, so that a program does not drift
// to another bug: the kind and backend, and for a mismatch whether the value
// was exact; for an error the first line of its message without names and
// numbers.
std::string Signature(const Finding& f) {
  std::string sig = f.kind + "/" + f.backend + "/";
  if (f.kind == "mismatch") return sig + (f.detail.find("exact") != std::string::npos ? "exact" : "inexact");
  bool quoted = false;
  for (char c : f.detail.substr(0, f.detail.find('\n'))) {
    if (c == '\'') quoted = !quoted;
    if (!quoted && !std::isdigit(static_cast<unsigned char>(c))) sig += c;
  }
  return sig;
}

}  // namespace

Prog Shrink(Prog p, const std::vector<Backend>& backends, Finding* finding, int budget, CheckFn check) {
  std::vector<Backend> only;
  for (const Backend& b : backends)
    if (b.name == finding->backend) only.push_back(b);
  if (only.empty()) only = backends;
  bool progress = true;
  while (progress && budget > 0) {
    progress = false;
    for (Prog& c : Candidates(p)) {
      if (budget-- <= 0) break;
      Finding f;
      if (check(c, only, false, &f) == Verdict::kFail && Signature(f) == Signature(*finding)) {
        p = std::move(c);
        *finding = f;
        progress = true;
        break;
      }
    }
  }
  return p;
}

std::string ReproCommands(const Prog& p, const std::string& file, const std::string& backend) {
  std::string args;
  for (const Input& in : p.inputs) {
    lang::Shape shape = InputShape(p, in);
    std::string spec = fmt::format("{}[{}]", Name(shape.dtype), fmt::join(shape.dims, ","));
    auto it = p.layouts.find(in.name);
    if (it != p.layouts.end()) spec += ":" + it->second;
    args += fmt::format(" -s '{}={}'", in.name, spec);
  }
  for (const auto& [name, spec] : p.layouts) {
    const bool is_input = std::any_of(p.inputs.begin(), p.inputs.end(), [&](const Input& in) { return in.name == name; });
    if (!is_input) args += fmt::format(" --layout '{}={}'", name, spec);
  }
  std::string outs_got, outs_want;
  for (const std::string& o : p.outputs) {
    outs_got += fmt::format(" --out {}={}_got.npy", o, o);
    outs_want += fmt::format(" --out {}={}_want.npy", o, o);
  }
  const std::string target = backend.empty() || backend == "ref" || backend == "bind" ? "llvm" : backend;
  return fmt::format("tilec run {} --random-inputs{} --target {}{}\ntilec run {} --random-inputs{} --target ref{}\n",
                     file, args, target, outs_got, file, args, outs_want);
}

}  // namespace tilec::difftest
