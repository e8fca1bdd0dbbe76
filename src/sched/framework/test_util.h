// Builders for hand-made clusters and traces in tests (no I/O).
#pragma once

#include <string>
#include <vector>

#include "model/cluster.h"
#include "model/trace.h"

namespace orrery::testing {

// Adds a VC with `count` nodes of `gpus` GPUs (optional GPU type name).
inline void AddVc(Cluster* c, const std::string& name, int count, uint16_t gpus, const std::string& type = "") {
  VirtualCluster vc;
  vc.id = VcId(static_cast<uint16_t>(c->vcs.size()));
  vc.name = name;
  for (int i = 0; i < count; ++i) {
    Node n;
    n.id = NodeId(static_cast<uint32_t>(c->nodes.size()));
    n.vc = vc.id;
    n.gpus = gpus;
    if (!type.empty()) n.gpu_type = GpuTypeId(static_cast<uint8_t>(c->gpu_types.Intern(type)));
    n.name = name + "-" + std::to_string(i);
    vc.nodes.push_back(n.id);
    vc.gpus += gpus;
    c->nodes.push_back(n);
  }
  c->vcs.push_back(vc);
}

struct JobSpec {
  Time submit;
  Duration duration;
  uint32_t gpus;
  std::string vc = "a";
  uint16_t milli = 1000;
  uint16_t nodes = 0;
  Duration walltime = -1;
};

inline Trace MakeTrace(const std::vector<JobSpec>& specs) {
  Trace t;
  t.origin = "test";
  for (const auto& s : specs) {
    Job j;
    j.id = JobId(static_cast<uint32_t>(t.jobs.size()));
    j.submit = s.submit;
    j.duration = s.duration;
    j.gpus = s.gpus;
    j.gpu_milli = s.milli;
    j.nodes = s.nodes;
    j.walltime = s.walltime;
    j.vc = VcId(static_cast<uint16_t>(t.vcs.Intern(s.vc)));
    t.jobs.push_back(j);
  }
  return t;
}

}  // namespace orrery::testing
