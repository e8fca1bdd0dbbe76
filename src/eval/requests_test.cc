// Evaluation requests for the simulator: the request CSV (exact, located messages), requests
// from pretraining jobs, and the expansion into core jobs with phases and dependencies.
#include "eval/requests.h"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

namespace orrery::eval {
namespace {

namespace fs = std::filesystem;

std::string Err(std::string_view text) {
  auto r = ParseRequests(text, "req.csv", "");
  return r.ok() ? "ok" : r.error().message;
}

TEST(EvalRequests, ParsesRowsWithDefaultsAndRelativeSuites) {
  auto r = ParseRequests(
      "# comment\nname,submit_s,suite,model_size,strategy,gpus,partition,cpu_partition,datasets\n"
      "a,10,s.csv,7B,,,gpu,cpu,\nb,20,/abs/s.csv,13B,coupled,16,,,boolq;gsm8k\n",
      "req.csv", "dir");
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].suite, "dir/s.csv");
  EXPECT_EQ((*r)[0].where, "req.csv:3");
  EXPECT_EQ((*r)[0].gpus, 0u);  // the run's default
  EXPECT_EQ((*r)[0].cpu_partition, "cpu");
  EXPECT_EQ((*r)[1].suite, "/abs/s.csv");
  EXPECT_EQ((*r)[1].gpus, 16u);
  EXPECT_EQ((*r)[1].datasets, (std::vector<std::string>{"boolq", "gsm8k"}));
}

TEST(EvalRequests, BadInputIsLocated) {
  EXPECT_EQ(Err(""), "req.csv:1:1: empty request file (expected a header: name,submit_s,suite,model_size,...)");
  EXPECT_EQ(Err("name,submit_s,suite\n"), "req.csv:1:1: missing column 'model_size' (a request needs name, submit_s, suite, model_size)");
  EXPECT_EQ(Err("name,submit_s,suite,model_size,nodes\n"),
            "req.csv:1:32: unknown column \"nodes\" (expected name, submit_s, suite, model_size, strategy, gpus, "
            "partition, cpu_partition, datasets)");
  EXPECT_EQ(Err("name,submit_s,suite,model_size\na,-5,s.csv,7B\n"),
            "req.csv:2:3: field 'submit_s': expected seconds since the trace's epoch (an integer >= 0), got \"-5\"");
  EXPECT_EQ(Err("name,submit_s,suite,model_size\na,5,s.csv,7Q\n"),
            "req.csv:2:11: field 'model_size': expected a model size such as 7B, 13B or 350M, got \"7Q\"");
  EXPECT_EQ(Err("name,submit_s,suite,model_size,gpus\na,5,s.csv,7B,0\n"),
            "req.csv:2:14: field 'gpus': expected an integer in [1, 65536] or empty, got \"0\"");
  EXPECT_EQ(Err("name,submit_s,suite,model_size\na,5,s.csv,7B\na,6,s.csv,7B\n"),
            "req.csv:3:1: request name \"a\" also at req.csv:2 (names are unique)");
  EXPECT_EQ(Err("name,submit_s,suite,model_size\na,5,s.csv\n"), "req.csv:2:1: expected 4 fields, got 3");
  EXPECT_EQ(Err("name,submit_s,suite,model_size\n"), "req.csv: no request (only a header)");
  EXPECT_EQ(Err("name,submit_s,suite,model_size,strategy\na,5,s.csv,7B,fast\n").rfind("req.csv:2:14: field 'strategy': ", 0), 0u);
}

TEST(EvalRequests, OnePerCheckpointOfEachPretrainingJob) {
  Trace t;
  t.vcs.Intern("seren");
  Job p;  // 25,000 s of pretraining: checkpoints at 10,000 and 20,000 s into it
  p.id = JobId(0);
  p.vc = VcId(0);
  p.submit = 500;
  p.duration = 25000;
  p.kind = JobKind::kPretrain;
  p.name = NameId(t.names.Intern("internlm_20b_pretrain_bs64"));
  Job other = p;  // not pretraining: no request
  other.id = JobId(1);
  other.kind = JobKind::kEval;
  t.jobs = {p, other};
  PretrainEvalOptions o;
  o.interval = 10000;
  o.suite = "s.csv";
  const std::vector<EvalRequest> r = RequestsFromPretraining(t, o);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].name, "job0-ckpt1");
  EXPECT_EQ(r[0].submit, 10500);
  EXPECT_EQ(r[1].submit, 20500);
  EXPECT_EQ(r[0].model_size, "20B");  // from the job's name
  EXPECT_EQ(r[0].partition, "seren");
  o.max_per_job = 1;
  EXPECT_EQ(RequestsFromPretraining(t, o).size(), 1u);
}

// A suite file in a fresh folder.
fs::path Suite(const std::string& name, const std::string& text) {
  const fs::path d = fs::temp_directory_path() / ("orrery_requests_test_" + std::to_string(getpid()));
  fs::create_directories(d);
  std::ofstream(d / name) << text;
  return d / name;
}

EvalRequest Request(const fs::path& suite, std::string strategy) {
  EvalRequest r;
  r.name = "r";
  r.submit = 100;
  r.suite = suite.string();
  r.model_size = "7B";
  r.strategy = std::move(strategy);
  r.gpus = 2;
  r.partition = "gpu";
  r.where = "req.csv:2";
  return r;
}

TEST(EvalRequests, ExpandsIntoTrialsWithPhasesAndDependentMetricJobs) {
  const fs::path s = Suite("two.csv", "name,examples,task_type,max_out_len,few_shot\nboolq,3270,perplexity,,0\ngsm8k,1319,generation,512,4\n");
  Trace t;
  ExpandOptions o;
  o.cpu_partition = "cpu";
  auto e = AddRequests({Request(s, "opencompass-workers:num_worker=2")}, o, &t);
  ASSERT_TRUE(e.ok()) << e.error().message;
  const ExpandedRequest& x = (*e)[0];
  ASSERT_FALSE(x.gpu_jobs.empty());
  ASSERT_EQ(x.metric_jobs.size(), 2u);  // one per dataset
  ASSERT_EQ(t.work.size(), t.jobs.size());
  ASSERT_EQ(t.after.size(), t.jobs.size());
  for (uint32_t g : x.gpu_jobs) {
    const Job& j = t.jobs[g];
    EXPECT_EQ(j.kind, JobKind::kEval);
    EXPECT_EQ(j.gpus, 1u);  // 7B in bf16 fits half of an 80 GB GPU
    EXPECT_EQ(t.vcs.Get(j.vc.v), "gpu");
    const auto& ph = t.work[g].phases;
    ASSERT_EQ(ph.size(), 3u);  // startup, load, inference (metrics are CPU jobs)
    EXPECT_EQ(ph[0].steps, 30);
    EXPECT_EQ(ph[1].kind, PhaseKind::kLoad);
    EXPECT_DOUBLE_EQ(ph[1].load.bytes, 14e9);
    EXPECT_FALSE(ph[1].load.cacheable);  // OpenCompass reads shared storage every time
    EXPECT_EQ(ph[1].steps, 5);            // nominal: 14 GB at the node's 3 GB/s
    EXPECT_FALSE(ph[2].checkpoint.durable_at_end);
    EXPECT_EQ(j.duration, t.work[g].total_steps());
  }
  // OpenCompass's eval stage: every metric job waits for every inference job.
  for (uint32_t m : x.metric_jobs) {
    EXPECT_EQ(t.jobs[m].gpus, 0u);
    EXPECT_EQ(t.jobs[m].cpu_milli, 4000u);
    EXPECT_EQ(t.vcs.Get(t.jobs[m].vc.v), "cpu");
    EXPECT_EQ(t.after[m], x.gpu_jobs);
  }
}

TEST(EvalRequests, UnknownDatasetAndZeroSizeSuiteNameTheRequest) {
  const fs::path s = Suite("one.csv", "name,examples,task_type,max_out_len,few_shot\nboolq,3270,perplexity,,0\n");
  Trace t;
  EvalRequest r = Request(s, "acme");
  r.datasets = {"nope"};
  auto e = AddRequests({r}, ExpandOptions{}, &t);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().message, "req.csv:2: request 'r': unknown dataset \"nope\": " + s.string() + " has no row with that name");
  const fs::path z = Suite("unsized.csv", "name,examples,task_type,max_out_len,few_shot\nboolq,,perplexity,,0\n");
  Trace t2;
  ExpandOptions skip;
  skip.skip_unsized = true;
  auto e2 = AddRequests({Request(z, "acme")}, skip, &t2);
  ASSERT_FALSE(e2.ok());
  EXPECT_EQ(e2.error().message, "req.csv:2: request 'r': " + z.string() + ": zero-size suite: no dataset with examples to evaluate");
}

}  // namespace
}  // namespace orrery::eval
