// libFuzzer target: ParseSwfMachine + SwfCluster return a Result (ok or an error naming
// the input) for every input, never crash, hang or allocate without bound. Seed:
// tests/fixtures/fuzz/infer_cluster_fuzz/ (the header of tests/fixtures/swf/tiny.swf).
// Clusters are bounded at 4,096 nodes so that inputs exercise the header grammar instead of
// building a million nodes each; the default bound has its own test.
#include <cstddef>
#include <cstdint>
#include <string>

#include "config/infer_cluster.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  auto m = orrery::ParseSwfMachine(text, "fuzz.swf");
  if (!m.ok()) {
    if (m.error().message.rfind("fuzz.swf", 0) != 0) __builtin_trap();  // every error names the input
    return 0;
  }
  auto c = orrery::SwfCluster(*m, "fuzz.swf", 4096);
  if (!c.ok()) return 0;
  // Invariants: one pool holding exactly MaxProcs processors, dense node ids.
  if (c->vcs.size() != 1 || c->total_gpus() != m->max_procs || c->vcs[0].gpus != m->max_procs) __builtin_trap();
  for (size_t i = 0; i < c->nodes.size(); ++i)
    if (c->nodes[i].id.value() != i || c->nodes[i].gpus == 0) __builtin_trap();
  return 0;
}
