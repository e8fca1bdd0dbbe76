#include "slurm/priority.h"

#include <algorithm>
#include <cmath>

namespace orrery::slurm {

PriorityModel::PriorityModel(const SlurmConf& conf, const Accounts& accounts, const FairTree* tree)
    : conf_(conf), accounts_(accounts), tree_(tree) {
  cluster_nodes_ = static_cast<double>(conf.nodes.size());
  for (const NodeDef& n : conf.nodes) cluster_cpus_ += n.cpus;
  for (const PartitionDef& p : conf.partitions) {
    max_job_factor_ = std::max(max_job_factor_, static_cast<double>(p.priority_job_factor));
    PartTotals t;
    for (uint32_t i : p.nodes) {
      const NodeDef& n = conf.nodes[i];
      t.nodes += 1, t.cpus += n.cpus, t.gpus += n.gpus, t.mem += static_cast<double>(n.real_memory_mib);
    }
    part_totals_.push_back(t);
  }
  for (const Qos& q : accounts.qos) max_qos_priority_ = std::max(max_qos_priority_, static_cast<double>(q.priority));
}

PriorityFactors PriorityModel::Factors(const PriorityJob& job, int64_t now) const {
  PriorityFactors f;
  const PriorityConf& pc = conf_.priority;
  const int64_t since = pc.accrue_always ? job.submit : job.eligible;
  const int64_t age = std::max<int64_t>(0, now - since);
  if (pc.max_age_s == 0) f.age = 1.0;
  else f.age = static_cast<double>(std::min(age, pc.max_age_s)) / static_cast<double>(pc.max_age_s);
  if (tree_ != nullptr && job.assoc >= 0) f.fairshare = tree_->factor(static_cast<size_t>(job.assoc));
  if (cluster_nodes_ > 0 && cluster_cpus_ > 0) {
    const double n = job.nodes, c = job.cpus;
    f.job_size = pc.favor_small ? ((cluster_nodes_ - n) / cluster_nodes_ + (cluster_cpus_ - c) / cluster_cpus_) / 2
                                : (n / cluster_nodes_ + c / cluster_cpus_) / 2;
    f.job_size = std::clamp(f.job_size, 0.0, 1.0);
  }
  if (max_job_factor_ > 0 && job.partition < conf_.partitions.size())
    f.partition = conf_.partitions[job.partition].priority_job_factor / max_job_factor_;
  if (max_qos_priority_ > 0 && job.qos >= 0) f.qos = accounts_.qos[static_cast<size_t>(job.qos)].priority / max_qos_priority_;
  if (job.partition < part_totals_.size()) {
    const PartTotals& t = part_totals_[job.partition];
    for (const auto& [name, w] : pc.weight_tres) {
      const double req = name == "cpu" ? job.cpus : name == "gres/gpu" ? job.gpus
                         : name == "node" ? job.nodes : static_cast<double>(job.mem_mib);
      const double total = name == "cpu" ? t.cpus : name == "gres/gpu" ? t.gpus : name == "node" ? t.nodes : t.mem;
      if (total > 0) f.tres += w * std::min(1.0, req / total);
    }
  }
  return f;
}

double PriorityModel::Score(const PriorityFactors& f) const {
  const PriorityConf& pc = conf_.priority;
  return pc.weight_age * f.age + pc.weight_fairshare * f.fairshare + pc.weight_job_size * f.job_size +
         pc.weight_partition * f.partition + pc.weight_qos * f.qos + f.tres;
}

uint32_t PriorityModel::FromFactors(const PriorityFactors& f, int32_t nice) const {
  switch (conf_.priority.type) {
    case PriorityType::kBasic:
      return 1;
    case PriorityType::kMultifactor: {
      const double p = std::floor(Score(f) - nice);
      return static_cast<uint32_t>(std::clamp(p, 1.0, 4294967294.0));
    }
  }
  return 1;
}

uint32_t PriorityModel::Priority(const PriorityJob& job, int64_t now) const {
  return FromFactors(Factors(job, now), job.nice);
}

}  // namespace orrery::slurm
