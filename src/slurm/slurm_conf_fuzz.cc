// libFuzzer target: the slurm.conf reader must never crash, whatever the input (errors are
// fine), and what it accepts must be consistent: partitions name existing nodes, the default
// partition exists, durations are non-negative or unlimited. Clusters are bounded at 4,096
// nodes, as the daemon's once sinfo has named them (the default bound of 100,000 has its own
// test, SlurmConf.BoundsTheNodesARangeMakes), so that inputs exercise the grammar instead
// of building 100,000 node records each.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "slurm/conf.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace orrery::slurm;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  SlurmConfBounds bounds;
  bounds.max_nodes = 4096;
  auto c = ParseSlurmConf(text, "fuzz", bounds);
  if (!c.ok()) return 0;
  if (!c->partitions.empty() && c->default_partition >= c->partitions.size()) __builtin_trap();
  for (const PartitionDef& p : c->partitions) {
    for (uint32_t n : p.nodes)
      if (n >= c->nodes.size()) __builtin_trap();
    if (p.max_time_s < kUnlimited) __builtin_trap();
  }
  if (c->priority.calc_period_s < 1 || c->priority.max_age_s < 0 || c->priority.decay_half_life_s < 0) __builtin_trap();
  auto again = ParseSlurmConf(text, "fuzz", bounds);  // deterministic
  if (!again.ok() || again->nodes.size() != c->nodes.size() || again->warnings != c->warnings) __builtin_trap();
  return 0;
}
