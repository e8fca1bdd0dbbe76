#include "workload/generator.h"

#include <algorithm>
#include <map>
#include <queue>
#include <cmath>
#include <limits>
#include <string>
#include <tuple>
#include <unordered_set>

#include "base/result.h"
#include "base/rng.h"
#include "workload/calibration_data.h"

namespace orrery::workload {
namespace {

constexpr uint8_t kCpuClass = 255;

// Generic deep-learning job stems (model_dataset) for classes without their own list.
const char* const kGenericStems[] = {
    "resnet50_imagenet",  "resnet101_imagenet", "vgg16_imagenet",     "mobilenetv2_imagenet",
    "efficientnet_b0_imagenet", "vit_b16_imagenet", "swin_t_imagenet", "inception_v3_imagenet",
    "resnet18_cifar10",   "wrn28_cifar100",     "densenet121_cifar10", "yolov5s_coco",
    "maskrcnn_r50_coco",  "fasterrcnn_coco",    "deeplabv3_cityscapes", "unet_kits19",
    "pointnet_modelnet40", "bert_base_squad",   "bert_large_wiki",    "roberta_glue",
    "gpt2_openwebtext",   "transformer_wmt16",  "t5_small_c4",        "lstm_ptb",
    "conformer_librispeech", "wav2vec2_librispeech", "ncf_movielens", "dlrm_criteo",
    "moco_v2_imagenet",   "simclr_imagenet",    "nas_darts_cifar10",  "gan_celeba",
    "stylegan2_ffhq",     "ppo_atari",          "face_recog_ms1m",    "reid_market1501",
};
const char* const kCpuStems[] = {"preprocess", "tokenize", "eval_metrics", "data_convert", "pack_shards",
                                 "compute_stats", "copy_ckpt", "tensorboard"};
const uint32_t kBatch[] = {16, 32, 64, 128, 256, 512, 1024};
const char* const kLr[] = {"0.1", "0.05", "0.01", "0.001", "3e-4", "1e-4", "2e-5"};

// Slurm-style round walltime requests (seconds).
const double kWalltimeSteps[] = {300, 600, 900, 1800, 3600, 7200, 14400, 21600, 28800, 43200,
                                 86400, 172800, 259200, 432000, 604800, 1209600, 2592000};

struct UserRec {
  uint16_t vc = 0;
  uint32_t first = 0, count = 0;          // GPU templates
  uint32_t cpu_first = 0, cpu_count = 0;  // CPU templates
  double walltime_factor = 1;
};

// Closed-loop arrivals: the GPUs a VC's submitted jobs hold over time, assuming each runs
// from its submission (start +gpus, end -gpus events after `now`).
struct VcDemand {
  std::multimap<double, int64_t> events;
  int64_t held = 0;  // GPUs held at the last query time
};

// A generated job waiting to be emitted in submit order.
struct Queued {
  Job job;
  uint64_t seq = 0;
  bool operator>(const Queued& o) const { return job.submit != o.job.submit ? job.submit > o.job.submit : seq > o.seq; }
};

struct Template {
  uint32_t user = 0;
  uint32_t name = 0;
  uint32_t gpus = 0;
  uint8_t cls = 0;
  bool long_run = false;   // drawn from its class's tail (long-run) component
  double log_typical = 0;  // log of the typical duration (seconds)
};

// One of the two job streams of BatchModel::kShortSweeps / LongRunArrivals::kFlat (docs/workload.md
// model item 15): the GPU templates of one duration component.
struct RunStream {
  std::vector<double> user_cdf;                // cumulative user activity x the user's component share
  std::vector<std::vector<uint32_t>> tpl;      // per user: its template slots of the component
  std::vector<std::vector<double>> tpl_cdf;    // per user: their cumulative Zipf popularity
  double job_share = 0;                        // expected share of the GPU jobs
};
enum class RunKind : uint8_t { kShort = 0, kLong = 1 };

// Index of the first cumulative value > x (cdf ascending, last = total).
uint32_t PickCdf(const std::vector<double>& cdf, size_t n, double x) {
  size_t i = std::upper_bound(cdf.begin(), cdf.begin() + n, x) - cdf.begin();
  return static_cast<uint32_t>(std::min(i, n - 1));
}

}  // namespace

struct WorkloadGenerator::Impl {
  WorkloadSpec spec;
  Trace header;
  Rng arrivals, jobs;
  std::vector<UserRec> users;
  std::vector<double> user_cdf;      // cumulative activity
  std::vector<double> zipf_prefix;   // prefix sums of 1/k^template_zipf
  std::vector<Template> templates;
  std::vector<double> class_state_cdf;  // 3 per class (+ CPU class at the end)
  std::array<double, 168> rate_per_s{};  // arrival rate per hour of week (batch events)
  std::vector<double> batch_cdf;  // P(B <= k) at index k - 1 (empty: batches off)
  double batch_mean = 1;          // E[B]
  // Two streams (model item 15): per hour of week, the shares of the events that are CPU jobs
  // and long runs (the rest open a sweep of short runs); the hour of week of the last event.
  bool split = false;
  std::array<RunStream, 2> streams;  // index RunKind
  std::array<double, 168> cpu_event_share{}, long_event_share{};
  int event_how = 0;
  std::vector<SizeWeight> lone_sizes;  // kVenusLoneSubmissionGpus as a size mix
  Rng batches;
  // The batch being emitted: jobs left after the current one, its user and template.
  uint32_t batch_left = 0, batch_user = 0, batch_tpl = 0;
  bool batch_cpu = false;
  bool batch_first = true;  // the job just drawn opened its batch
  double batch_submit = 0;  // closed loop: the submit time of the batch's first job
  double t = 0;           // current time (s since epoch_unix)
  double horizon = 0;     // seconds (when spec.jobs == 0)
  uint64_t produced = 0;  // jobs emitted
  uint64_t drawn = 0;     // jobs drawn
  bool drawing_done = false;
  std::vector<VcDemand> demand;  // per VC (closed loop)
  std::vector<std::vector<VcDemand>> node_demand;  // per VC, per node (closed loop per node)
  std::priority_queue<Queued, std::vector<Queued>, std::greater<Queued>> ready;
  double cpu_share = 0;

  Impl(const WorkloadSpec& s, uint64_t seed)
      : spec(s), arrivals(seed, "workload/arrivals"), jobs(seed, "workload/jobs"), batches(seed, "workload/batches") {
    for (const LoneSubmissions& l : kVenusLoneSubmissionGpus) lone_sizes.push_back({l.gpus, static_cast<double>(l.bins)});
    BuildRates();
    BuildUsers(seed);
    BuildTemplates(seed);
    split = spec.batches == BatchModel::kShortSweeps || spec.long_runs != LongRunArrivals::kWeekly;
    if (split) {
      BuildStreams();
      BuildStreamRates();
    }
    header.epoch_unix = spec.epoch_unix;
    header.epoch_known = true;
    header.origin = "generate:" + spec.name;
    horizon = spec.days * 86400.0;
    demand.resize(spec.vcs.size());
    node_demand.resize(spec.vcs.size());
    for (size_t v = 0; v < spec.vcs.size(); ++v)
      node_demand[v].resize((spec.vcs[v].gpus + spec.gpus_per_node - 1) / spec.gpus_per_node);
  }

  void BuildRates() {
    cpu_share = spec.include_cpu_jobs ? std::clamp(spec.cpu_job_share, 0.0, 0.99) : 0.0;
    double mean = 0;
    for (double v : spec.hour_of_week) mean += v;
    mean /= 168.0;
    batch_mean = BuildBatchCdf();
    double base = spec.gpu_jobs_per_day / 86400.0 * spec.load / (1.0 - cpu_share) / batch_mean;
    for (int h = 0; h < 168; ++h) rate_per_s[h] = mean > 0 ? base * spec.hour_of_week[h] / mean : base;
  }

  // Fills batch_cdf (sweeps: Zipf on 1..kVenusBatchMax) and returns E[B] (1 for single jobs;
  // with short-sweeps: of the short-run stream's events).
  double BuildBatchCdf() {
    switch (spec.batches) {
      case BatchModel::kSingle:
        return 1.0;
      case BatchModel::kSweeps:
      case BatchModel::kShortSweeps:
        break;
    }
    double total = 0, mean = 0;
    for (uint32_t k = 1; k <= kVenusBatchMax; ++k) {
      double w = std::pow(static_cast<double>(k), -kVenusBatchZipf);
      total += w;
      mean += k * w;
      batch_cdf.push_back(total);
    }
    for (double& c : batch_cdf) c /= total;
    return mean / total;
  }

  // Jobs in the next batch (>= 1).
  uint32_t DrawBatchSize() {
    if (batch_cdf.empty()) return 1;
    return PickCdf(batch_cdf, batch_cdf.size(), batches.Uniform()) + 1;
  }

  void BuildUsers(uint64_t seed) {
    Rng rng(seed, "workload/users");
    const uint32_t n = spec.users;
    std::vector<double> act(n);
    double total = 0;
    for (uint32_t k = 0; k < n; ++k) total += act[k] = 1.0 / std::pow(k + 1.0, spec.user_zipf);
    user_cdf.resize(n);
    double c = 0;
    for (uint32_t k = 0; k < n; ++k) user_cdf[k] = (c += act[k] / total);
    // Home VC: users in decreasing activity go to the VC with the largest remaining
    // capacity deficit, so expected job shares per VC follow VC capacity.
    const auto& vcs = spec.vcs;
    double cap_total = 0;
    for (const auto& v : vcs) cap_total += v.gpus;
    std::vector<double> deficit(vcs.size());
    for (size_t i = 0; i < vcs.size(); ++i) deficit[i] = vcs[i].gpus / cap_total;
    users.resize(n);
    for (size_t i = 0; i < vcs.size(); ++i) header.vcs.Intern(vcs[i].name);
    for (uint32_t k = 0; k < n; ++k) {
      size_t best = std::max_element(deficit.begin(), deficit.end()) - deficit.begin();
      deficit[best] -= act[k] / total;
      users[k].vc = static_cast<uint16_t>(best);
      users[k].walltime_factor =
          1.0 + rng.LogNormal(std::log(std::max(0.05, spec.walltime_over_median - 1.0)), spec.walltime_over_sigma);
      char buf[32];
      std::snprintf(buf, sizeof buf, "user%03u", k);
      header.users.Intern(buf);
    }
    zipf_prefix.resize(1);
    zipf_prefix[0] = 0;
  }

  double ZipfPrefix(uint32_t k) {  // sum_{i=1..k} 1/i^s, extended lazily
    while (zipf_prefix.size() <= k) {
      double i = static_cast<double>(zipf_prefix.size());
      zipf_prefix.push_back(zipf_prefix.back() + 1.0 / std::pow(i, spec.template_zipf));
    }
    return zipf_prefix[k];
  }

  std::string MakeName(Rng& rng, const JobClass& cls, bool cpu) {
    std::string name;
    if (cpu) {
      name = kCpuStems[rng.Below(std::size(kCpuStems))];
      name += "_" + std::string(kGenericStems[rng.Below(std::size(kGenericStems))]);
      return name;
    }
    if (!cls.name_stems.empty()) {
      name = cls.name_stems[rng.Below(cls.name_stems.size())];
    } else {
      name = kGenericStems[rng.Below(std::size(kGenericStems))];
    }
    if (rng.Uniform() < 0.6) name += "_bs" + std::to_string(kBatch[rng.Below(std::size(kBatch))]);
    if (rng.Uniform() < 0.5) name += std::string("_lr") + kLr[rng.Below(std::size(kLr))];
    return name;
  }

  // A size from `mix` restricted to sizes <= cap.
  static uint32_t DrawGpus(Rng& rng, const std::vector<SizeWeight>& mix, uint32_t cap) {
    double total = 0;
    for (const auto& b : mix)
      if (b.gpus <= cap) total += b.weight;
    if (total <= 0) return std::max<uint32_t>(1, std::min<uint32_t>(cap, 1));
    double x = rng.Uniform() * total;
    for (const auto& b : mix) {
      if (b.gpus > cap) continue;
      if (x < b.weight) return b.gpus;
      x -= b.weight;
    }
    for (auto it = mix.rbegin(); it != mix.rend(); ++it)
      if (it->gpus <= cap) return it->gpus;
    return 1;
  }

  // Log of a template's typical duration; *tail: drawn from the tail (long-run) component.
  double DrawLogTypical(Rng& rng, const JobClass& cls, uint32_t gpus, bool* tail_out) {
    double lg = gpus > 1 ? std::log2(static_cast<double>(gpus)) : 0.0;
    double p_tail = std::min(0.98, cls.tail_prob * (1.0 + cls.tail_gpu_slope * lg));
    *tail_out = rng.Uniform() < p_tail;
    return DrawLogDuration(rng, cls, gpus, *tail_out);
  }

  // Log of a typical duration of the given component.
  double DrawLogDuration(Rng& rng, const JobClass& cls, uint32_t gpus, bool tail) {
    double med = tail ? cls.tail_median_s : cls.body_median_s;
    double sigma = tail ? cls.tail_sigma : cls.body_sigma;
    double s2 = sigma * sigma - spec.run_noise_sigma * spec.run_noise_sigma;
    double st = s2 > 0 ? std::sqrt(s2) : 0.0;
    return std::log(med) + cls.gpu_duration_exponent * std::log(std::max(1u, gpus)) + st * rng.Normal();
  }

  // Largest job a VC of `vc_gpus` GPUs accepts: max_job_vc_share of it, at least 1 GPU.
  uint32_t MaxJobGpus(uint32_t vc_gpus) const {
    double cap = std::floor(spec.max_job_vc_share * vc_gpus + 1e-9);
    return static_cast<uint32_t>(std::clamp(cap, 1.0, static_cast<double>(vc_gpus)));
  }

  // Expected duration multiplier of a class's final-state mix (completed x1, cancelled x
  // cancelled_factor, failed x failed_scale * E[U^failed_shape] = failed_scale / (shape + 1)).
  double StateDurationFactor(const StateMix& m) const {
    double tot = m.completed + m.cancelled + m.failed;
    return (m.completed + m.cancelled * spec.cancelled_factor +
            m.failed * spec.failed_scale / (spec.failed_shape + 1.0)) / tot;
  }

  // Expected GPU-seconds of one job of user k (templates by Zipf popularity; per-run noise
  // exp(N(0, s)) has mean exp(s^2/2); the clip at max_duration_s is ignored).
  double ExpectedGpuSecondsPerJob(uint32_t k) const {
    const UserRec& u = users[k];
    const double noise = std::exp(0.5 * spec.run_noise_sigma * spec.run_noise_sigma);
    double e = 0;
    for (uint32_t i = 0; i < u.count; ++i) {
      const Template& t = templates[u.first + i];
      double pop = (zipf_prefix[i + 1] - zipf_prefix[i]) / zipf_prefix[u.count];
      e += pop * t.gpus * std::exp(t.log_typical) * noise * StateDurationFactor(spec.classes[t.cls].states);
    }
    return e;
  }

  // Rescales user activity per VC so that each VC's expected GPU-seconds (given the drawn
  // templates) are proportional to its capacity; the users' order within a VC (and so the
  // Zipf shape of activity) is kept. Job counts per VC then follow capacity / expected
  // GPU-seconds per job: VCs whose size cap admits only small jobs receive more jobs.
  void BalanceVcLoad() {
    const size_t nv = spec.vcs.size();
    std::vector<double> act(users.size()), vc_load(nv, 0.0);
    for (uint32_t k = 0; k < users.size(); ++k) {
      act[k] = user_cdf[k] - (k ? user_cdf[k - 1] : 0.0);
      vc_load[users[k].vc] += act[k] * ExpectedGpuSecondsPerJob(k);
    }
    const double cap_total = static_cast<double>(spec.cluster_gpus());
    double load_total = 0;
    for (double l : vc_load) load_total += l;
    double total = 0;
    for (uint32_t k = 0; k < users.size(); ++k) {
      double l = vc_load[users[k].vc];
      double m = l > 0 ? (spec.vcs[users[k].vc].gpus / cap_total) / (l / load_total) : 1.0;
      total += act[k] *= m;
    }
    double c = 0;
    for (uint32_t k = 0; k < users.size(); ++k) user_cdf[k] = (c += act[k] / total);
  }

  // Each user's template counts (GPU: its activity share of spec.templates, at least 2; CPU:
  // a quarter of that) and the template slots they occupy, GPU templates first.
  void AssignTemplateCounts() {
    uint32_t next = 0, max_count = 0;
    for (uint32_t k = 0; k < users.size(); ++k) {
      UserRec& u = users[k];
      double share = user_cdf[k] - (k ? user_cdf[k - 1] : 0.0);
      u.first = next;
      u.count = std::max<uint32_t>(2, static_cast<uint32_t>(std::lround(spec.templates * share)));
      next += u.count;
      if (cpu_share > 0) {
        u.cpu_first = next;
        u.cpu_count = std::max<uint32_t>(1, u.count / 4);
        next += u.cpu_count;
      }
      max_count = std::max({max_count, u.count, u.cpu_count});
    }
    ZipfPrefix(max_count);
  }

  // A GPU template's size, component and typical duration. kClassMix: the size first (the
  // tail probability grows with it); kLoneSubmissions: the component first, a long run's size
  // from the Venus lone submissions (model item 16).
  void DrawSizeAndDuration(Rng& rng, const JobClass& cls, uint32_t cap, Template* t) {
    switch (spec.long_run_sizes) {
      case LongRunSizes::kClassMix:
        t->gpus = DrawGpus(rng, cls.gpus, cap);
        t->log_typical = DrawLogTypical(rng, cls, t->gpus, &t->long_run);
        return;
      case LongRunSizes::kLoneSubmissions:
        t->long_run = rng.Uniform() < std::min(0.98, cls.tail_prob);
        t->gpus = DrawGpus(rng, t->long_run ? lone_sizes : cls.gpus, cap);
        t->log_typical = DrawLogDuration(rng, cls, t->gpus, t->long_run);
        return;
    }
  }

  // Draws every template's class, size, typical duration and name (into `names`, in slot order).
  void DrawTemplateSet(Rng& rng, std::vector<std::string>* names) {
    double cls_total = 0;
    for (const auto& c : spec.classes) cls_total += c.weight;
    templates.clear();
    names->clear();
    std::unordered_set<std::string> seen;  // per user
    for (uint32_t k = 0; k < users.size(); ++k) {
      const UserRec& u = users[k];
      const uint32_t cap = MaxJobGpus(spec.vcs[u.vc].gpus);
      seen.clear();
      for (uint32_t i = 0; i < u.count; ++i) {
        Template t;
        t.user = k;
        double x = rng.Uniform() * cls_total;
        uint8_t ci = 0;
        for (; ci + 1u < spec.classes.size(); ++ci) {
          if (x < spec.classes[ci].weight) break;
          x -= spec.classes[ci].weight;
        }
        const JobClass& cls = spec.classes[ci];
        t.cls = ci;
        DrawSizeAndDuration(rng, cls, cap, &t);
        std::string name = MakeName(rng, cls, false);
        // Numbered runs / variants of a name the user already has.
        if (!seen.insert(name).second) {
          for (int run = 2;; ++run) {
            std::string v = name + "_run" + std::to_string(run);
            if (seen.insert(v).second) {
              name = v;
              break;
            }
          }
        }
        names->push_back(std::move(name));
        templates.push_back(t);
      }
      for (uint32_t i = 0; i < u.cpu_count; ++i) {
        Template t;
        t.user = k;
        t.cls = kCpuClass;
        t.gpus = 0;
        t.log_typical = DrawLogTypical(rng, spec.cpu_class, 1, &t.long_run);
        std::string name = MakeName(rng, spec.cpu_class, true);
        if (!seen.insert(name).second) name += "_" + std::to_string(i);
        seen.insert(name);
        names->push_back(std::move(name));
        templates.push_back(t);
      }
    }
  }

  // Expected GPU-seconds per GPU job given the drawn templates and the user activity.
  double ExpectedGpuSecondsPerJob() const {
    double e = 0;
    for (uint32_t k = 0; k < users.size(); ++k)
      e += (user_cdf[k] - (k ? user_cdf[k - 1] : 0.0)) * ExpectedGpuSecondsPerJob(k);
    return e;
  }

  // |expected / target - 1| of the drawn templates' GPU-seconds per job (0 without a target).
  double LoadDeviation() const {
    if (!(spec.template_gpu_seconds_target > 0)) return 0;
    return std::abs(ExpectedGpuSecondsPerJob() / spec.template_gpu_seconds_target - 1.0);
  }

  // Draws the templates (and balances the VC loads on them). With a GPU-seconds target the
  // draw is conditioned on it: the whole set is redrawn from the same stream until its
  // expected GPU-seconds per job is within spec.template_load_tolerance of the target (the
  // closest of spec.max_template_draws draws otherwise), so that a preset's offered load is a
  // property of the preset rather than of which few large, long templates a seed happened to
  // draw (docs/workload.md, "Queueing").
  void BuildTemplates(uint64_t seed) {
    Rng rng(seed, "workload/templates");
    AssignTemplateCounts();
    const std::vector<double> activity = user_cdf;
    std::vector<Template> best;
    std::vector<std::string> names, best_names;
    std::vector<double> best_cdf;
    double best_dev = std::numeric_limits<double>::infinity();
    for (uint32_t draw = 0; draw < std::max(1u, spec.max_template_draws); ++draw) {
      DrawTemplateSet(rng, &names);
      user_cdf = activity;
      if (spec.balance_vc_load) BalanceVcLoad();
      const double dev = LoadDeviation();
      if (dev < best_dev) {
        best_dev = dev;
        best.swap(templates);
        best_names.swap(names);
        best_cdf = user_cdf;
      }
      if (best_dev <= spec.template_load_tolerance) break;
    }
    templates = std::move(best);
    user_cdf = std::move(best_cdf);
    for (size_t i = 0; i < templates.size(); ++i) templates[i].name = header.names.Intern(best_names[i]);
    auto add_states = [&](const StateMix& m) {
      double tot = m.completed + m.cancelled + m.failed;
      class_state_cdf.push_back(m.completed / tot);
      class_state_cdf.push_back((m.completed + m.cancelled) / tot);
      class_state_cdf.push_back(1.0);
    };
    for (const auto& c : spec.classes) add_states(c.states);
    add_states(spec.cpu_class.states);
  }

  // Splits the GPU templates by duration component (model item 15): each stream's users are
  // weighted by activity x the popularity share of their templates in that component, and a
  // template is picked within its user's component by popularity, so each template keeps the
  // expected job share it has with one stream (activity x popularity).
  void BuildStreams() {
    for (RunStream& st : streams) {
      st.tpl.resize(users.size());
      st.tpl_cdf.resize(users.size());
    }
    std::array<double, 2> total{};
    for (uint32_t k = 0; k < users.size(); ++k) {
      const UserRec& u = users[k];
      const double act = user_cdf[k] - (k ? user_cdf[k - 1] : 0.0);
      std::array<double, 2> mass{};
      for (uint32_t i = 0; i < u.count; ++i) {
        const size_t c = templates[u.first + i].long_run ? 1 : 0;
        mass[c] += (zipf_prefix[i + 1] - zipf_prefix[i]) / zipf_prefix[u.count];
        streams[c].tpl[k].push_back(u.first + i);
        streams[c].tpl_cdf[k].push_back(mass[c]);
      }
      for (size_t c = 0; c < 2; ++c) streams[c].user_cdf.push_back(total[c] += act * mass[c]);
    }
    const double all = total[0] + total[1];
    for (size_t c = 0; c < 2; ++c) streams[c].job_share = all > 0 ? total[c] / all : 0.0;
  }

  // E[B] of the long-run stream: sweeps replicate long runs too; short-sweeps submit them alone.
  double LongBatchMean() const { return spec.batches == BatchModel::kSweeps ? batch_mean : 1.0; }

  // Event rates of the two streams per hour of week: long runs at rate(job share) x (profile or
  // flat), short runs at rate(job share) x profile / E[B], CPU jobs (one per event) at their share.
  void BuildStreamRates() {
    double mean = 0;
    for (double v : spec.hour_of_week) mean += v;
    mean /= 168.0;
    const double jobs_per_s = spec.gpu_jobs_per_day / 86400.0 * spec.load;
    for (int h = 0; h < 168; ++h) {
      const double profile = mean > 0 ? spec.hour_of_week[h] / mean : 1.0;
      double long_w = profile;
      switch (spec.long_runs) {
        case LongRunArrivals::kWeekly:
          break;
        case LongRunArrivals::kFlat:
          long_w = 1.0;
          break;
      }
      const double lr = jobs_per_s * streams[1].job_share * long_w / LongBatchMean();
      const double sr = jobs_per_s * streams[0].job_share * profile / batch_mean;
      const double cr = jobs_per_s * profile * cpu_share / (1.0 - cpu_share);
      rate_per_s[h] = lr + sr + cr;
      cpu_event_share[h] = rate_per_s[h] > 0 ? cr / rate_per_s[h] : 0.0;
      long_event_share[h] = rate_per_s[h] > 0 ? lr / rate_per_s[h] : 0.0;
    }
  }

  // Advances t to the next arrival; false at the horizon.
  bool NextArrival() {
    for (;;) {
      double abs = static_cast<double>(spec.epoch_unix) + t;
      double hour_start = std::floor(abs / 3600.0) * 3600.0;
      double hour_end = hour_start + 3600.0;
      int64_t hour_index = static_cast<int64_t>(hour_start / 3600.0);
      int64_t day = hour_index >= 0 ? hour_index / 24 : (hour_index - 23) / 24;
      int dow = static_cast<int>(((day + 3) % 7 + 7) % 7);  // 1970-01-01 was a Thursday
      int how = dow * 24 + static_cast<int>(hour_index - day * 24);
      double rate = rate_per_s[how];
      double end_rel = hour_end - static_cast<double>(spec.epoch_unix);
      if (spec.jobs == 0 && t >= horizon) return false;
      if (rate > 0) {
        double dt = arrivals.Exponential(rate);
        if (t + dt < end_rel) {
          t += dt;
          event_how = how;
          return spec.jobs != 0 || t < horizon;
        }
      }
      t = end_rel;
    }
  }

  // Applies the booked events of `d` up to time t.
  static void Advance(VcDemand& d, double t) {
    while (!d.events.empty() && d.events.begin()->first <= t) {
      d.held += d.events.begin()->second;
      d.events.erase(d.events.begin());
    }
  }

  // Closed loop: the earliest time x >= t from which `gpus` more GPUs fit into `d` (a VC or a
  // node of `capacity` GPUs) for the whole of [x, x + dur), given every booked job (events are
  // applied per instant, so a job ending and another starting at the same time never add up).
  static double EarliestFit(VcDemand& d, int64_t capacity, double t, int64_t gpus, double dur) {
    Advance(d, t);
    const int64_t room = capacity - gpus;
    auto fits_until = [&](std::multimap<double, int64_t>::const_iterator it, int64_t held, double until) {
      while (it != d.events.end() && it->first < until) {
        const double x = it->first;
        for (; it != d.events.end() && it->first == x; ++it) held += it->second;
        if (held > room) return false;
      }
      return true;
    };
    int64_t held = d.held;
    double x = t;
    for (auto it = d.events.cbegin();;) {
      if (held <= room && fits_until(it, held, x + dur)) return x;
      if (it == d.events.cend()) return x;  // unreachable: with nothing booked every job fits (gpus <= capacity)
      x = it->first;
      for (; it != d.events.cend() && it->first == x; ++it) held += it->second;
    }
  }

  // GPUs of node n of VC v (the last node holds the remainder).
  int64_t NodeGpus(uint16_t v, size_t n) const {
    const int64_t gpn = spec.gpus_per_node, vc = spec.vcs[v].gpus;
    return std::min<int64_t>(gpn, vc - static_cast<int64_t>(n) * gpn);
  }

  // Booked GPUs of `d` at time x (its past events applied).
  static int64_t HeldAt(const VcDemand& d, double x) {
    int64_t held = d.held;
    for (auto it = d.events.begin(); it != d.events.end() && it->first <= x; ++it) held += it->second;
    return held;
  }

  // The intervals [a, b) from t on in which node `d` has nothing booked (b = inf for the last).
  static std::vector<std::pair<double, double>> IdleIntervals(VcDemand& d, double t) {
    Advance(d, t);
    std::vector<std::pair<double, double>> idle;
    int64_t held = d.held;
    double open = held == 0 ? t : -1;
    for (auto it = d.events.cbegin(); it != d.events.cend();) {
      const double x = it->first;
      for (; it != d.events.cend() && it->first == x; ++it) held += it->second;
      if (held == 0 && open < 0) open = x;
      if (held != 0 && open >= 0) {
        if (x > open) idle.emplace_back(open, x);
        open = -1;
      }
    }
    if (open >= 0) idle.emplace_back(open, std::numeric_limits<double>::infinity());
    return idle;
  }

  // Closed loop per node: where and from when a job of `gpus` GPUs fits VC v's nodes for [x, x + dur).
  // A job of at most one node's GPUs needs them free on one node (the earliest node, first fit);
  // a larger one needs ceil(gpus / gpus_per_node) whole nodes idle.
  std::pair<double, std::vector<size_t>> FitNodes(uint16_t v, double t, uint32_t gpus, double dur) {
    std::vector<VcDemand>& nodes = node_demand[v];
    const uint32_t gpn = spec.gpus_per_node;
    if (gpus <= gpn) {
      double best = std::numeric_limits<double>::infinity();
      size_t at = 0;
      for (size_t n = 0; n < nodes.size(); ++n) {
        if (gpus > NodeGpus(v, n)) continue;
        const double x = EarliestFit(nodes[n], NodeGpus(v, n), t, gpus, dur);
        if (x < best) best = x, at = n;
      }
      return {best, {at}};
    }
    const size_t k = (gpus + gpn - 1) / gpn;
    std::vector<std::vector<std::pair<double, double>>> idle(nodes.size());
    std::vector<double> starts;
    for (size_t n = 0; n < nodes.size(); ++n) {
      if (NodeGpus(v, n) < gpn) continue;
      idle[n] = IdleIntervals(nodes[n], t);
      for (const auto& iv : idle[n]) starts.push_back(iv.first);
    }
    std::sort(starts.begin(), starts.end());
    std::vector<size_t> chosen;
    for (double x : starts) {
      chosen.clear();
      for (size_t n = 0; n < nodes.size() && chosen.size() < k; ++n)
        for (const auto& [a, b] : idle[n])
          if (a <= x && x + dur <= b) {
            chosen.push_back(n);
            break;
          }
      if (chosen.size() == k) return {x, chosen};
    }
    return {starts.empty() ? t : starts.back(), chosen};  // unreachable: the job is at most the VC's whole nodes
  }

  // The nodes of VC v with the fewest booked GPUs at x (a sweep's later jobs, placed at its submit time).
  std::vector<size_t> LeastHeldNodes(uint16_t v, double x, uint32_t gpus) {
    std::vector<std::pair<int64_t, size_t>> by;
    for (size_t n = 0; n < node_demand[v].size(); ++n) by.emplace_back(HeldAt(node_demand[v][n], x), n);
    std::stable_sort(by.begin(), by.end());
    const size_t k = std::min(by.size(), static_cast<size_t>((gpus + spec.gpus_per_node - 1) / spec.gpus_per_node));
    std::vector<size_t> out;
    for (size_t i = 0; i < k; ++i) out.push_back(by[i].second);
    return out;
  }

  // Holds a drawn GPU job back until it fits its VC (closed loop) and books its GPUs.
  void ApplyFeedback(Job* j) {
    if (j->gpus == 0) return;
    switch (spec.arrivals) {
      case ArrivalModel::kOpenLoop:
        return;
      case ArrivalModel::kClosedLoop:
        BookVc(j);
        return;
      case ArrivalModel::kClosedLoopNodes:
        BookNodes(j);
        return;
    }
  }

  // VC-level booking: a batch is held as one (submitted once its first job fits).
  void BookVc(Job* j) {
    const uint16_t v = static_cast<uint16_t>(j->vc.value());
    const double dur = static_cast<double>(j->duration);
    double x = batch_first ? EarliestFit(demand[v], spec.vcs[v].gpus, t, j->gpus, dur) : batch_submit;
    batch_submit = x;
    j->submit = static_cast<Time>(std::floor(x));
    demand[v].events.emplace(x, static_cast<int64_t>(j->gpus));
    demand[v].events.emplace(x + dur, -static_cast<int64_t>(j->gpus));
  }

  // Node-level booking: as BookVc, on nodes (a whole node per node of a multi-node job).
  void BookNodes(Job* j) {
    const uint16_t v = static_cast<uint16_t>(j->vc.value());
    const double dur = static_cast<double>(j->duration);
    std::vector<size_t> at;
    double x = batch_submit;
    if (batch_first) {
      std::tie(x, at) = FitNodes(v, t, j->gpus, dur);
    } else {
      at = LeastHeldNodes(v, x, j->gpus);
    }
    batch_submit = x;
    j->submit = static_cast<Time>(std::floor(x));
    const int64_t per = at.size() > 1 ? static_cast<int64_t>(spec.gpus_per_node) : static_cast<int64_t>(j->gpus);
    for (size_t n : at) {
      node_demand[v][n].events.emplace(x, per);
      node_demand[v][n].events.emplace(x + dur, -per);
    }
  }

  // Emits jobs in submit order: a drawn job is held in `ready` until no later draw can
  // be submitted before it (draw times increase and feedback only delays).
  bool Next(Job* job) {
    for (;;) {
      if (!ready.empty() && (drawing_done || ready.top().job.submit <= static_cast<Time>(std::floor(t)))) {
        *job = ready.top().job;
        ready.pop();
        job->id = JobId(static_cast<uint32_t>(produced++));
        return true;
      }
      if (drawing_done) return false;
      Job j;
      if (!Draw(&j)) {
        drawing_done = true;
        continue;
      }
      ApplyFeedback(&j);
      ready.push(Queued{j, drawn++});
    }
  }

  // Starts a batch at time t: its size, whether it is a CPU batch, its user by activity and
  // one of the user's templates by Zipf popularity.
  void PickTemplate() {
    batch_left = DrawBatchSize() - 1;
    batch_cpu = cpu_share > 0 && jobs.Uniform() < cpu_share;
    PickUserAndTemplate();
  }

  // The batch's user by activity and one of its templates (CPU ones if batch_cpu) by popularity.
  void PickUserAndTemplate() {
    batch_user = PickCdf(user_cdf, user_cdf.size(), jobs.Uniform());
    const UserRec& u = users[batch_user];
    uint32_t cnt = batch_cpu ? u.cpu_count : u.count;
    double r = jobs.Uniform() * zipf_prefix[cnt];
    uint32_t k = PickCdf(zipf_prefix, cnt + 1, r);  // zipf_prefix[0] = 0 -> k in [1, cnt]
    if (k == 0) k = 1;
    batch_tpl = (batch_cpu ? u.cpu_first : u.first) + k - 1;
  }

  // Two streams (model item 15): the event at event_how is a CPU job, a long run (one job; a
  // sweep with kSweeps) or a sweep of short runs; its user and template come from that stream.
  void PickFromStreams() {
    const double x = batches.Uniform();
    batch_cpu = x < cpu_event_share[event_how];
    if (batch_cpu) {
      batch_left = 0;
      PickUserAndTemplate();
      return;
    }
    const RunKind kind = x < cpu_event_share[event_how] + long_event_share[event_how] ? RunKind::kLong : RunKind::kShort;
    const bool alone = kind == RunKind::kLong && spec.batches != BatchModel::kSweeps;
    batch_left = alone ? 0 : DrawBatchSize() - 1;
    const RunStream& st = streams[static_cast<size_t>(kind)];
    batch_user = PickCdf(st.user_cdf, st.user_cdf.size(), jobs.Uniform() * st.user_cdf.back());
    const std::vector<double>& cdf = st.tpl_cdf[batch_user];
    batch_tpl = st.tpl[batch_user][PickCdf(cdf, cdf.size(), jobs.Uniform() * cdf.back())];
  }

  // Draws the next job: the next of the current batch, or the first of a batch at the next
  // arrival event t; false at the end.
  bool Draw(Job* job) {
    if (spec.jobs != 0 && drawn >= spec.jobs) return false;
    batch_first = batch_left == 0;
    if (batch_left > 0) {
      --batch_left;
    } else {
      if (!NextArrival()) return false;
      if (split) {
        PickFromStreams();
      } else {
        PickTemplate();
      }
    }
    Job j;
    j.submit = static_cast<Time>(std::floor(t));
    const bool cpu = batch_cpu;
    const uint32_t uid = batch_user;
    const UserRec& u = users[uid];
    const Template& tp = templates[batch_tpl];
    const JobClass& cls = cpu ? spec.cpu_class : spec.classes[tp.cls];
    size_t ci = cpu ? spec.classes.size() : tp.cls;
    double su = jobs.Uniform();
    JobState st = su < class_state_cdf[3 * ci]       ? JobState::kCompleted
                  : su < class_state_cdf[3 * ci + 1] ? JobState::kCancelled
                                                     : JobState::kFailed;
    double dur = std::exp(tp.log_typical + spec.run_noise_sigma * jobs.Normal());
    if (st == JobState::kCancelled) {
      dur *= spec.cancelled_factor;
    } else if (st == JobState::kFailed) {
      dur *= spec.failed_scale * std::pow(jobs.Uniform(), spec.failed_shape);
    }
    dur = std::clamp(std::round(dur), 1.0, spec.max_duration_s);
    j.duration = static_cast<Duration>(dur);
    // Walltime request: duration x user factor, rounded up to a Slurm-style step.
    double want = dur * u.walltime_factor;
    double wt = kWalltimeSteps[std::size(kWalltimeSteps) - 1];
    for (double s : kWalltimeSteps)
      if (s >= want) {
        wt = s;
        break;
      }
    wt = std::min(wt, spec.max_walltime_s);
    wt = std::max(wt, dur);
    j.walltime = static_cast<Duration>(wt);
    j.user = UserId(uid);
    j.vc = VcId(u.vc);
    j.name = NameId(tp.name);
    j.kind = cls.kind;
    j.gpus = tp.gpus;
    if (cpu) {
      j.gpu_milli = 0;
      j.nodes = 1;
      j.cpu_milli = spec.cpu_milli_cpu_job;
      j.mem_mib = spec.mem_mib_cpu_job;
    } else {
      j.nodes = static_cast<uint16_t>((tp.gpus + spec.gpus_per_node - 1) / spec.gpus_per_node);
      j.cpu_milli = tp.gpus * spec.cpu_milli_per_gpu;
      j.mem_mib = tp.gpus * spec.mem_mib_per_gpu;
    }
    j.state = st;
    *job = j;
    return true;
  }
};

WorkloadGenerator::WorkloadGenerator(const WorkloadSpec& spec, uint64_t seed)
    : impl_(std::make_unique<Impl>(spec, seed)) {}
WorkloadGenerator::~WorkloadGenerator() = default;
const Trace& WorkloadGenerator::header() const { return impl_->header; }
Trace WorkloadGenerator::TakeHeader() { return std::move(impl_->header); }
bool WorkloadGenerator::Next(Job* job) { return impl_->Next(job); }
uint64_t WorkloadGenerator::ExpectedJobs() const {
  const auto& s = impl_->spec;
  if (s.jobs) return s.jobs;
  double per_day = s.gpu_jobs_per_day * s.load / (1.0 - impl_->cpu_share);
  return static_cast<uint64_t>(per_day * s.days * 1.02 + 16);
}

std::string_view ArrivalModelName(ArrivalModel m) {
  switch (m) {
    case ArrivalModel::kOpenLoop:
      return "open-loop";
    case ArrivalModel::kClosedLoop:
      return "closed-loop";
    case ArrivalModel::kClosedLoopNodes:
      return "closed-loop-nodes";
  }
  return "?";
}

Result<ArrivalModel> ParseArrivalModel(std::string_view name) {
  if (name == "open-loop") return ArrivalModel::kOpenLoop;
  if (name == "closed-loop") return ArrivalModel::kClosedLoop;
  if (name == "closed-loop-nodes") return ArrivalModel::kClosedLoopNodes;
  return MakeError("arrival model: expected open-loop, closed-loop or closed-loop-nodes, got \"" + std::string(name) +
                   "\"");
}

std::string_view BatchModelName(BatchModel m) {
  switch (m) {
    case BatchModel::kSingle:
      return "single";
    case BatchModel::kSweeps:
      return "sweeps";
    case BatchModel::kShortSweeps:
      return "short-sweeps";
  }
  return "?";
}

Result<BatchModel> ParseBatchModel(std::string_view name) {
  if (name == "single") return BatchModel::kSingle;
  if (name == "sweeps") return BatchModel::kSweeps;
  if (name == "short-sweeps") return BatchModel::kShortSweeps;
  return MakeError("batches: expected single, sweeps or short-sweeps, got \"" + std::string(name) + "\"");
}

std::string_view LongRunSizesName(LongRunSizes m) {
  switch (m) {
    case LongRunSizes::kClassMix:
      return "class";
    case LongRunSizes::kLoneSubmissions:
      return "lone";
  }
  return "?";
}

Result<LongRunSizes> ParseLongRunSizes(std::string_view name) {
  if (name == "class") return LongRunSizes::kClassMix;
  if (name == "lone") return LongRunSizes::kLoneSubmissions;
  return MakeError("long-run sizes: expected class or lone, got \"" + std::string(name) + "\"");
}

std::string_view LongRunArrivalsName(LongRunArrivals m) {
  switch (m) {
    case LongRunArrivals::kWeekly:
      return "weekly";
    case LongRunArrivals::kFlat:
      return "flat";
  }
  return "?";
}

Result<LongRunArrivals> ParseLongRunArrivals(std::string_view name) {
  if (name == "weekly") return LongRunArrivals::kWeekly;
  if (name == "flat") return LongRunArrivals::kFlat;
  return MakeError("long runs: expected weekly or flat, got \"" + std::string(name) + "\"");
}

Trace GenerateWorkload(const WorkloadSpec& spec, uint64_t seed) {
  ORR_CHECK(ValidateSpec(spec).ok());
  WorkloadGenerator gen(spec, seed);
  std::vector<Job> jobs;
  jobs.reserve(gen.ExpectedJobs());
  Job j;
  while (gen.Next(&j)) jobs.push_back(j);
  Trace trace = gen.TakeHeader();
  trace.jobs = std::move(jobs);
  return trace;
}

}  // namespace orrery::workload
