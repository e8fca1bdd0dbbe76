#include "cli/replay.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>

namespace orrery::cli::replay {

Result<Segment> SelectSegment(const Trace& trace, const SegmentOptions& o) {
  if (!(o.speedup > 0) || !std::isfinite(o.speedup)) return MakeError("--speedup must be a positive number");
  if (o.node_gpus == 0 || o.cluster_nodes == 0) return MakeError("the cluster has no GPU node");
  if (o.skip >= trace.jobs.size())
    return MakeError("--skip " + std::to_string(o.skip) + " leaves no job (the trace has " +
                     std::to_string(trace.jobs.size()) + ")");
  // Submit order (the importers sort by (submit, id); sorted again here to not rely on it).
  std::vector<uint32_t> order(trace.jobs.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return trace.jobs[a].submit < trace.jobs[b].submit; });
  Segment s;
  s.first_submit = trace.jobs[order[o.skip]].submit;
  const uint64_t cluster_gpus = static_cast<uint64_t>(o.node_gpus) * o.cluster_nodes;
  for (size_t k = o.skip; k < order.size(); ++k) {
    if (o.jobs && s.jobs.size() >= o.jobs) break;
    const Job& j = trace.jobs[order[k]];
    if (o.window > 0 && j.submit - s.first_submit > o.window) break;
    ++s.considered;
    if (j.gpus == 0) {
      ++s.skipped_cpu;
      continue;
    }
    if (j.duration <= 0) {
      ++s.skipped_no_duration;
      continue;
    }
    ReplayJob r;
    r.index = order[k];
    if (order[k] < trace.source_ids.size()) r.source_id = trace.source_ids[order[k]];
    if (j.user.valid() && j.user.value() < trace.users.size()) r.user = trace.users.Get(j.user.value());
    r.trace_gpus = j.gpus;
    r.trace_duration = j.duration;
    uint64_t g = j.gpus;
    if (j.is_fractional()) ++s.fractional;  // gpus == 1: one whole GPU
    if (g > cluster_gpus) {
      if (!o.clamp_oversize) {
        ++s.skipped_oversize;
        continue;
      }
      ++s.clamped_oversize;
      g = cluster_gpus;
    }
    r.nodes = static_cast<uint32_t>((g + o.node_gpus - 1) / o.node_gpus);
    r.gpus_per_node = static_cast<uint32_t>((g + r.nodes - 1) / r.nodes);
    if (r.gpus() != g) ++s.reshaped;
    r.arrival = static_cast<Time>(std::llround(static_cast<double>(j.submit - s.first_submit) / o.speedup));
    r.duration = std::max<Duration>(1, static_cast<Duration>(std::llround(static_cast<double>(j.duration) / o.speedup)));
    if (o.max_duration > 0 && r.duration > o.max_duration) {
      r.duration = o.max_duration;
      ++s.duration_capped;
    }
    s.jobs.push_back(std::move(r));
  }
  if (s.jobs.empty()) return MakeError("the selected segment has no replayable job (GPU jobs with a duration)");
  return s;
}

Trace HoldLonger(Trace t, Duration latency) {
  for (Job& j : t.jobs) {
    if (j.duration >= 0) j.duration += latency;
    if (j.walltime > 0) j.walltime += latency;
  }
  return t;
}

void ReleaseEarlier(std::vector<JobOutcome>& outcomes, Duration latency) {
  for (JobOutcome& o : outcomes) {
    if (o.end == kNoTime) continue;
    o.end -= latency;
    o.run -= latency;
  }
}

Trace SegmentTrace(const Segment& s) {
  Trace t;
  t.origin = "replay-segment";
  for (size_t i = 0; i < s.jobs.size(); ++i) {
    const ReplayJob& r = s.jobs[i];
    Job j;
    j.id = JobId(static_cast<uint32_t>(i));
    j.submit = r.arrival;
    j.duration = r.duration;
    j.gpus = r.gpus();
    j.gpu_milli = 1000;
    j.nodes = static_cast<uint16_t>(r.nodes > 1 ? r.nodes : 0);
    t.jobs.push_back(j);
    t.source_ids.push_back(r.source_id);
  }
  return t;
}

std::vector<NativeUser> NativeUsers(const slurm::Accounts& accounts) {
  std::vector<NativeUser> out;
  std::set<std::string> seen;
  const slurm::Assoc* root = nullptr;
  for (const slurm::Assoc& a : accounts.assocs) {
    if (a.user.empty() || !seen.insert(a.user).second) continue;
    if (a.user == "root") root = &a;
    else out.push_back(NativeUser{a.user, a.account});
  }
  if (out.empty() && root) out.push_back(NativeUser{root->user, root->account});
  return out;
}

std::vector<uint32_t> AssignUsers(const Segment& s, size_t n) {
  std::map<std::string, uint32_t> slot;
  std::vector<uint32_t> out;
  out.reserve(s.jobs.size());
  for (const ReplayJob& r : s.jobs) {
    const uint32_t next = static_cast<uint32_t>(slot.size() % n);
    out.push_back(slot.emplace(r.user, next).first->second);
  }
  return out;
}

Duration NativeTimeLimit(Duration d) { return (d + kTimeLimitMargin + 59) / 60 * 60; }

Trace NativeTrace(const Segment& s, const std::vector<NativeUser>& users, const std::vector<uint32_t>& assigned) {
  Trace t = SegmentTrace(s);
  for (size_t i = 0; i < t.jobs.size(); ++i) {
    if (!users.empty()) t.jobs[i].user = UserId(t.users.Intern(users[assigned[i]].user));
    t.jobs[i].walltime = NativeTimeLimit(s.jobs[i].duration);
  }
  return t;
}

// Pairs of measured jobs whose times (by `m` and `p`) differ in both runs: concordant and
// discordant counts.
template <typename M, typename P>
void CountPairs(const std::vector<const JobTimes*>& m, M mt, P pt, uint64_t* pairs, uint64_t* con, uint64_t* dis) {
  for (size_t a = 0; a < m.size(); ++a)
    for (size_t b = a + 1; b < m.size(); ++b) {
      double dm = mt(*m[a]) - mt(*m[b]), dp = pt(*m[a]) - pt(*m[b]);
      if (dm == 0 || dp == 0) continue;
      ++*pairs;
      if ((dm > 0) == (dp > 0)) ++*con;
      else ++*dis;
    }
}

double NearestRank(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  double rank = std::ceil(q * static_cast<double>(v.size()));
  size_t i = rank < 1 ? 0 : static_cast<size_t>(rank) - 1;
  return v[std::min(i, v.size() - 1)];
}

Comparison Compare(const std::vector<JobTimes>& jobs) {
  Comparison c;
  c.jobs = jobs.size();
  std::vector<const JobTimes*> m;
  for (const JobTimes& j : jobs)
    if (j.measured) m.push_back(&j);
  c.measured = m.size();
  if (m.empty()) return c;
  std::vector<double> abs_err, rel_err;
  double sjm = 0, sjp = 0, swm = 0, swp = 0;
  for (const JobTimes* j : m) {
    sjm += j->m_jct;
    sjp += j->p_jct;
    swm += j->m_wait;
    swp += j->p_wait;
    double e = std::abs(j->m_jct - j->p_jct);
    abs_err.push_back(e);
    rel_err.push_back(j->p_jct > 0 ? e / j->p_jct : 0);
  }
  const double n = static_cast<double>(m.size());
  c.avg_jct_measured = sjm / n;
  c.avg_jct_predicted = sjp / n;
  c.jct_rel_error = c.avg_jct_predicted > 0 ? (c.avg_jct_measured - c.avg_jct_predicted) / c.avg_jct_predicted : 0;
  c.avg_wait_measured = swm / n;
  c.avg_wait_predicted = swp / n;
  c.wait_error_s = c.avg_wait_measured - c.avg_wait_predicted;
  c.p50_abs_jct_error_s = NearestRank(abs_err, 0.5);
  c.p95_abs_jct_error_s = NearestRank(abs_err, 0.95);
  c.p50_rel_jct_error = NearestRank(rel_err, 0.5);
  c.p95_rel_jct_error = NearestRank(rel_err, 0.95);
  CountPairs(m, [](const JobTimes& j) { return j.m_end; }, [](const JobTimes& j) { return j.p_end; }, &c.pairs,
             &c.concordant, &c.discordant);
  if (c.pairs) {
    c.order_agreement = static_cast<double>(c.concordant) / static_cast<double>(c.pairs);
    c.kendall_tau = (static_cast<double>(c.concordant) - static_cast<double>(c.discordant)) / static_cast<double>(c.pairs);
  }
  CountPairs(m, [](const JobTimes& j) { return j.m_start; }, [](const JobTimes& j) { return j.p_start; },
             &c.start_pairs, &c.start_concordant, &c.start_discordant);
  if (c.start_pairs)
    c.start_kendall_tau = (static_cast<double>(c.start_concordant) - static_cast<double>(c.start_discordant)) /
                          static_cast<double>(c.start_pairs);
  double start_err = 0;
  for (const JobTimes* j : m) start_err += std::abs(j->m_start - j->p_start);
  c.mean_abs_start_error_s = start_err / n;
  return c;
}

}  // namespace orrery::cli::replay
