#include "rl/length.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace orrery::rl {
namespace {

double Phi(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

// The z with Phi(z) = p (bisection; p in (0, 1)).
double PhiInverse(double p) {
  double lo = -40, hi = 40;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    (Phi(mid) < p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

// E[min(X, L)] / L for log X ~ N(ln L − z·sigma, sigma²), where P(X ≥ L) = 1 − Phi(z).
double MeanFracAt(double z, double sigma, double clip) {
  return std::exp(-z * sigma + 0.5 * sigma * sigma) * Phi(z - sigma) + clip;
}

Result<double> Fraction(std::string_view key, std::string_view value) {
  std::string v(value);
  char* end = nullptr;
  const double x = std::strtod(v.c_str(), &end);
  if (v.empty() || end != v.c_str() + v.size() || !(x >= 0 && x <= 1))
    return MakeError("lengths: " + std::string(key) + ": expected a fraction from 0 to 1, got \"" + v + "\"");
  return x;
}

}  // namespace

const std::vector<LengthPreset>& LengthPresets() {
  static const std::vector<LengthPreset> kPresets = {
      {"verl", {0.41, 0.02, 0},
       "mean 1267 of a 3072-token cap in a verl GRPO training log (verl issue 7412, step 34); clip ratio 2 %, "
       "the middle of the 1-3 % at the maximum proposed in the TLT workload notes (../shared/specs/tlt.md)"},
      {"deepscaler", {3500.0 / 8192.0, 0.02, 0},
       "DeepScaleR-1.5B at an 8K cap: mean response length 3,500 tokens (Agentica's DeepScaleR report); clip ratio "
       "as in verl"},
  };
  return kPresets;
}

Result<LengthSpec> ParseLengthSpec(std::string_view text) {
  for (const LengthPreset& p : LengthPresets())
    if (p.name == text) return p.spec;
  if (text.find('=') == std::string_view::npos) {
    std::string names;
    for (const LengthPreset& p : LengthPresets()) names += (names.empty() ? "" : ", ") + std::string(p.name);
    return MakeError("lengths: unknown preset \"" + std::string(text) + "\"; expected one of " + names +
                     " or mean=F,clip=C[,corr=R]");
  }
  LengthSpec s;
  bool mean = false, clip = false;
  size_t at = 0;
  while (at <= text.size()) {
    const size_t comma = std::min(text.find(',', at), text.size());
    const std::string_view kv = text.substr(at, comma - at);
    const size_t eq = kv.find('=');
    if (eq == std::string_view::npos) return MakeError("lengths: expected key=value, got \"" + std::string(kv) + "\"");
    const std::string_view key = kv.substr(0, eq), value = kv.substr(eq + 1);
    if (key == "mean") {
      ORR_ASSIGN_OR_RETURN(s.mean_frac, Fraction(key, value));
      mean = true;
    } else if (key == "clip") {
      ORR_ASSIGN_OR_RETURN(s.clip_ratio, Fraction(key, value));
      clip = true;
    } else if (key == "corr") {
      ORR_ASSIGN_OR_RETURN(s.corr, Fraction(key, value));
    } else {
      return MakeError("lengths: unknown key \"" + std::string(key) + "\"; expected mean, clip or corr");
    }
    at = comma + 1;
  }
  if (!mean || !clip) return MakeError("lengths: mean= and clip= are both needed");
  return s;
}

Result<LengthDist> FitLengths(const LengthSpec& spec, uint32_t max_tokens) {
  if (max_tokens < 2) return MakeError("lengths: the maximum response must be at least 2 tokens");
  const double c = spec.clip_ratio, m = spec.mean_frac;
  if (!(c > 0 && c < 1)) return MakeError("lengths: clip ratio must lie strictly between 0 and 1");
  if (!(m > c && m < 1))
    return MakeError("lengths: mean " + std::to_string(m) + " of the maximum cannot go with clip ratio " +
                     std::to_string(c) + " (the mean must lie strictly between the clip ratio and 1)");
  const double z = PhiInverse(1 - c);
  // MeanFracAt falls from 1 (sigma → 0) to c (sigma → ∞): bisection on sigma.
  double lo = 1e-9, hi = 50;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    (MeanFracAt(z, mid, c) > m ? lo : hi) = mid;
  }
  LengthDist d;
  d.sigma = 0.5 * (lo + hi);
  d.mu = std::log(static_cast<double>(max_tokens)) - z * d.sigma;
  d.corr = spec.corr;
  d.max_tokens = max_tokens;
  return d;
}

double ClipRatio(const LengthDist& d) {
  return 1 - Phi((std::log(static_cast<double>(d.max_tokens)) - d.mu) / d.sigma);
}

double ClippedMeanFrac(const LengthDist& d) {
  const double z = (std::log(static_cast<double>(d.max_tokens)) - d.mu) / d.sigma;
  return MeanFracAt(z, d.sigma, 1 - Phi(z));
}

std::vector<uint32_t> SampleGroup(const LengthDist& d, double z_prompt, uint32_t samples, Rng& rng) {
  std::vector<uint32_t> out;
  out.reserve(samples);
  const double a = std::sqrt(d.corr), b = std::sqrt(1 - d.corr);
  for (uint32_t i = 0; i < samples; ++i) {
    const double x = std::exp(d.mu + d.sigma * (a * z_prompt + b * rng.Normal()));
    const double clipped = std::min(x, static_cast<double>(d.max_tokens));
    out.push_back(std::max<uint32_t>(1, static_cast<uint32_t>(std::ceil(clipped))));
  }
  return out;
}

std::vector<uint32_t> SampleGroups(const LengthDist& d, uint32_t prompts, uint32_t samples, Rng& rng) {
  std::vector<uint32_t> out;
  out.reserve(static_cast<size_t>(prompts) * samples);
  for (uint32_t p = 0; p < prompts; ++p) {
    const double z = rng.Normal();
    for (uint32_t len : SampleGroup(d, z, samples, rng)) out.push_back(len);
  }
  return out;
}

}  // namespace orrery::rl
