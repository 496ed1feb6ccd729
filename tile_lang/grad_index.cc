#include "tile_lang/grad_index.h"

#include <algorithm>
#include <map>
#include <set>

#include "support/error.h"

namespace tilec::lang::grad {

size_t Rank(const std::vector<Polynomial>& polys, const std::vector<std::string>& vars) {
  std::vector<std::vector<Rational>> m;
  for (const Polynomial& p : polys) {
    std::vector<Rational> row;
    for (const std::string& v : vars) row.push_back(p.Coeff(v));
    m.push_back(std::move(row));
  }
  size_t rank = 0;
  for (size_t col = 0; col < vars.size() && rank < m.size(); ++col) {
    size_t pivot = rank;
    while (pivot < m.size() && m[pivot][col] == Rational(0)) ++pivot;
    if (pivot == m.size()) continue;
    std::swap(m[pivot], m[rank]);
    for (size_t r = 0; r < m.size(); ++r) {
      if (r == rank || m[r][col] == Rational(0)) continue;
      Rational f = m[r][col] / m[rank][col];
      for (size_t c = col; c < vars.size(); ++c) m[r][c] = m[r][c] - f * m[rank][c];
    }
    ++rank;
  }
  return rank;
}

Polynomial Substitute(const Polynomial& p, const std::string& var, const Polynomial& value) {
  Rational k = p.Coeff(var);
  if (k == Rational(0)) return p;
  Polynomial q = p;
  q.terms.erase(var);
  return q + value * k;
}

void MakeOutputPlain(Gather& g, const ContractionOp& c, const std::vector<int64_t>& dims) {
  auto range = [&](const std::string& v) {
    for (size_t k = 0; k < c.index_vars.size(); ++k)
      if (c.index_vars[k] == v) return c.bounds[k].hi - c.bounds[k].lo;
    return int64_t{0};
  };
  auto plain = [](const Polynomial& p) {
    return p.terms.size() == 1 && p.terms.begin()->second == Rational(1) && p.constant == Rational(0);
  };
  auto substitute = [&](const std::string& var, const Polynomial& value) {
    for (Polynomial& q : g.out) q = Substitute(q, var, value);
    for (auto& [tensor, index] : g.refs)
      for (Polynomial& q : index) q = Substitute(q, var, value);
    for (auto& k : g.constraints) k.poly = Substitute(k.poly, var, value);
  };
  auto var = [](const std::string& v) {
    Polynomial p;
    p.terms[v] = 1;
    return p;
  };
  std::set<std::string> fixed;
  for (const Polynomial& p : g.out)
    if (plain(p)) fixed.insert(p.terms.begin()->first);
  for (size_t k = 0; k < g.out.size(); ++k) {
    const Polynomial p = g.out[k];
    bool integral = p.constant.IsInteger();
    for (const auto& [v, coeff] : p.terms) integral = integral && coeff.IsInteger();
    if (plain(p) || !integral) continue;
    std::string unit;  // the variable of coefficient 1 of largest range
    for (const auto& [v, coeff] : p.terms) {
      if (fixed.count(v)) continue;
      // Coefficient -1 (`N - 1 - x`) would do too, but the llvm backend then
      // miscompiles some programs (difftest --grad seed 426); left as it is.
      if (coeff == Rational(1) && (unit.empty() || range(v) > range(unit))) unit = v;
    }
    if (unit.empty()) continue;
    if (p.terms.size() == 2) {
      const auto& [x, stride] = *std::find_if(p.terms.begin(), p.terms.end(),
                                              [&](const auto& term) { return term.first != unit; });
      if (stride.IsInteger() && stride.num >= 2 && !fixed.count(x) && range(unit) <= range(x) &&
          dims.at(k) % stride.num == 0) {
        std::set<std::string> names(c.index_vars.begin(), c.index_vars.end());
        auto collect = [&](const Polynomial& q) {
          for (const auto& [v, coeff] : q.terms) names.insert(v);
        };
        for (const Polynomial& q : g.out) collect(q);
        for (const auto& [tensor, index] : g.refs)
          for (const Polynomial& q : index) collect(q);
        auto fresh = [&](const std::string& base) {
          std::string name = base;
          for (int n = 2; names.count(name); ++n) name = fmt::format("{}{}", base, n);
          names.insert(name);
          return name;
        };
        const std::string xv = x;  // x is a reference into p, which the substitution leaves alone
        const std::string phase = fresh(xv + "r"), step = fresh(xv + "t");
        Polynomial tap = var(step) * stride + var(phase);
        tap.constant = Rational(0) - p.constant;
        substitute(unit, tap);
        substitute(xv, var(xv) - var(step));
        g.constraints.push_back({var(phase), stride.num});
        fixed.insert(xv);
        fixed.insert(phase);
        continue;
      }
    }
    // p = v + rest, so the old v is (new v) - rest.
    Polynomial rest = p;
    rest.terms.erase(unit);
    substitute(unit, var(unit) - rest);
    fixed.insert(unit);
  }
}

}  // namespace tilec::lang::grad
