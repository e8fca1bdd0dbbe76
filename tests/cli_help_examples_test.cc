// Every command's and subcommand's --help ends with its own examples, which run as written
// from the repository root (cli/commands.h SetExamples). This test walks the commands from
// the help screens, reads the examples, checks that each command has at least one of its own,
// and runs each with the built binary in place of ./build/orrery, from the source tree; examples marked "# needs a Slurm cluster" are only checked to exist
// (serve and replay need one), and those reading ../shared are skipped when it is absent.
#include <gtest/gtest.h>

#include "cli_testing.h"
#include <sys/wait.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "cli/commands.h"
#include "plan/model_names.h"

namespace {

using Out = orrery::cli_testing::CmdOut;

Out Shell(const std::string& cmd) { return orrery::cli_testing::RunShell(cmd); }

// The "  ./build/orrery ..." lines after "Examples (run from the repository root):".
std::vector<std::string> Examples(const std::string& help) {
  std::vector<std::string> out;
  size_t at = help.find("Examples (run from the repository root):");
  if (at == std::string::npos) return out;
  const std::string prefix = "  ./build/orrery ";
  for (size_t p = help.find('\n', at); p != std::string::npos && p + 1 < help.size();) {
    size_t e = help.find('\n', p + 1);
    std::string line = help.substr(p + 1, e == std::string::npos ? std::string::npos : e - p - 1);
    if (line.rfind(prefix, 0) == 0) out.push_back(line.substr(2));
    p = e;
  }
  return out;
}

// "./build/orrery x && ./build/orrery y" with the test's binary.
std::string WithBinary(std::string cmd) {
  const std::string from = "./build/orrery", to = ORRERY_BINARY;
  for (size_t p = cmd.find(from); p != std::string::npos; p = cmd.find(from, p + to.size())) cmd.replace(p, from.size(), to);
  return cmd;
}

void CheckCommand(const std::string& command) {
  SCOPED_TRACE(command.empty() ? "orrery" : command);
  Out help = Shell(std::string(ORRERY_BINARY) + " " + command + " --help");
  ASSERT_EQ(help.status, 0) << help.text;
  std::vector<std::string> ex = Examples(help.text);
  ASSERT_FALSE(ex.empty()) << "no examples in --help:\n" << help.text;
  for (const std::string& e : ex) {
    EXPECT_NE(e.find("orrery " + command), std::string::npos) << "example of another command: " << e;
    if (e.find(orrery::cli::kNeedsSlurm) != std::string::npos) continue;  // shown, not run
    if (e.find("../shared/") != std::string::npos &&
        !std::filesystem::exists(std::string(ORRERY_SOURCE_DIR) + "/../shared")) {
      std::printf("skipped (no ../shared next to the repository): %s\n", e.c_str());
      continue;
    }
    Out r = Shell("cd " + std::string(ORRERY_SOURCE_DIR) + " && " + WithBinary(e) + " > /dev/null");
    EXPECT_EQ(r.status, 0) << e << "\n" << r.text;
  }
}

// The subcommands a --help lists ("Subcommands:" then "  name   description" lines).
std::vector<std::string> Subcommands(const std::string& help) {
  std::vector<std::string> out;
  size_t at = help.find("\nSubcommands:\n");
  if (at == std::string::npos) return out;
  for (size_t p = help.find('\n', at + 1); p != std::string::npos && p + 1 < help.size();) {
    const size_t e = help.find('\n', p + 1);
    const std::string line = help.substr(p + 1, e == std::string::npos ? std::string::npos : e - p - 1);
    if (line.size() < 3 || line[0] != ' ' || line[2] == ' ') break;
    out.push_back(line.substr(2, line.find(' ', 2) - 2));
    p = e;
  }
  return out;
}

// Every command and subcommand the binary has, found from the help screens themselves, so
// that a new command without its own examples fails here.
void CheckTree(const std::string& command, size_t* checked) {
  CheckCommand(command);
  ++*checked;
  Out help = Shell(std::string(ORRERY_BINARY) + " " + command + " --help");
  for (const std::string& sub : Subcommands(help.text)) CheckTree(command.empty() ? sub : command + " " + sub, checked);
}

TEST(CliHelpExamples, EveryCommandAndSubcommandHasItsOwnRunnableExamples) {
  size_t checked = 0;
  CheckTree("", &checked);
  EXPECT_GE(checked, 33u);  // orrery, its 15 commands and their 17 subcommands
}

// The options of one --help screen: each line "  -o,--out TEXT   help" as its names (in order)
// and whether it takes a value.
struct HelpOption {
  std::vector<std::string> names;
  bool takes_value = false;
  std::string help;
};
std::vector<HelpOption> Options(const std::string& help) {
  std::vector<HelpOption> out;
  size_t at = help.find("\nOptions:\n");
  if (at == std::string::npos) return out;
  for (size_t p = help.find('\n', at + 1); p != std::string::npos && p + 1 < help.size();) {
    const size_t e = help.find('\n', p + 1);
    const std::string line = help.substr(p + 1, e == std::string::npos ? std::string::npos : e - p - 1);
    p = e;
    if (line.empty() || line.find_first_not_of(' ') == std::string::npos) break;
    const size_t first = line.find_first_not_of(' ');
    if (line[first] != '-') {  // help on its own line, after a long name column
      if (!out.empty()) out.back().help += " " + line.substr(first);
      continue;
    }
    HelpOption o;
    const size_t end = line.find(' ', first);
    const std::string names = line.substr(first, end - first);
    for (size_t q = 0; q <= names.size();) {
      const size_t c = names.find(',', q);
      o.names.push_back(names.substr(q, c == std::string::npos ? std::string::npos : c - q));
      if (c == std::string::npos) break;
      q = c + 1;
    }
    const std::string rest = end == std::string::npos ? "" : line.substr(end);
    const size_t word = rest.find_first_not_of(' ');
    // A value's type comes first (TEXT, UINT, INT:NONNEGATIVE, FLOAT:in ...); a flag's help
    // starts with its text (which may begin with a capitalised word such as JSON).
    const std::string type =
        word == std::string::npos ? "" : rest.substr(word, rest.find_first_of(" :", word) - word);
    static const char* const kTypes[] = {"TEXT", "INT", "UINT", "FLOAT", "BOOLEAN", "ENUM", "PATH", "FILE", "DIR"};
    o.takes_value = std::any_of(std::begin(kTypes), std::end(kTypes), [&](const char* t) { return type == t; });
    o.help = rest;
    out.push_back(o);
  }
  return out;
}

// The first long name of an option (its name in docs/cli.md); aliases may follow it.
std::string Primary(const HelpOption& o) {
  for (const std::string& n : o.names)
    if (n.rfind("--", 0) == 0) return n;
  return o.names.empty() ? "" : o.names[0];
}

// The model flags (docs/cli.md, "Model names") and the uses of the models each takes.
std::vector<orrery::plan::ModelUse> ModelUses(const std::string& command) {
  using orrery::plan::ModelUse;
  if (command == "plan estimate") return {ModelUse::kTraining, ModelUse::kInference};
  if (command == "plan lins-scaling") return {ModelUse::kTraining};
  if (command == "plan search") return {ModelUse::kSailor};
  if (command == "rl step") return {ModelUse::kInference};
  if (command == "eval plan" || command == "eval compare" || command == "eval submit" || command == "simulate")
    return {ModelUse::kEval};
  return {};
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// A model flag's help lists the canonical names of the models the command takes, and no older
// spelling (matched as a whole word, in any case).
void CheckModelFlag(const std::string& command, const HelpOption& o) {
  SCOPED_TRACE(Primary(o));
  const std::vector<orrery::plan::ModelUse> uses = ModelUses(command);
  ASSERT_FALSE(uses.empty()) << "a model flag the table of model uses does not know";
  for (orrery::plan::ModelUse u : uses)
    EXPECT_NE(o.help.find(orrery::plan::CanonicalModelList(u)), std::string::npos) << o.help;
  std::vector<std::string> words;
  std::string word;
  for (char c : o.help + " ") {
    if (std::string_view(" ,;():").find(c) == std::string_view::npos) {
      word += c;
    } else if (!word.empty()) {
      words.push_back(Lower(word));
      word.clear();
    }
  }
  for (const orrery::plan::ModelName& m : orrery::plan::ModelNames())
    for (std::string_view alias : m.aliases)
      if (!alias.empty())
        EXPECT_EQ(std::find(words.begin(), words.end(), Lower(std::string(alias))), words.end())
            << "older spelling " << alias << " of " << m.canonical << " in: " << o.help;
}

// One vocabulary (docs/cli.md): --format for a trace format, --out-dir DIR for a folder and
// --out FILE for a file, --json a switch that prints JSON to stdout, --model for a model (its help
// listing canonical names); older spellings only as aliases after the primary name.
void CheckVocabulary(const std::string& command, size_t* checked, size_t* models) {
  SCOPED_TRACE(command.empty() ? "orrery" : command);
  Out help = Shell(std::string(ORRERY_BINARY) + " " + command + " --help");
  for (const HelpOption& o : Options(help.text)) {
    const std::string name = Primary(o);
    ++*checked;
    EXPECT_NE(name, "--from") << "a trace format is --format";
    EXPECT_NE(name, "--output") << "an output file is --out";
    if (name == "--json") EXPECT_FALSE(o.takes_value) << "--json is a switch (JSON to stdout; --out FILE for a file)";
    const bool folder = o.help.find("Output directory") != std::string::npos ||
                        o.help.find("output folder") != std::string::npos;
    if (folder) EXPECT_EQ(name, "--out-dir") << "an output folder is --out-dir DIR:" << o.help;
    if (name == "--out") EXPECT_FALSE(folder) << "--out names a file";
    const bool model = std::any_of(o.names.begin(), o.names.end(), [](const std::string& n) {
      return n == "--model" || n == "--model-size" || n == "--eval-model-size";
    });
    if (model) {
      CheckModelFlag(command, o);
      ++*models;
    }
    EXPECT_NE(name, "--model-size") << "a model is --model (--model-size only as its alias)";
  }
  for (const std::string& sub : Subcommands(help.text))
    CheckVocabulary(command.empty() ? sub : command + " " + sub, checked, models);
}

TEST(CliVocabulary, EveryCommandUsesTheSameWordsForTheSameThings) {
  size_t checked = 0, models = 0;
  CheckVocabulary("", &checked, &models);
  EXPECT_GE(checked, 150u);  // options over every command and subcommand
  EXPECT_EQ(models, 8u);     // plan estimate, lins-scaling, search; rl step; eval plan, compare, submit; simulate
}

// README.md's quick start runs as written (serve, which needs a Slurm cluster, is only shown).
TEST(ReadmeQuickStart, CommandsRunAsWritten) {
  std::ifstream in(std::string(ORRERY_SOURCE_DIR) + "/README.md");
  ASSERT_TRUE(in);
  std::string line;
  bool in_section = false;
  size_t ran = 0;
  while (std::getline(in, line)) {
    if (line.rfind("## ", 0) == 0) in_section = line == "## Quick start";
    if (!in_section || line.rfind("./build/orrery ", 0) != 0 || line.find(" serve ") != std::string::npos) continue;
    const size_t comment = line.find("   #");
    const std::string cmd = line.substr(0, comment);
    Out r = Shell("cd " + std::string(ORRERY_SOURCE_DIR) + " && " + WithBinary(cmd) + " > /dev/null");
    EXPECT_EQ(r.status, 0) << cmd << "\n" << r.text;
    ++ran;
  }
  EXPECT_GE(ran, 10u);
}

}  // namespace
