// Response lengths of a reasoning-RL rollout: a lognormal clipped at the maximum response
// length, fitted to two published figures of a training log, the mean response length (as a
// fraction of the maximum) and the clip ratio (the share of responses cut at the maximum).
// Samples of one prompt may share a prompt-level factor (`corr`): the log-length is
// mu + sigma·(sqrt(corr)·z_prompt + sqrt(1 − corr)·z_sample), which keeps the marginal.
// Presets and their sources: docs/design/rl.md, "Response lengths".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "base/rng.h"

namespace orrery::rl {

struct LengthSpec {
  double mean_frac = 0.41;   // mean response length / maximum
  double clip_ratio = 0.02;  // share of responses that reach the maximum
  double corr = 0;           // share of the log-length variance common to a prompt's samples
};

struct LengthPreset {
  std::string_view name;
  LengthSpec spec;
  std::string_view source;
};
const std::vector<LengthPreset>& LengthPresets();

// A preset name or "mean=F,clip=C[,corr=R]" (fractions); located errors.
Result<LengthSpec> ParseLengthSpec(std::string_view text);

// The clipped lognormal with `spec`'s mean and clip ratio at `max_tokens`.
struct LengthDist {
  double mu = 0;
  double sigma = 0;
  double corr = 0;
  uint32_t max_tokens = 0;
};

// Solves P(X ≥ max) = clip and E[min(X, max)] = mean for (mu, sigma); errors when no
// lognormal has them (the mean must lie strictly between clip·max and max).
Result<LengthDist> FitLengths(const LengthSpec& spec, uint32_t max_tokens);

// E[min(X, max)] / max and P(X ≥ max) of the distribution (closed forms).
double ClippedMeanFrac(const LengthDist& d);
double ClipRatio(const LengthDist& d);

// `samples` lengths (≥ 1, ≤ max) for each of `prompts` prompts, prompt-major, drawn from
// `rng`: one prompt factor then its samples' factors.
std::vector<uint32_t> SampleGroups(const LengthDist& d, uint32_t prompts, uint32_t samples, Rng& rng);
// The samples of one prompt whose prompt factor is `z_prompt`.
std::vector<uint32_t> SampleGroup(const LengthDist& d, double z_prompt, uint32_t samples, Rng& rng);

}  // namespace orrery::rl
