#include "live/batch_submit.h"

#include <charconv>

#include "base/parse.h"

namespace orrery::live {

std::vector<std::string> SbatchArgs(const BatchSpec& s) {
  std::vector<std::string> a = {"--parsable", "-J", s.name, "-o", s.output, "-D", s.workdir,
                                "--cpus-per-task=" + std::to_string(s.cpus)};
  if (!s.partition.empty()) a.insert(a.end(), {"-p", s.partition});
  std::string array;
  for (uint32_t t : s.array_tasks) array += (array.empty() ? "" : ",") + std::to_string(t);
  if (array.empty() && s.array_size > 0) array = "0-" + std::to_string(s.array_size - 1);
  if (!array.empty()) a.push_back("--array=" + array + (s.array_throttle ? "%" + std::to_string(s.array_throttle) : ""));
  if (!s.after_ok.empty()) {
    std::string dep = "--dependency=afterok";
    for (const std::string& id : s.after_ok) dep += ":" + id;
    a.push_back(dep);
  }
  if (!s.nodelist.empty()) a.push_back("--nodelist=" + s.nodelist);
  if (s.gpus_per_node > 0) a.push_back("--gres=gpu:" + std::to_string(s.gpus_per_node));
  if (!s.comment.empty()) a.push_back("--comment=" + s.comment);
  std::string exp = "--export=ALL";
  for (const std::string& e : s.env) exp += "," + e;
  a.push_back(exp);
  a.push_back(s.script);
  return a;
}

Result<uint32_t> SubmitBatch(ExecSlurmClient& slurm, const BatchSpec& s) {
  for (const std::string& e : s.env)
    if (e.find(',') != std::string::npos || e.find('=') == std::string::npos)
      return MakeError("sbatch --export: \"" + e + "\" is not KEY=VALUE without commas", kExitRuntime);
  for (uint32_t t : s.array_tasks)
    if (t >= kMaxArrayTasks)
      return MakeError("sbatch --array: expected task indexes below " + std::to_string(kMaxArrayTasks) + ", got " +
                           std::to_string(t),
                       kExitRuntime);
  if (s.array_size > kMaxArrayTasks)
    return MakeError("sbatch --array: expected at most " + std::to_string(kMaxArrayTasks) + " tasks, got " +
                         std::to_string(s.array_size),
                     kExitRuntime);
  std::vector<std::string> args = SbatchArgs(s);
  size_t bytes = 0;
  for (const std::string& a : args) bytes += a.size() + 1;
  if (bytes > kMaxSbatchArgBytes)
    return MakeError("sbatch arguments: expected at most " + std::to_string(kMaxSbatchArgBytes) + " bytes, got " +
                         std::to_string(bytes) + " (" + std::to_string(s.after_ok.size()) + " dependencies)",
                     kExitRuntime);
  ORR_ASSIGN_OR_RETURN(std::string out, slurm.Run("sbatch", args));
  std::string_view t = Trim(out);
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r')) t.remove_suffix(1);
  t = t.substr(0, t.find(';'));
  uint32_t id = 0;
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), id);
  if (ec != std::errc() || p != t.data() + t.size() || id == 0)
    return MakeError("sbatch --parsable printed \"" + std::string(t) + "\", expected a job id", kExitRuntime);
  return id;
}

const char* const kArrayTaskFormat = "%i\x1f%T\x1f%k";

Result<std::vector<ArrayTask>> ParseArrayTasks(std::string_view text) {
  std::vector<ArrayTask> out;
  size_t lineno = 0;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    const size_t a = line.find(kFieldSep), b = a == std::string_view::npos ? a : line.find(kFieldSep, a + 1);
    const std::string_view id = line.substr(0, a);
    const size_t us = id.find('_');
    uint32_t job = 0, task = 0;
    const auto num = [](std::string_view s, uint32_t* v) {
      auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
      return !s.empty() && ec == std::errc() && p == s.data() + s.size();
    };
    if (b == std::string_view::npos || us == std::string_view::npos || !num(id.substr(0, us), &job) ||
        !num(id.substr(us + 1), &task) || job == 0)
      return MakeError("squeue output line " + std::to_string(lineno) +
                           ": expected an array task \"JOB_TASK<sep>STATE<sep>COMMENT\", found \"" +
                           std::string(line.substr(0, 120)) + "\"",
                       kExitRuntime);
    const std::string_view state = line.substr(a + 1, b - a - 1);
    out.push_back(ArrayTask{job, task, ParseSlurmJobState(state), std::string(state), std::string(line.substr(b + 1))});
  }
  return out;
}

Result<std::vector<ArrayTask>> ListArrayTasks(ExecSlurmClient& slurm, const std::string& name, const std::string& job) {
  std::vector<std::string> args = {"-h", "-r", "-t", "all", "-o", kArrayTaskFormat};
  if (!name.empty()) args.insert(args.end(), {"-n", name});
  if (!job.empty()) args.insert(args.end(), {"-j", job});
  ORR_ASSIGN_OR_RETURN(std::string out, slurm.Run("squeue", args));
  return ParseArrayTasks(out);
}

}  // namespace orrery::live
