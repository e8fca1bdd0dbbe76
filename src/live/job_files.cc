// A job's own files from Slurm: StdOut/StdErr/WorkDir (`scontrol show job -o`) and the batch
// script (`scontrol write batch_script JOB -`), for the daemon's signal readers.
#include <optional>
#include <string>

#include "live/slurm_client.h"

namespace orrery::live {

namespace {

bool KeyChar(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == ':' || c == '/';
}

// Where the value starting at `from` ends: before the next " Key=" (values such as paths may
// hold spaces; keys hold none), or at the end of the line.
size_t ValueEnd(std::string_view s, size_t from) {
  for (size_t i = from; i < s.size(); ++i) {
    if (s[i] == '\n') return i;
    if (s[i] != ' ') continue;
    size_t k = i + 1;
    while (k < s.size() && KeyChar(s[k])) ++k;
    if (k > i + 1 && k < s.size() && s[k] == '=') return i;
  }
  return s.size();
}

// The value of `key` in a `scontrol show job -o` line; nullopt when absent.
std::optional<std::string> Field(std::string_view s, std::string_view key) {
  const std::string pat = std::string(key) + "=";
  size_t p = s.find(pat);
  while (p != std::string_view::npos && p > 0 && s[p - 1] != ' ') p = s.find(pat, p + 1);  // "XStdOut=" is not it
  if (p == std::string_view::npos) return std::nullopt;
  const size_t from = p + pat.size();
  std::string v(s.substr(from, ValueEnd(s, from) - from));
  return v == "(null)" ? std::string() : v;
}

std::string Absolute(const std::string& path, const std::string& workdir) {
  if (path.empty() || path[0] == '/' || workdir.empty()) return path;
  return workdir + (workdir.back() == '/' ? "" : "/") + path;
}

}  // namespace

Result<JobFiles> ParseJobFiles(std::string_view text) {
  auto out = Field(text, "StdOut");
  if (!out)
    return MakeError("scontrol show job: expected a StdOut= field, got \"" + std::string(text.substr(0, 120)) + "\"",
                     kExitRuntime, ErrorCode::kNotFound);
  JobFiles f;
  f.workdir = Field(text, "WorkDir").value_or("");
  f.stdout_path = Absolute(*out, f.workdir);
  f.stderr_path = Absolute(Field(text, "StdErr").value_or(""), f.workdir);
  return f;
}

Result<JobFiles> SlurmClient::Files(uint32_t) {
  return MakeError("this Slurm client cannot read job files", kExitRuntime, ErrorCode::kNotFound);
}

Result<std::string> SlurmClient::BatchScript(uint32_t) {
  return MakeError("this Slurm client cannot read batch scripts", kExitRuntime, ErrorCode::kNotFound);
}

Result<JobFiles> ExecSlurmClient::Files(uint32_t job) {
  ORR_ASSIGN_OR_RETURN(std::string out, Run("scontrol", {"show", "job", "-o", std::to_string(job)}));
  return ParseJobFiles(out);
}

Result<std::string> ExecSlurmClient::BatchScript(uint32_t job) {
  ORR_ASSIGN_OR_RETURN(std::string out, Run("scontrol", {"write", "batch_script", std::to_string(job), "-"}));
  if (out.size() > kMaxBatchScriptBytes) out.resize(kMaxBatchScriptBytes);
  return out;
}

}  // namespace orrery::live
