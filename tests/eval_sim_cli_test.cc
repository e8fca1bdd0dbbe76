// End to end: `orrery simulate` with evaluation requests (tests/fixtures/eval_sim: a tiny
// cluster of one 8-GPU node and one 4-core CPU node, one training job, two requests). Where
// and when each trial and metric job runs, by hand arithmetic from the phases; determinism;
// bad input (exit 2, located).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_testing.h"

namespace {

namespace fs = std::filesystem;
using orrery::cli_testing::FreshTempDir;
using orrery::cli_testing::RunOrrery;
using orrery::cli_testing::Slurp;

const std::string kDir = std::string(ORRERY_SOURCE_DIR) + "/tests/fixtures/eval_sim";

std::string Simulate(const fs::path& out, const std::string& extra = "") {
  return "simulate " + kDir + "/train.csv --cluster " + kDir + "/tiny.toml --eval-requests " + kDir +
         "/requests.csv --policy fifo --quiet --out-dir " + out.string() + " " + extra;
}

// jobs.csv rows by job id: the fields by column name.
std::vector<std::map<std::string, std::string>> Rows(const std::string& csv) {
  std::vector<std::map<std::string, std::string>> out;
  std::istringstream in(csv);
  std::string line;
  std::vector<std::string> head;
  auto split = [](const std::string& l) {
    std::vector<std::string> f;
    std::stringstream ss(l);
    std::string x;
    while (std::getline(ss, x, ',')) f.push_back(x);
    if (!l.empty() && l.back() == ',') f.push_back("");
    return f;
  };
  std::getline(in, line);
  head = split(line);
  while (std::getline(in, line)) {
    std::map<std::string, std::string> row;
    const auto f = split(line);
    for (size_t i = 0; i < head.size() && i < f.size(); ++i) row[head[i]] = f[i];
    out.push_back(row);
  }
  return out;
}
long long N(const std::map<std::string, std::string>& r, const char* k) { return std::stoll(r.at(k)); }

TEST(EvalSimCli, GoldenCoupledRequestBesideATrainingJob) {
  // The datasets' modelled inference and metric seconds, from the planner (eval plan).
  auto plan = RunOrrery("eval plan " + kDir + "/suite.csv --model-size 7B --nodes 1 --gpus-per-node 2 --strategy coupled --json");
  ASSERT_EQ(plan.status, 0) << plan.text;
  const auto p = nlohmann::json::parse(plan.text.substr(plan.text.find('{')));
  std::map<std::string, std::pair<long long, long long>> secs;  // dataset -> (infer, metric), whole seconds
  for (const auto& d : p["datasets"])
    secs[d["name"]] = {static_cast<long long>(std::ceil(d["infer_s"].get<double>())),
                       static_cast<long long>(std::ceil(d["metric_s"].get<double>()))};
  const fs::path out = FreshTempDir("eval_sim_golden");
  auto o = RunOrrery(Simulate(out));
  ASSERT_EQ(o.status, 0) << o.text;
  const auto rows = Rows(Slurp(out / "fifo" / "jobs.csv"));
  ASSERT_EQ(rows.size(), 7u);  // training job, r1: 2 trials, r2: 2 trials + 2 metric jobs
  // The training job holds 4 GPUs from 0 to 1000.
  EXPECT_EQ(N(rows[0], "start"), 0);
  EXPECT_EQ(N(rows[0], "end"), 1000);
  // r1 (coupled, at 100): one trial per dataset (boolq, gsm8k), 1 GPU each, both start at 100
  // on the 4 free GPUs. Startup 30 s; both read the 14 GB checkpoint from shared storage at
  // once on the one node: 3 GB/s / 2 readers = 1.5 GB/s, 9.33 s -> the load ends at 140; then
  // inference and the metric on the GPU.
  EXPECT_EQ(N(rows[1], "start"), 100);
  EXPECT_EQ(N(rows[2], "start"), 100);
  EXPECT_EQ(N(rows[1], "end"), 140 + secs["boolq"].first + secs["boolq"].second);
  EXPECT_EQ(N(rows[2], "end"), 140 + secs["gsm8k"].first + secs["gsm8k"].second);
  // r2 (acme, at 3000): trials on the GPU VC, then one metric job per dataset on the CPU VC,
  // each after the trials holding its slices; the 4-core node runs one 4-core job at a time.
  const long long r2_first_trial_end = std::min(N(rows[3], "end"), N(rows[4], "end"));
  EXPECT_EQ(N(rows[3], "start"), 3000);
  for (int m : {5, 6}) {
    EXPECT_EQ(rows[m].at("vc"), "cpu");
    EXPECT_GE(N(rows[m], "start"), r2_first_trial_end);
  }
  EXPECT_GE(N(rows[6], "start"), N(rows[5], "end"));  // CPU capacity: one after the other
  // eval_requests.csv: one row per request, the makespan = last end - submit.
  const auto req = Rows(Slurp(out / "fifo" / "eval_requests.csv"));
  ASSERT_EQ(req.size(), 2u);
  EXPECT_EQ(req[0].at("request"), "r1");
  EXPECT_EQ(N(req[0], "complete"), 1);
  EXPECT_EQ(N(req[0], "makespan_s"), N(rows[2], "end") - 100);
  EXPECT_EQ(N(req[1], "makespan_s"), std::max(N(rows[5], "end"), N(rows[6], "end")) - 3000);
  const auto summary = nlohmann::json::parse(Slurp(out / "summary.json"));
  const auto& ev = summary["runs"][0]["evaluation"];
  EXPECT_EQ(ev["queueing_delay"]["eval_gpu_jobs"]["jobs"], 4);
  EXPECT_EQ(ev["queueing_delay"]["eval_cpu_jobs"]["jobs"], 2);
  EXPECT_EQ(ev["requests"]["complete"], 2);
}

TEST(EvalSimCli, SameSeedSameBytes) {
  const fs::path a = FreshTempDir("eval_sim_det_a"), b = FreshTempDir("eval_sim_det_b");
  ASSERT_EQ(RunOrrery(Simulate(a)).status, 0);
  ASSERT_EQ(RunOrrery(Simulate(b)).status, 0);
  for (const char* f : {"summary.json", "fifo/jobs.csv", "fifo/eval_requests.csv", "fifo/attempts.csv"})
    EXPECT_EQ(Slurp(a / f), Slurp(b / f)) << f;
  // And a generated workload with requests from its pretraining jobs.
  const std::string gen = "simulate --generate acme-seren --jobs 3000 --seed 7 --policy easy:eval_share=0.05 --quiet "
                          "--eval-every 3600 --eval-suite " + kDir + "/suite.csv --out-dir ";
  // (Folders of their own: an --out-dir holding another run's outputs is refused.)
  const fs::path ga = FreshTempDir("eval_sim_det_ga"), gb = FreshTempDir("eval_sim_det_gb");
  ASSERT_EQ(RunOrrery(gen + ga.string()).status, 0);
  ASSERT_EQ(RunOrrery(gen + gb.string()).status, 0);
  const std::string slug = "easy_eval_share_005";  // the policy folder (dots dropped)
  EXPECT_EQ(Slurp(ga / "summary.json"), Slurp(gb / "summary.json"));
  EXPECT_EQ(Slurp(ga / slug / "eval_requests.csv"), Slurp(gb / slug / "eval_requests.csv"));
  EXPECT_FALSE(Slurp(ga / slug / "eval_requests.csv").empty());
}

fs::path Write(const fs::path& dir, const std::string& name, const std::string& text) {
  std::ofstream(dir / name) << text;
  return dir / name;
}

TEST(EvalSimCli, BadRequestsExitTwoWithTheirLocation) {
  const fs::path d = FreshTempDir("eval_sim_bad");
  fs::copy_file(kDir + "/suite.csv", d / "suite.csv");
  Write(d, "zero.csv", "name,examples,task_type,max_out_len,few_shot\nboolq,0,perplexity,,0\n");
  const std::string head = "name,submit_s,suite,model_size,partition,datasets\n";
  struct Case {
    std::string requests, message;
  } cases[] = {
      {head + "r1,0,suite.csv,7B,gpu,boolq;mmlu\n",
       "req.csv:2: request 'r1': unknown dataset \"mmlu\": " + (d / "suite.csv").string() + " has no row with that name"},
      {head + "r1,0,zero.csv,7B,gpu,\n",
       "request 'r1': " + (d / "zero.csv").string() + ":2:7: field 'examples': expected an integer in [1, 1000000000] or empty, got \"0\""},
      {head + "r1,0,suite.csv,7B,tpu,\n", "req.csv:2: request 'r1': partition 'tpu' is not a VC of cluster 'tiny'"},
      {head + "r1,soon,suite.csv,7B,gpu,\n", "req.csv:2:4: field 'submit_s': expected seconds since the trace's epoch"},
  };
  for (const Case& c : cases) {
    const fs::path req = Write(d, "req.csv", c.requests);
    auto o = RunOrrery("simulate " + kDir + "/train.csv --cluster " + kDir + "/tiny.toml --policy fifo --no-output --eval-requests " +
                       req.string());
    EXPECT_EQ(o.status, 2) << o.text;
    EXPECT_NE(o.text.find(c.message), std::string::npos) << o.text;
  }
}

}  // namespace
