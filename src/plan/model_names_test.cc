#include "plan/model_names.h"

#include <cctype>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "plan/infer.h"
#include "plan/model.h"

namespace orrery::plan {
namespace {

// Every spelling a command accepted before, and what it names now (written out by hand, not
// derived from the table).
TEST(ModelNames, EveryOlderSpellingNamesItsCanonicalModel) {
  struct Row {
    const char* given;
    const char* canonical;
  } rows[] = {
      // plan estimate, plan lins-scaling: the training presets
      {"125M", "gpt-125m"},
      {"350M", "gpt-350m"},
      {"1.3B", "gpt-1.3b"},
      {"2.7B", "gpt-2.7b"},
      {"6.7B", "gpt-6.7b"},
      {"13B", "gpt-13b"},
      {"gpt-neo-2.7", "gpt-neo-2.7b"},
      {"opt-350", "opt-350m"},
      {"llama-7b", "llama-7b"},
      {"llama-13b", "llama-13b"},
      {"llama-30b", "llama-30b"},
      // plan search: Sailor's profile names
      {"GPT-Neo-2.7", "gpt-neo-2.7b"},
      {"OPT-350", "opt-350m"},
      {"OPT-30", "opt-30b"},
      {"LLAMA-3-8", "llama3-8b"},
      // plan estimate --phase, rl step: the decoder presets (already canonical; any case)
      {"qwen2.5-1.5b", "qwen2.5-1.5b"},
      {"qwen2.5-7b", "qwen2.5-7b"},
      {"Qwen2.5-7B", "qwen2.5-7b"},
      {"qwen2.5-14b", "qwen2.5-14b"},
      {"qwen2.5-32b", "qwen2.5-32b"},
      {"qwen2.5-72b", "qwen2.5-72b"},
      {"llama3-8b", "llama3-8b"},
      {"llama3-70b", "llama3-70b"},
      // the canonical names themselves, any case, '_' read as '-', outer spaces trimmed
      {"gpt-1.3b", "gpt-1.3b"},
      {"GPT_1.3B", "gpt-1.3b"},
      {" opt-30b ", "opt-30b"},
      {"1.3b", "gpt-1.3b"},
  };
  for (const Row& r : rows) {
    const ModelName* m = FindModel(r.given);
    ASSERT_NE(m, nullptr) << r.given;
    EXPECT_EQ(m->canonical, r.canonical) << r.given;
  }
  for (const char* unknown : {"", "gpt", "7B", "70B", "gpt-1.3", "qwen3-8b", "gpt:layers=2", "opt-350mm"})
    EXPECT_EQ(FindModel(unknown), nullptr) << unknown;
}

TEST(ModelNames, CanonicalNamesAreLowerCaseAndEverySpellingIsUnique) {
  std::set<std::string> seen;
  for (const ModelName& m : ModelNames()) {
    for (char c : m.canonical) EXPECT_FALSE(std::isupper(static_cast<unsigned char>(c))) << m.canonical;
    EXPECT_TRUE(seen.insert(std::string(m.canonical)).second) << m.canonical;
    for (std::string_view a : m.aliases) {
      if (a.empty()) continue;
      std::string low(a);
      for (char& c : low) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      EXPECT_TRUE(seen.insert(low).second) << a << " of " << m.canonical;
    }
  }
}

// Each use the table claims is one the model's command can run, and the other way round.
TEST(ModelNames, EachUseHasItsShapeProfileOrSize) {
  for (const ModelName& m : ModelNames()) {
    SCOPED_TRACE(std::string(m.canonical));
    const std::string name(m.canonical);
    Result<GptModel> train = ParseModelSpec(name);
    EXPECT_EQ(train.ok(), m.Has(ModelUse::kTraining));
    if (train.ok()) EXPECT_EQ(train->name, name);
    Result<DecoderShape> infer = ParseDecoder(name);
    EXPECT_EQ(infer.ok(), m.Has(ModelUse::kInference));
    if (infer.ok()) EXPECT_EQ(infer->name, name);
    EXPECT_EQ(!m.sailor.empty(), m.Has(ModelUse::kSailor));
    EXPECT_EQ(!m.eval_size.empty(), m.Has(ModelUse::kEval));
  }
  EXPECT_EQ(CanonicalModelList(ModelUse::kSailor), "gpt-neo-2.7b, opt-350m, opt-30b, llama3-8b");
  EXPECT_EQ(CanonicalModelList(ModelUse::kInference),
            "llama3-8b, llama3-70b, qwen2.5-1.5b, qwen2.5-7b, qwen2.5-14b, qwen2.5-32b, qwen2.5-72b");
  EXPECT_EQ(CanonicalModelList(ModelUse::kTraining),
            "gpt-125m, gpt-350m, gpt-1.3b, gpt-2.7b, gpt-6.7b, gpt-13b, gpt-neo-2.7b, opt-350m, llama-7b, llama-13b, "
            "llama-30b");
}

TEST(ModelNames, AnAliasGivesTheSameShapeAsItsCanonicalName) {
  EXPECT_DOUBLE_EQ(ParseModelSpec("1.3B")->TotalParams(), ParseModelSpec("gpt-1.3b")->TotalParams());
  EXPECT_EQ(ParseModelSpec("GPT-Neo-2.7")->vocab, 128256);
  EXPECT_EQ(ParseDecoder("LLAMA-3-8")->name, "llama3-8b");
}

TEST(ModelNames, ErrorsListTheCanonicalNamesThatApply) {
  Result<const ModelName*> unknown = ResolveModel("gpt-9b", ModelUse::kSailor);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().exit_code, kExitBadInput);
  EXPECT_EQ(unknown.error().message,
            "unknown model \"gpt-9b\": expected one of gpt-neo-2.7b, opt-350m, opt-30b, llama3-8b");
  Result<const ModelName*> other = ResolveModel("OPT-30", ModelUse::kTraining, "gpt:layers=L");
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.error().message,
            "model \"OPT-30\" is opt-30b, which has a Sailor profile, not a training shape: expected one of gpt-125m, "
            "gpt-350m, gpt-1.3b, gpt-2.7b, gpt-6.7b, gpt-13b, gpt-neo-2.7b, opt-350m, llama-7b, llama-13b, llama-30b "
            "or gpt:layers=L");
  Result<const ModelName*> canonical = ResolveModel("gpt-1.3b", ModelUse::kInference);
  ASSERT_FALSE(canonical.ok());
  EXPECT_EQ(canonical.error().message.rfind("model \"gpt-1.3b\" has a training shape, not an inference shape: expected one of llama3-8b", 0), 0u)
      << canonical.error().message;
  EXPECT_NE(ParseModelSpec("qwen2.5-7b").error().message.find("has an inference shape, not a training shape"),
            std::string::npos);
  EXPECT_NE(ParseDecoder("opt-350m").error().message.find("has a training shape and a Sailor profile, not an inference"),
            std::string::npos);
}

}  // namespace
}  // namespace orrery::plan
