#include "logs/rules.h"

#include <gtest/gtest.h>

namespace orrery::logs {
namespace {

std::string Err(const std::string& text) {
  auto r = ParseRules(text, "r.toml");
  return r.ok() ? "ok" : r.error().message;
}

const char* kMinimal = R"([[rule]]
name = "x"
category = "script"
subtype = "user_code_exception"
retry = false
any = ["boom"]
)";

TEST(RulesTest, EmbeddedDefaultParses) {
  const RuleSet& rs = DefaultRules();
  EXPECT_GE(rs.rules.size(), 40u);
  EXPECT_EQ(rs.tie_break, TieBreak::kChainRoot);
  EXPECT_EQ(rs.compress.keep_first, 2u);
  EXPECT_EQ(rs.compress.tail_lines, 100u);
}

TEST(RulesTest, MinimalRuleAndDefaults) {
  auto r = ParseRules(kMinimal, "r.toml");
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->rules.size(), 1u);
  EXPECT_EQ(r->rules[0].priority, 0);
  EXPECT_DOUBLE_EQ(r->rules[0].confidence, 0.8);
  EXPECT_EQ(r->rules[0].line, 1u);
}

TEST(RulesTest, ExactErrorMessages) {
  EXPECT_EQ(Err("[[rule]]\nname = \"x\"\ncategory = \"hardware\"\n"),
            "r.toml:3:12: rule 'x' key 'category': expected one of infrastructure, framework, script, got \"hardware\"");
  EXPECT_EQ(Err(std::string(kMinimal) + "colour = 1\n"),
            "r.toml:7:10: unknown key 'colour' in [[rule]] #1 (expected one of: name, category, subtype, retry, priority, "
            "confidence, any, all, unless, exception, near, window, min_count, suspect, why, case_sensitive)");
  EXPECT_EQ(Err("[[rule]]\nname = \"x\"\ncategory = \"script\"\nsubtype = \"Bad-Name\"\n"),
            "r.toml:4:11: rule 'x' key 'subtype': expected snake_case ([a-z][a-z0-9_]*, at most 48 bytes), got \"Bad-Name\"");
  EXPECT_EQ(Err("[[rule]]\nname = \"x\"\ncategory = \"script\"\nsubtype = \"a\"\nretry = \"no\"\n"),
            "r.toml:5:9: rule 'x' key 'retry': expected true or false, got the string \"no\"");
  EXPECT_EQ(Err("[[rule]]\nname = \"x\"\ncategory = \"script\"\nsubtype = \"a\"\nretry = true\n"),
            "r.toml:1:1: rule 'x': needs a non-empty 'any' or 'exception' list (what a matching line contains)");
  EXPECT_EQ(Err("[diagnose]\ntie_break = \"last\"\n"), "r.toml:1:1: no [[rule]] tables: a rule file needs at least one rule");
  EXPECT_EQ(Err(std::string(kMinimal) + kMinimal), "r.toml:7:1: rule 'x': name already used by the rule at line 1");
  EXPECT_EQ(Err(std::string("[diagnose]\ntie_break = \"random\"\n") + kMinimal),
            "r.toml:2:13: [diagnose] tie_break: expected one of chain_root, first, last, got \"random\"");
  EXPECT_EQ(Err(std::string(kMinimal) + "near = [\"x\"]\n"),
            "r.toml:1:1: rule 'x': 'near' needs 'window' (kept lines looked back) ≥ 1");
  EXPECT_EQ(Err(std::string(kMinimal) + "priority = 5000\n"),
            "r.toml:7:12: rule 'x' key 'priority': expected an integer in [0, 1000], got 5000");
  // "a = [" opens depth 1 at column 5; the 64th '[' after it (column 69) is depth 65.
  EXPECT_EQ(Err("a = [" + std::string(70, '[')),
            "r.toml:1:69: expected arrays and inline tables nested at most 64 deep, got deeper nesting");
}

TEST(RulesTest, SyntaxErrorIsLocated) {
  std::string e = Err("[[rule]]\nname = \"x\n");
  EXPECT_EQ(e.rfind("r.toml:2:", 0), 0u) << e;
  EXPECT_NE(e.find("TOML syntax error"), std::string::npos) << e;
}

TEST(RulesTest, MergeReplacesByNameAndAppends) {
  auto extra = ParseRules(std::string(kMinimal) + "\n[[rule]]\nname = \"cuda_oom\"\ncategory = \"script\"\nsubtype = \"my_oom\"\n"
                          "retry = true\nany = [\"CUDA out of memory\"]\n", "extra.toml");
  ASSERT_TRUE(extra.ok()) << extra.error().message;
  RuleSet m = MergeRules(DefaultRules(), *extra);
  EXPECT_EQ(m.rules.size(), DefaultRules().rules.size() + 1);
  auto it = std::find_if(m.rules.begin(), m.rules.end(), [](const Rule& r) { return r.name == "cuda_oom"; });
  ASSERT_NE(it, m.rules.end());
  EXPECT_EQ(it->subtype, "my_oom");
}

TEST(PythonExceptionTest, Lines) {
  EXPECT_EQ(PythonException("KeyError: 'dense_wh_mask'"), "KeyError");
  EXPECT_EQ(PythonException("[rank1]: torch.cuda.OutOfMemoryError: CUDA out of memory."), "OutOfMemoryError");
  EXPECT_EQ(PythonException("torch.distributed.elastic.multiprocessing.errors.ChildFailedError: "), "ChildFailedError");
  EXPECT_EQ(PythonException("ImportError: ImportError/home/x.so: undefined"), "ImportError");
  EXPECT_EQ(PythonException("SyntaxError"), "SyntaxError");
  EXPECT_EQ(PythonException("    except KeyError:"), "");
  EXPECT_EQ(PythonException("    raise ValueError(\"x\")"), "");
  EXPECT_EQ(PythonException("no error here: fine"), "");
  EXPECT_EQ(PythonException("myError: lowercase class"), "");
}

TEST(SuspectTest, Extractors) {
  EXPECT_EQ(ExtractSuspect(SuspectKind::kPci, "NVRM: Xid (PCI:0000:9b:00): 119, pid=1"), "PCI:0000:9b:00");
  EXPECT_EQ(ExtractSuspect(SuspectKind::kPci, "NVRM: GPU 0000:91:00.0: GPU has fallen off the bus."), "");
  EXPECT_EQ(ExtractSuspect(SuspectKind::kPci, "gpu-n08: [Tue Jul  2 19:44:29 2024] pcieport 0000:40:01.1: AER: Uncorrected (Fatal) "
                                              "error received: 0000:41:00.0"),
            "gpu-n08,0000:41:00.0");
  EXPECT_EQ(ExtractSuspect(SuspectKind::kPci, "nvidia 0000:41:00.0: AER: PCIe Bus Error: severity=Uncorrected (Fatal)"),
            "0000:41:00.0");
  EXPECT_EQ(ExtractSuspect(SuspectKind::kStorageServer,
                           "Lustre: scratch-OST0012-osc-ffff: Connection to scratch-OST0012 (at 10.20.0.12@o2ib) was lost"),
            "10.20.0.12");
  EXPECT_EQ(ExtractSuspect(SuspectKind::kStorageServer, "nfs: server fs01 not responding, still trying"), "fs01");
  EXPECT_EQ(ExtractSuspect(SuspectKind::kNcclHost, "kp-ddp-worker-0:3468:3905 [4] ib_plugin.c:1615 NCCL WARN NET/IB"),
            "kp-ddp-worker-0");
  EXPECT_EQ(ExtractSuspect(SuspectKind::kNcclHost, "[rank0]: NCCL WARN"), "");
  EXPECT_EQ(ExtractSuspect(SuspectKind::kSlurmNode,
                           "slurmstepd: error: *** JOB 77 ON gpu-node-17 CANCELLED AT 2024-05-01T10:00:00 DUE TO NODE FAILURE ***"),
            "gpu-node-17");
  EXPECT_EQ(ExtractSuspect(SuspectKind::kSlurmNode, "srun: error: Node failure on dgx042"), "dgx042");
  EXPECT_EQ(ExtractSuspect(SuspectKind::kSlurmNode, "srun: error: a100-3: task 5: Killed"), "a100-3");
  EXPECT_EQ(ExtractSuspect(SuspectKind::kNone, "PCI:0000:9b:00"), "");
}

}  // namespace
}  // namespace orrery::logs

namespace orrery::logs {
namespace {

TEST(RulesTest, UnknownBelowIsAFraction) {
  // "[diagnose]\nunknown_below = 2": line 2, column 17 is the value.
  EXPECT_EQ(Err("[diagnose]\nunknown_below = 2\n"), "r.toml:2:17: [diagnose] unknown_below: expected a number in [0, 1], got 2");
  auto r = ParseRules(std::string("[diagnose]\nunknown_below = 0.25\n") + kMinimal, "r.toml");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_DOUBLE_EQ(r->unknown_below, 0.25);
  EXPECT_DOUBLE_EQ(DefaultRules().unknown_below, 0.35);
}

}  // namespace
}  // namespace orrery::logs
