// The policy registry: its schemas are self-consistent, spec errors name the column and the
// keys a policy knows, every option reaches the policy it configures, and docs/policies.md is
// the registry's own listing.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "base/parse.h"
#include "sched/plugins/ces.h"
#include "sched/plugins/policies.h"
#include "sched/plugins/policy_registry.h"

namespace orrery {
namespace {

std::string ErrorOf(const std::string& spec) {
  auto p = MakePolicy(spec, 1);
  return p.ok() ? "OK" : p.error().message;
}

// Each declared default is a value of its own type: a default a spec could not write is a
// table error that no user input would reveal until the key is read.
void ExpectDefaultsValid(std::string_view owner, OptionSchema schema) {
  for (const OptionSpec& o : schema) {
    SCOPED_TRACE(std::string(owner) + "." + std::string(o.key));
    EXPECT_FALSE(o.help.empty());
    if (o.def.empty()) continue;  // unset: the policy's own behaviour
    double x = 0;
    switch (o.type) {
      case OptionType::kBool: EXPECT_TRUE(o.def == "true" || o.def == "false"); break;
      case OptionType::kInt:
      case OptionType::kNumber:
        ASSERT_TRUE(ParseF64(o.def, &x));
        EXPECT_GE(x, o.lo);
        EXPECT_TRUE(o.open_hi ? x < o.hi : x <= o.hi);
        break;
      case OptionType::kChoice:
        EXPECT_NE(("|" + std::string(o.choices) + "|").find("|" + std::string(o.def) + "|"), std::string::npos);
        break;
      case OptionType::kText: break;
    }
  }
}

TEST(PolicyRegistry, SchemasAreSelfConsistent) {
  ExpectDefaultsValid("common", CommonPolicyOptions());
  std::set<std::string_view> names;
  for (const PolicyInfo& p : Policies()) {
    EXPECT_TRUE(names.insert(p.name).second) << "policy '" << p.name << "' registered twice";
    EXPECT_EQ(FindPolicy(p.name), &p);
    EXPECT_EQ(p.live == LiveSupport::kLive, p.live_note.empty()) << p.name;
    ExpectDefaultsValid(p.name, p.options);
  }
  EXPECT_EQ(FindPolicy("nosuch"), nullptr);
  EXPECT_EQ(PolicyNameList(), "fifo, sjf, srtf, qssf, easy, tiresias, lucid, slurm");
}

TEST(PolicyRegistry, SpecErrorsNameTheColumnAndTheKnownKeys) {
  struct Case {
    const char* spec;
    const char* error;
  } cases[] = {
      // "fifo:" is 5 characters: the first parameter starts at column 6.
      {"fifo:blockin=true",
       "policy 'fifo:blockin=true': unknown parameter 'blockin' at column 6 (fifo knows backfill, bf_max_job_test, "
       "blocking, elastic, elastic_cooldown, eval_share, shape, shape_gain, shape_grow, shape_shrink)"},
      // "qssf:estimator=walltime," is 24 characters: 'gittins' starts at column 25.
      {"qssf:estimator=walltime,gittins=true",
       "policy 'qssf:estimator=walltime,gittins=true': unknown parameter 'gittins' at column 25 (qssf knows backfill, "
       "bf_max_job_test, blocking, elastic, elastic_cooldown, estimator, eval_share, shape, shape_gain, shape_grow, "
       "shape_shrink)"},
      {"nosuch", "unknown policy 'nosuch' (expected one of fifo, sjf, srtf, qssf, easy, tiresias, lucid, slurm)"},
      {"fifo:backfill=maybe", "policy 'fifo:backfill=maybe': parameter 'backfill': expected easy or none, got \"maybe\""},
      {"fifo:bf_max_job_test=5", "policy 'fifo:bf_max_job_test=5': parameter 'bf_max_job_test' needs backfill=easy"},
      {"easy:bf_max_job_test=0",
       "policy 'easy:bf_max_job_test=0': parameter 'bf_max_job_test': expected an integer in [1, 10000000], got \"0\""},
      {"tiresias:interval=-1", "policy 'tiresias:interval=-1': parameter 'interval': expected seconds in [0, 86400], got \"-1\""},
      {"tiresias:thresholds=10/5",
       "policy 'tiresias:thresholds=10/5': parameter 'thresholds': expected increasing positive integers separated by "
       "'/' (e.g. 3250/7200), got \"10/5\""},
      {"tiresias:service=wall", "policy 'tiresias:service=wall': parameter 'service': expected gpu or time, got \"wall\""},
      {"srtf:backfill=easy",
       "policy 'srtf:backfill=easy': parameter 'backfill': not available for the preemptive, rescheduling or "
       "GPU-sharing policy 'srtf'"},
      {"fifo:blocking=perhaps", "policy 'fifo:blocking=perhaps': parameter 'blocking': expected true or false, got \"perhaps\""},
      {"fifo:x", "policy 'fifo:x': expected key=value parameters, got \"x\""},
      {"sjf", "OK"},
      {"easy:backfill=none", "OK"},
      {"tiresias:preset=lucid,gittins=1,delta=100,service=time", "OK"},
  };
  for (const Case& c : cases) EXPECT_EQ(ErrorOf(c.spec), c.error) << c.spec;
}

// `py:` specs go to the factory a Python-embedding driver installs; without one they are
// refused with the way to a build that runs them, and the factory's parts get the spec's name.
TEST(PolicyRegistry, PythonSpecsNeedAFactory) {
  EXPECT_EQ(ErrorOf("py:my_policies.Short"),
            "policy 'py:my_policies.Short': Python policies need an orrery built with Python (cmake "
            "-DORRERY_PYTHON=ON, as scripts/test.sh builds it; docs/python.md)");
  std::string asked;
  SetPythonPolicyFactory([&asked](const std::string& spec, uint64_t, PolicyEnv*) -> Result<PolicyParts> {
    asked = spec;
    return MakePolicy("fifo", 1);
  });
  auto p = MakePolicy("py:my_policies.Short", 7);
  SetPythonPolicyFactory({});
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(asked, "py:my_policies.Short");
  EXPECT_EQ(p->name, "py:my_policies.Short");
}

// Every option reaches what it configures (observable parts of the built policy).
TEST(PolicyRegistry, OptionsReachThePolicy) {
  auto fifo = MakePolicy("fifo", 1);
  ASSERT_TRUE(fifo.ok());
  EXPECT_TRUE(fifo->blocking);
  EXPECT_EQ(fifo->post, nullptr);
  auto easy = MakePolicy("easy", 1);  // easy's own default: backfill=easy
  ASSERT_TRUE(easy.ok());
  EXPECT_NE(easy->post, nullptr);
  auto easy_off = MakePolicy("easy:backfill=none,blocking=false", 1);
  ASSERT_TRUE(easy_off.ok());
  EXPECT_EQ(easy_off->post, nullptr);
  EXPECT_FALSE(easy_off->blocking);
  auto srtf = MakePolicy("srtf", 1);  // srtf's own blocking: greedy
  ASSERT_TRUE(srtf.ok());
  EXPECT_FALSE(srtf->blocking);
  EXPECT_TRUE(srtf->preemptive);
  EXPECT_TRUE(srtf->reads_oracle());
  auto believed = MakePolicy("srtf:estimator=walltime", 1);
  ASSERT_TRUE(believed.ok());
  EXPECT_FALSE(believed->reads_oracle());
  auto share = MakePolicy("fifo:eval_share=0.25", 1);
  ASSERT_TRUE(share.ok());
  EXPECT_DOUBLE_EQ(share->reserve.share, 0.25);
  auto lucid_tiresias = MakePolicy("tiresias:preset=lucid", 1);
  ASSERT_TRUE(lucid_tiresias.ok());
  EXPECT_EQ(lucid_tiresias->tick, 60);  // the preset's interval
  auto event = MakePolicy("tiresias:preset=lucid,interval=0", 1);
  ASSERT_TRUE(event.ok());
  EXPECT_EQ(event->tick, 0);  // a given interval overrides the preset's
}

TEST(PolicyRegistry, EnergyPolicySpecsUseTheSameRules) {
  auto ok = ParseCesSpec("ces:period=300,forecaster=last");
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_EQ(ok->period, 300);
  EXPECT_EQ(ok->forecaster, "last");
  EXPECT_EQ(ok->buffer, 1);  // the schema's default
  EXPECT_EQ(ParseCesSpec("ces:period=0").error().message,
            "energy policy 'ces:period=0': parameter 'period': expected an integer in [1, 86400], got \"0\"");
  EXPECT_EQ(ParseCesSpec("ces:forecaster=lightgbm").error().message,
            "energy policy 'ces:forecaster=lightgbm': parameter 'forecaster': expected last, seasonal-daily, "
            "seasonal-weekly or xgboost, got \"lightgbm\"");
}

TEST(PolicyRegistry, DocsArePolicyListing) {
  std::ifstream in(std::string(ORRERY_SOURCE_DIR) + "/docs/policies.md");
  ASSERT_TRUE(in) << "docs/policies.md is missing: build/orrery simulate --list-policies > docs/policies.md";
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(ss.str(), PolicyListMarkdown())
      << "docs/policies.md differs from the registry: build/orrery simulate --list-policies > docs/policies.md";
}

}  // namespace
}  // namespace orrery
