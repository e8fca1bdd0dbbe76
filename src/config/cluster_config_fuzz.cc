// libFuzzer target: ParseClusterConfigString must return a Result (ok or a located error)
// for every input, never crash, hang or leak. Seeds: configs/*.toml (scripts/test.sh).
// Clusters are bounded at 4,096 nodes so that inputs exercise the grammar instead of building
// a million node records each; the default bound has its own tests (cluster_config_test.cc).
#include <cstddef>
#include <cstdint>
#include <string>

#include "config/cluster_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  auto r = orrery::ParseClusterConfigString(text, "fuzz.toml", 4096);
  if (r.ok()) {
    // Invariants of every loaded cluster.
    const orrery::Cluster& c = *r;
    uint64_t gpus = 0;
    for (const auto& vc : c.vcs) gpus += vc.gpus;
    if (gpus != c.total_gpus() || c.nodes.empty()) __builtin_trap();
    for (size_t i = 0; i < c.nodes.size(); ++i)
      if (c.nodes[i].id.value() != i || c.nodes[i].vc.value() >= c.vcs.size()) __builtin_trap();
  } else if (r.error().message.rfind("fuzz.toml:", 0) != 0) {
    __builtin_trap();  // every error is located
  }
  return 0;
}
