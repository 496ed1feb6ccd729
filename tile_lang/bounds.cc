#include "tile_lang/bounds.h"

#include <algorithm>
#include <optional>
#include <string>

#include "support/error.h"

namespace tilec::lang {
namespace {

// lo <= poly <= hi, both inclusive.
struct Condition {
  const Polynomial* poly;
  Rational lo, hi;
};

// An interval with optional (infinite when absent) ends.
struct Interval {
  std::optional<Rational> lo, hi;
};

// Range of coeff * x over x in `iv`.
Interval Scaled(Rational coeff, const Interval& iv) {
  Interval r;
  auto mul = [&](const std::optional<Rational>& v) -> std::optional<Rational> {
    if (!v) return std::nullopt;
    return coeff * *v;
  };
  if (coeff.num > 0) {
    r.lo = mul(iv.lo);
    r.hi = mul(iv.hi);
  } else {
    r.lo = mul(iv.hi);
    r.hi = mul(iv.lo);
  }
  return r;
}

class Propagator {
 public:
  Propagator(const std::vector<std::string>& vars, std::vector<Condition> conds)
      : vars_(vars), conds_(std::move(conds)), box_(vars.size()) {}

  // Runs rounds until nothing tightens. Index variables are integers, so each
  // new end is rounded inward at once: still sound, tighter, and it makes
  // every step move an end by at least 1. The round cap only guards against
  // slow creeping on infeasible systems; stopping early is sound too.
  void Run() {
    int max_rounds = 64 + 4 * static_cast<int>(vars_.size());
    for (int round = 0; round < max_rounds; ++round) {
      bool changed = false;
      for (const auto& c : conds_) changed = Apply(c) || changed;
      if (!changed || Empty()) return;
    }
  }

  bool Empty() const {
    for (const auto& iv : box_)
      if (iv.lo && iv.hi && *iv.hi < *iv.lo) return true;
    return false;
  }
  const Interval& At(size_t k) const { return box_[k]; }

 private:
  size_t IndexOf(const std::string& var) const {
    auto it = std::lower_bound(vars_.begin(), vars_.end(), var);
    TILEC_CHECK(it != vars_.end() && *it == var, "index '{}' missing from index_vars", var);
    return static_cast<size_t>(it - vars_.begin());
  }

  // Tightens every variable of one condition; true if anything changed.
  bool Apply(const Condition& c) {
    const auto& terms = c.poly->terms;
    std::vector<Interval> parts;
    std::vector<size_t> idx;
    for (const auto& [var, coeff] : terms) {
      idx.push_back(IndexOf(var));
      parts.push_back(Scaled(coeff, box_[idx.back()]));
    }
    bool changed = false;
    size_t k = 0;
    for (const auto& [var, coeff] : terms) {
      // coeff * x = poly - constant - others, so
      // lo - constant - max(others) <= coeff * x <= hi - constant - min(others).
      std::optional<Rational> others_min = Rational(0), others_max = Rational(0);
      for (size_t j = 0; j < parts.size(); ++j) {
        if (j == k) continue;
        others_min = (others_min && parts[j].lo) ? std::optional(*others_min + *parts[j].lo) : std::nullopt;
        others_max = (others_max && parts[j].hi) ? std::optional(*others_max + *parts[j].hi) : std::nullopt;
      }
      std::optional<Rational> low, high;  // bounds on coeff * x
      if (others_max) low = c.lo - c.poly->constant - *others_max;
      if (others_min) high = c.hi - c.poly->constant - *others_min;
      std::optional<Rational> x_lo, x_hi;
      if (coeff.num > 0) {
        if (low) x_lo = *low / coeff;
        if (high) x_hi = *high / coeff;
      } else {
        if (high) x_lo = *high / coeff;
        if (low) x_hi = *low / coeff;
      }
      Interval& iv = box_[idx[k]];
      if (x_lo) {
        Rational v(x_lo->Ceil());
        if (!iv.lo || *iv.lo < v) {
          iv.lo = v;
          changed = true;
        }
      }
      if (x_hi) {
        Rational v(x_hi->Floor());
        if (!iv.hi || v < *iv.hi) {
          iv.hi = v;
          changed = true;
        }
      }
      parts[k] = Scaled(coeff, iv);
      ++k;
    }
    return changed;
  }

  const std::vector<std::string>& vars_;
  std::vector<Condition> conds_;
  std::vector<Interval> box_;
};

}  // namespace

std::vector<ContractionOp::Bound> DeriveIndexBounds(const ContractionOp& op,
                                                    const Program& program) {
  TILEC_CHECK(std::is_sorted(op.index_vars.begin(), op.index_vars.end()),
              "index_vars of '{}' are not sorted", op.output);
  try {
    std::vector<Condition> conds;
    auto access = [&](const std::string& tensor, const std::vector<Polynomial>& index) {
      const Shape& s = program.Tensor(tensor).shape;
      TILEC_CHECK(index.size() == s.dims.size(), "'{}' accessed with {} indices, rank {}", tensor,
                  index.size(), s.dims.size());
      for (size_t d = 0; d < index.size(); ++d)
        conds.push_back({&index[d], Rational(0), Rational(s.dims[d]) - Rational(1)});
    };
    access(op.output, op.output_index);
    for (const auto& in : op.inputs) access(in.tensor, in.index);
    for (const auto& c : op.constraints)
      conds.push_back({&c.poly, Rational(0), Rational(c.range) - Rational(1)});

    Propagator prop(op.index_vars, std::move(conds));
    prop.Run();
    // No valid assignment (some variable's range is empty): propagation stops
    // there, so other variables may still look unbounded although the
    // conditions bound them. Every box is then empty. (Found by difftest: an
    // input index `q - 2` with q also limited to [0, 0] elsewhere made a
    // bounded variable "unbounded".)
    if (prop.Empty()) return std::vector<ContractionOp::Bound>(op.index_vars.size(), ContractionOp::Bound{0, -1});
    std::vector<ContractionOp::Bound> bounds;
    for (size_t k = 0; k < op.index_vars.size(); ++k) {
      const Interval& iv = prop.At(k);
      if (!iv.lo || !iv.hi) {
        throw UserError(fmt::format("index '{}' is unbounded: no output, input or constraint "
                                    "limits its {} value",
                                    op.index_vars[k], iv.lo ? "largest" : "smallest"),
                        program.source, op.span);
      }
      bounds.push_back(ContractionOp::Bound{iv.lo->num, iv.hi->num});
    }
    return bounds;
  } catch (const UserError& e) {
    if (e.span().known() || !op.span.known()) throw;
    throw UserError(fmt::format("{} (while deriving index bounds)", e.message()), program.source,
                    op.span);
  }
}

}  // namespace tilec::lang
