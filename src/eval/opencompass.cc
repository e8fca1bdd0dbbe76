// OpenCompass's two inference partitioners (opencompass/partitioners/size.py and
// num_worker.py at a5acc4bb, as ../shared/corpora/eval-suite/README.md documents them). Every
// task is one GPU job that loads the checkpoint from shared storage; the evaluation stage
// (NaivePartitioner: one task per dataset, no GPU) runs after the whole inference stage.
#include <algorithm>
#include <numeric>

#include "eval/strategy.h"

namespace orrery::eval {

uint64_t SizeFactor(const DatasetWork& d, uint64_t gen_task_coef) {
  uint64_t f = d.task == TaskType::kPerplexity ? d.candidates : gen_task_coef;
  for (std::string_view pat : {"bbh*", "gsm8k*", "math*", "strategyqa*", "agieval-jec*", "agieval-gaokao-mathcloze",
                               "agieval-math", "*professional_law"})
    if (GlobMatch(pat, d.name)) return f * 10;
  return f;
}

namespace {

uint64_t CeilDiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// Consecutive parts [i, i + step) of a dataset.
void Cut(uint32_t dataset, uint64_t size, uint64_t step, std::vector<Slice>* out) {
  for (uint64_t b = 0; b < size; b += step) out->push_back(Slice{dataset, b, std::min(size, b + step)});
}

Plan StagedPlan() {
  Plan p;
  p.load = LoadSource::kSharedStorage;
  p.metric = MetricPlacement::kCpuJob;
  p.release = MetricRelease::kAllInferenceDone;
  return p;
}

class SizePartitioner final : public Strategy {
 public:
  explicit SizePartitioner(SizePartitionerOptions o) : o_(o) {}
  std::string_view name() const override { return "opencompass-size"; }

  Plan Build(const Workload& w, const ClusterSpec&) const override {
    // Datasets sorted by cost, largest first (stable: ties keep the suite order).
    std::vector<uint32_t> order(w.datasets.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return Cost(w, a) > Cost(w, b); });
    struct Chunk {
      Slice slice;
      uint64_t cost;
    };
    std::vector<Chunk> chunks;
    for (uint32_t d : order) {
      const uint64_t size = w.datasets[d].examples, factor = SizeFactor(w.datasets[d], o_.gen_task_coef);
      if (Cost(w, d) <= o_.max_task_size) {
        chunks.push_back(Chunk{Slice{d, 0, size}, Cost(w, d)});
        continue;
      }
      // step = max_task_size // factor, evened out; each part counts as max_task_size.
      uint64_t step = std::max<uint64_t>(1, o_.max_task_size / factor);
      step = CeilDiv(size, CeilDiv(size, step));
      std::vector<Slice> parts;
      Cut(d, size, step, &parts);
      for (const Slice& s : parts) chunks.push_back(Chunk{s, o_.max_task_size});
    }
    Plan p = StagedPlan();
    uint64_t current = 0;
    for (const Chunk& c : chunks) {
      const bool close = !o_.heuristic || p.gpu_jobs.empty() || current + c.cost > o_.max_task_size;
      if (close) {
        p.gpu_jobs.emplace_back();
        current = 0;
      }
      p.gpu_jobs.back().slices.push_back(c.slice);
      current += c.cost;
    }
    return p;
  }

 private:
  uint64_t Cost(const Workload& w, uint32_t d) const {
    return SizeFactor(w.datasets[d], o_.gen_task_coef) * w.datasets[d].examples;
  }
  SizePartitionerOptions o_;
};

class NumWorkerPartitioner final : public Strategy {
 public:
  explicit NumWorkerPartitioner(NumWorkerPartitionerOptions o) : o_(o) {}
  std::string_view name() const override { return "opencompass-workers"; }

  Plan Build(const Workload& w, const ClusterSpec&) const override {
    const uint64_t num_split = o_.num_split ? o_.num_split : o_.num_worker;
    std::vector<Slice> chunks;  // the user's order, no sorting
    for (uint32_t d = 0; d < w.datasets.size(); ++d) {
      const uint64_t size = w.datasets[d].examples;
      if (num_split <= 1 || size <= o_.min_task_size) {
        chunks.push_back(Slice{d, 0, size});
        continue;
      }
      Cut(d, size, std::max(CeilDiv(size, num_split), o_.min_task_size), &chunks);
    }
    Plan p = StagedPlan();
    if (!o_.heuristic) {
      for (const Slice& s : chunks) p.gpu_jobs.push_back(GpuJob{{s}});
      return p;
    }
    std::vector<GpuJob> buckets(std::min<uint64_t>(o_.num_worker, chunks.size()));
    for (size_t i = 0; i < chunks.size(); ++i) buckets[i % o_.num_worker].slices.push_back(chunks[i]);
    for (GpuJob& b : buckets)
      if (!b.slices.empty()) p.gpu_jobs.push_back(std::move(b));
    return p;
  }

 private:
  NumWorkerPartitionerOptions o_;
};

}  // namespace

std::unique_ptr<Strategy> MakeSizePartitioner(SizePartitionerOptions o) {
  return std::make_unique<SizePartitioner>(o);
}
std::unique_ptr<Strategy> MakeNumWorkerPartitioner(NumWorkerPartitionerOptions o) {
  return std::make_unique<NumWorkerPartitioner>(o);
}

}  // namespace orrery::eval
