// `orrery plan` end to end: the estimate's JSON keys, and bad input (unknown GPU type or
// strategy, a plan that cannot fit, a model that does not divide, malformed profiles) -> one
// clear message naming the constraint and exit status 2.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
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

// One model naming (docs/cli.md, "Model names"): an unknown --model names the flag and lists the
// canonical names the subcommand takes; a known model without what the subcommand needs says what
// it has.
TEST(PlanCli, UnknownModelListsTheCanonicalNamesThatApply) {
  const std::string training =
      "gpt-125m, gpt-350m, gpt-1.3b, gpt-2.7b, gpt-6.7b, gpt-13b, gpt-neo-2.7b, opt-350m, llama-7b, llama-13b, llama-30b "
      "or gpt:layers=L,hidden=H,heads=A,vocab=V\n";
  const std::string inference =
      "llama3-8b, llama3-70b, qwen2.5-1.5b, qwen2.5-7b, qwen2.5-14b, qwen2.5-32b, qwen2.5-72b or "
      "llama:layers=L,hidden=H,heads=A,kv_heads=K,ffn=F,vocab=V\n";
  const std::string sailor = "gpt-neo-2.7b, opt-350m, opt-30b, llama3-8b\n";
  const struct {
    std::string args, message;
  } cases[] = {
      {"estimate --model gpt-9b --gpus 1 " + kGpu + "--strategy single",
       "orrery plan: --model: unknown model \"gpt-9b\": expected one of " + training},
      {"estimate --model qwen2.5-7b --gpus 1 " + kGpu + "--strategy single",
       "orrery plan: --model: model \"qwen2.5-7b\" has an inference shape, not a training shape: expected one of " + training},
      {"estimate --phase decode --model 1.3B --batch 1 --context 128 --gpu h100",
       "orrery plan: --model: model \"1.3B\" is gpt-1.3b, which has a training shape, not an inference shape: expected one of " +
           inference},
      {"estimate --phase decode --model qwen9 --batch 1 --context 128 --gpu h100",
       "orrery plan: --model: unknown model \"qwen9\": expected one of " + inference},
      {"lins-scaling --model LLAMA-3-8",
       "orrery plan: --model: model \"LLAMA-3-8\" is llama3-8b, which has an inference shape and a Sailor profile, not a "
       "training shape: expected one of " + training},
      {"search --model opt-1b --pool sailor:A100-40=16", "orrery plan: --model: unknown model \"opt-1b\": expected one of " + sailor},
      {"search --model llama-7b --pool sailor:A100-40=16",
       "orrery plan: --model: model \"llama-7b\" has a training shape, not a Sailor profile: expected one of " + sailor},
  };
  for (const auto& c : cases) {
    PlanOut o = Plan(c.args);
    EXPECT_EQ(o.status, 2) << c.args;
    EXPECT_EQ(o.err, c.message) << c.args;
    EXPECT_TRUE(o.out.empty()) << c.args;
  }
}

// The older spellings still work and give what their canonical names give.
TEST(PlanCli, OlderModelSpellingsAreAliases) {
  const std::string est = " --seq 2048 --micro-batch 1 --gpus 1 " + kGpu + "--strategy single --json";
  PlanOut old_name = Plan("estimate --model 1.3B" + est), canonical = Plan("estimate --model GPT-1.3B" + est);
  ASSERT_EQ(old_name.status, 0) << old_name.err;
  EXPECT_EQ(old_name.out, canonical.out);
  PlanOut neo = Plan("estimate --model gpt-neo-2.7" + est), neo_canonical = Plan("estimate --model gpt-neo-2.7b" + est);
  ASSERT_EQ(neo.status, 0) << neo.err;
  EXPECT_EQ(neo.out, neo_canonical.out);
  const std::string decode = " --phase decode --batch 8 --context 1024 --gpu h100 --json";
  PlanOut llama = Plan("estimate --model LLAMA-3-8" + decode);
  ASSERT_EQ(llama.status, 0) << llama.err;
  EXPECT_EQ(nlohmann::json::parse(llama.out)["model"], "llama3-8b");
  if (!std::filesystem::exists(std::string(ORRERY_SHARED_DIR) + "/sailor-profiles")) GTEST_SKIP() << "no Sailor profiles";
  PlanOut search = Plan("search --model OPT-350 --pool sailor:A100-40=16 --json");
  ASSERT_EQ(search.status, 0) << search.err;
  EXPECT_EQ(nlohmann::json::parse(search.out)["model"], "opt-350m");
}

TEST(PlanCli, MalformedProfileIsLocated) {
  const std::string path = testing::TempDir() + "/bad_profile." + std::to_string(getpid()) + ".json";
  std::ofstream(path) << "{\n  \"format\": \"orrery-gpu-profile\",\n  \"version\": 1\n  \"gpu\": \"X\"\n}\n";
  PlanOut o = Plan("estimate --model 125M --strategy single --profile " + path);
  EXPECT_EQ(o.status, 2);
  EXPECT_EQ(o.err.rfind("orrery plan: " + path + ":4:7: JSON syntax error while parsing object", 0), 0u) << o.err;
}

}  // namespace
