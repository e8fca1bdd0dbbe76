// `orrery plan` end to end: the estimate's JSON keys, and bad input (unknown GPU type or
// strategy, a plan that cannot fit, a model that does not divide, malformed profiles) -> one
// clear message naming the constraint and exit status 2.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace {

struct PlanOut {
  int status = -1;
  std::string out, err;
};

PlanOut Plan(const std::string& args) {
  // One file per process: ctest runs the PlanCli tests as separate processes at once.
  const std::string err_file = testing::TempDir() + "/plan_cli_err." + std::to_string(getpid()) + ".txt";
  const std::string cmd = std::string(ORRERY_BINARY) + " plan " + args + " 2>" + err_file;
  PlanOut o;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return o;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) o.out.append(buf, n);
  const int st = pclose(p);
  o.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  std::ifstream f(err_file);
  o.err.assign(std::istreambuf_iterator<char>(f), {});
  return o;
}

const std::string kModel = "--model gpt:layers=24,hidden=2048,heads=16,vocab=32000 --seq 2048 --micro-batch 1 ";
const std::string kGpu = "--gpu H200 ";

TEST(PlanCli, EstimateJsonHasTheDocumentedKeys) {
  PlanOut o = Plan("estimate " + kModel + "--gpus 2 " + kGpu + "--strategy fsdp_full --recompute full --json");
  ASSERT_EQ(o.status, 0) << o.err;
  nlohmann::json j = nlohmann::json::parse(o.out);
  EXPECT_GT(j["step_time_s"].get<double>(), 0);
  EXPECT_GT(j["peak_alloc_gib"].get<double>(), 0);
  for (const char* k : {"time", "memory", "plan", "mfu", "tokens_per_s", "fits"}) EXPECT_TRUE(j.contains(k)) << k;
  EXPECT_EQ(j["plan"], "dp=2,tp=1,pp=1,sp=1,lins=2:2:2,micro=1,framework=fsdp,precision=autocast");
}

TEST(PlanCli, BadInputNamesTheConstraint) {
  struct Case {
    std::string args, message;
  };
  const Case cases[] = {
      {"estimate " + kModel + "--gpus 2 --gpu B300 --strategy ddp",
       "orrery plan: unknown GPU type 'B300' (known: h200, H200-shared, A100-40, A100-80, V100-16 (transferred from H200); "
       "GPU names: h100, h200, a100-40, a100-80, v100, any case; or give a profile file with --profile)\n"},
      {"estimate " + kModel + "--gpus 2 " + kGpu + "--strategy zero4",
       "orrery plan: strategy: unknown strategy \"zero4\" (expected single, ddp, fsdp_no_shard, fsdp_grad_op, "
       "fsdp_full, fsdp_full_mp, tp, tp_mega or a plan dp=..,tp=..,pp=..,sp=..,zero=..)\n"},
      {"estimate --model 6.7B --seq 8192 --micro-batch 4 --gpus 1 " + kGpu + "--strategy single",
       "orrery plan: plan does not fit in memory: predicted peak 243.8 GiB > 139.8 GiB on H200 (peak at the "
       "loss_backward; try --recompute full, more GPUs, a ZeRO stage or tensor/pipeline parallelism; --allow-oom "
       "prints the estimate)\n"},
      {"estimate --model 125M --gpus 8 " + kGpu + "--strategy dp=1,tp=8",
       "orrery plan: plan: model heads 12 is not divisible by tp=8\n"},
      {"estimate --model 1.3B --gpus 4 " + kGpu + "--strategy dp=1,pp=4,micro=4 --seq 2048 --micro-batch 1",
       ""},  // 24 layers divide by 4: fine
      {"estimate --model 125M --gpus 5 " + kGpu + "--strategy dp=1,pp=5",
       "orrery plan: plan: model layers 12 is not divisible by pp=5\n"},
      {"search --model GPT-Neo-2.7 --pool a100=4", "orrery plan: search: --pool must read sailor:TYPE=COUNT[,TYPE=COUNT...] "
                                               "(Sailor's profiles), got \"a100=4\"\n"},
  };
  for (const Case& c : cases) {
    PlanOut o = Plan(c.args);
    if (c.message.empty()) {
      EXPECT_EQ(o.status, 0) << c.args << ": " << o.err;
      continue;
    }
    EXPECT_EQ(o.status, 2) << c.args;
    EXPECT_EQ(o.err, c.message) << c.args;
  }
}

TEST(PlanCli, MalformedProfileIsLocated) {
  const std::string path = testing::TempDir() + "/bad_profile." + std::to_string(getpid()) + ".json";
  std::ofstream(path) << "{\n  \"format\": \"orrery-gpu-profile\",\n  \"version\": 1\n  \"gpu\": \"X\"\n}\n";
  PlanOut o = Plan("estimate --model 125M --strategy single --profile " + path);
  EXPECT_EQ(o.status, 2);
  EXPECT_EQ(o.err.rfind("orrery plan: " + path + ":4:7: JSON syntax error while parsing object", 0), 0u) << o.err;
}

}  // namespace
