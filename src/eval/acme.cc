// Acme's trial coordinator (NSDI'24 §3.2; ../shared/specs/acme.md): decoupled loading
// (preload once per node), decoupled metrics (CPU jobs, released per dataset), and prior-based
// elastic scheduling: datasets longer than a piece are split across GPUs, pieces are assigned
// by longest-processing-time onto the GPUs, and each GPU's pieces are merged into as few GPU
// jobs as the metric releases allow (at most two per GPU). Job order = planned start, so a job array dispatched
// greedily in that order reproduces the LPT assignment (and adapts when priors are off).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "eval/strategy.h"

namespace orrery::eval {

namespace {

struct Piece {
  Slice slice;
  double seconds = 0;
};

class Acme final : public Strategy {
 public:
  explicit Acme(AcmeOptions o) : o_(o) {}
  std::string_view name() const override { return "acme"; }

  Plan Build(const Workload& w, const ClusterSpec& c) const override {
    const uint32_t gpus = std::max<uint32_t>(1, c.nodes * (c.gpus_per_node / w.gpus_per_trial));
    const double overhead = w.startup_s + w.model.checkpoint_bytes() / c.cache_bytes_per_s;
    std::vector<std::vector<Piece>> per_gpu = AssignLpt(Pieces(w, gpus), gpus, overhead);
    MakeContiguous(w, &per_gpu);
    struct Planned {
      GpuJob job;
      double start;
      uint32_t gpu;
    };
    std::vector<Planned> jobs;
    for (uint32_t g = 0; g < gpus; ++g) {
      double t = 0;
      for (GpuJob& j : CutJobs(w, per_gpu[g], overhead)) {
        const double d = overhead + InferSeconds(w, j);
        jobs.push_back(Planned{std::move(j), t, g});
        t += d;
      }
    }
    std::stable_sort(jobs.begin(), jobs.end(), [](const Planned& a, const Planned& b) {
      return a.start != b.start ? a.start < b.start : a.gpu < b.gpu;
    });
    Plan p;
    p.load = LoadSource::kNodeCache;
    p.metric = MetricPlacement::kCpuJob;
    p.release = MetricRelease::kDatasetDone;
    for (Planned& j : jobs) p.gpu_jobs.push_back(std::move(j.job));
    return p;
  }

 private:
  // Datasets longer than a piece (the GPUs' average share / granularity) are cut into equal
  // slices no longer than a piece. Sorted longest first (ties: dataset, then slice order).
  std::vector<Piece> Pieces(const Workload& w, uint32_t gpus) const {
    double total = 0;
    for (const DatasetWork& d : w.datasets) total += d.infer_s();
    const double cap = total / gpus / static_cast<double>(o_.granularity);
    std::vector<Piece> out;
    for (uint32_t i = 0; i < w.datasets.size(); ++i) {
      const DatasetWork& d = w.datasets[i];
      uint64_t k = cap > 0 ? static_cast<uint64_t>(std::ceil(d.infer_s() / cap - 1e-9)) : 1;
      k = std::clamp<uint64_t>(k, 1, d.examples);
      for (uint64_t s = 0; s < k; ++s) {
        Slice sl{i, d.examples * s / k, d.examples * (s + 1) / k};
        out.push_back(Piece{sl, d.infer_s_per_example * static_cast<double>(sl.examples())});
      }
    }
    std::stable_sort(out.begin(), out.end(), [](const Piece& a, const Piece& b) { return a.seconds > b.seconds; });
    return out;
  }

  // Longest-processing-time: each piece to the least-loaded GPU (lowest index on ties).
  static std::vector<std::vector<Piece>> AssignLpt(const std::vector<Piece>& pieces, uint32_t gpus, double overhead) {
    std::vector<std::vector<Piece>> per_gpu(gpus);
    std::vector<double> load(gpus, overhead);
    for (const Piece& p : pieces) {
      const size_t g = static_cast<size_t>(std::min_element(load.begin(), load.end()) - load.begin());
      per_gpu[g].push_back(p);
      load[g] += p.seconds;
    }
    return per_gpu;
  }

  // A dataset's pieces have equal sizes (within one example), so their example ranges can be
  // handed out again in GPU order: one GPU's pieces of a dataset become adjacent and merge into
  // one slice (one run of the trial command instead of several).
  static void MakeContiguous(const Workload& w, std::vector<std::vector<Piece>>* per_gpu) {
    std::vector<std::vector<Piece*>> by_dataset(w.datasets.size());
    for (auto& pieces : *per_gpu)
      for (Piece& p : pieces) by_dataset[p.slice.dataset].push_back(&p);
    for (auto& ps : by_dataset) {
      std::vector<Slice> ranges;
      for (const Piece* p : ps) ranges.push_back(p->slice);
      std::sort(ranges.begin(), ranges.end(), [](const Slice& a, const Slice& b) { return a.begin < b.begin; });
      for (size_t i = 0; i < ps.size(); ++i) {
        ps[i]->slice = ranges[i];
        ps[i]->seconds = w.datasets[ranges[i].dataset].infer_s_per_example * static_cast<double>(ranges[i].examples());
      }
    }
  }

  // One GPU's pieces as at most two GPU jobs: with metric_cut, the pieces of datasets whose
  // metric job outlasts a job start (the long metrics: code execution, judges, long
  // generations) come first, longest metric first, and end the first job, so that their CPU
  // metric jobs run while the second job infers the rest. Adjacent slices of one dataset merge.
  std::vector<GpuJob> CutJobs(const Workload& w, std::vector<Piece> pieces, double overhead) const {
    auto metric_s = [&](const Piece& p) { return MetricPhase(w, p.slice.dataset).seconds; };
    std::sort(pieces.begin(), pieces.end(), [&](const Piece& a, const Piece& b) {
      if (metric_s(a) != metric_s(b)) return metric_s(a) > metric_s(b);
      return a.slice.dataset != b.slice.dataset ? a.slice.dataset < b.slice.dataset : a.slice.begin < b.slice.begin;
    });
    std::vector<GpuJob> jobs(1);
    for (size_t i = 0; i < pieces.size(); ++i) {
      const bool first_short = o_.metric_cut && i > 0 && metric_s(pieces[i - 1]) > overhead &&
                               metric_s(pieces[i]) <= overhead;
      if (first_short) jobs.emplace_back();
      AppendSlice(&jobs.back(), pieces[i].slice);
    }
    if (jobs.front().slices.empty()) jobs.erase(jobs.begin());
    return jobs;
  }

  static void AppendSlice(GpuJob* job, const Slice& s) {
    if (!job->slices.empty()) {
      Slice& last = job->slices.back();
      if (last.dataset == s.dataset && last.end == s.begin) {
        last.end = s.end;
        return;
      }
    }
    job->slices.push_back(s);
  }

  AcmeOptions o_;
};

}  // namespace

std::unique_ptr<Strategy> MakeAcme(AcmeOptions o) { return std::make_unique<Acme>(o); }

}  // namespace orrery::eval
