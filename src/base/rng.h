// Deterministic random numbers. Every component draws from its own named stream,
// derived from (seed, stream name), so adding draws in one component never shifts
// another's sequence. Algorithm: SplitMix64 for seeding, xoshiro256** for draws.
// Distributions are implemented here (not std::*_distribution) so that outputs are
// byte-identical across standard libraries.
#pragma once

#include <cmath>
#include <cstdint>
#include <string_view>

namespace orrery {

inline uint64_t SplitMix64(uint64_t& x) {
  uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

inline uint64_t Fnv1a64(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

class Rng {
 public:
  Rng(uint64_t seed, std::string_view stream) {
    uint64_t x = seed ^ Fnv1a64(stream);
    for (auto& w : s_) w = SplitMix64(x);
  }

  uint64_t NextU64() {
    const uint64_t result = Rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = Rotl(s_[3], 45);
    return result;
  }
  // Uniform in [0, 1) with 53 random bits.
  double Uniform() { return static_cast<double>(NextU64() >> 11) * 0x1.0p-53; }
  // Uniform integer in [0, n) (n > 0), Lemire's nearly-divisionless method without rejection bias.
  uint64_t Below(uint64_t n) {
    __uint128_t m = static_cast<__uint128_t>(NextU64()) * n;
    uint64_t l = static_cast<uint64_t>(m);
    if (l < n) {
      uint64_t t = -n % n;
      while (l < t) {
        m = static_cast<__uint128_t>(NextU64()) * n;
        l = static_cast<uint64_t>(m);
      }
    }
    return static_cast<uint64_t>(m >> 64);
  }
  double Exponential(double rate) { return -std::log1p(-Uniform()) / rate; }
  double Normal() {  // Box-Muller, one value per call (deterministic, no cached state)
    double u1 = Uniform(), u2 = Uniform();
    if (u1 < 1e-300) u1 = 1e-300;
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
  double LogNormal(double mu, double sigma) { return std::exp(mu + sigma * Normal()); }

 private:
  static uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

}  // namespace orrery
