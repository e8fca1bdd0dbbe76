#include "live/live_signals.h"

#include <algorithm>

namespace orrery::live {

// One job: its launch file (advisor) and, while it runs, its log's tail and tracker.
struct LiveSignals::JobState {
  std::optional<semantic::InputFile> script;
  std::optional<semantic::LaunchSchema> schema;  // of the script: the readers', completed by the LLM
  bool llm_pending = false;                      // its question is to be sent or awaits its answer
  std::string llm_key;                           // ... the question's id (the filler's key of the script)
  bool script_tried = false;
  std::string log;                 // StdOut path ("" = not known yet)
  Time lookup_at = kNoTime;        // the next lookup or read is allowed from then
  uint32_t gen = UINT32_MAX;       // attempt the tail and tracker belong to
  std::unique_ptr<LogTail> tail;
  std::unique_ptr<logs::ProgressTracker> tracker;
  Time next_read = kNoTime;
  int64_t reported_step = -1;
  ProgressView view;
  std::optional<JournalProgress> restored;  // journaled before a restart, until the log shows a new step
  bool restored_sent = false;               // ... reported to the core (once, at the first Poll)
  std::string input_error;                  // the latest located input problem ("" = none)
};

LiveSignals::LiveSignals(SignalsOptions options, SlurmClient* slurm) : o_(std::move(options)), slurm_(slurm) {
  if (!o_.llm || !o_.any()) return;
  std::string warning;
  llm_cache_ = llm::OpenLlmCache(*o_.llm, &warning);
  if (!warning.empty()) last_error_ = "llm cache: " + warning;
  if (o_.tracker) {
    llm_client_ = std::make_unique<llm::HttpChatClient>(*o_.llm);
    oracle_ = std::make_unique<logs::LlmFormatOracle>(llm_client_.get(), llm_cache_.get());
  }
  if (o_.advisor) {  // asked in the background only: the filler itself never sends
    filler_ = std::make_unique<semantic::LlmSchemaFiller>(nullptr, llm_cache_.get(), o_.llm->model, o_.llm->max_context_bytes);
    asker_ = std::make_unique<llm::AsyncAsker>(std::make_unique<llm::HttpChatClient>(*o_.llm));
  }
}

LiveSignals::~LiveSignals() = default;

LiveSignals::JobState& LiveSignals::StateOf(uint32_t job) {
  auto& p = jobs_[job];
  if (!p) p = std::make_unique<JobState>();
  return *p;
}

// ---------------------------------------------------------------- advisor

void LiveSignals::ReadLaunchFile(uint32_t job) {
  JobState& s = StateOf(job);
  if (s.script_tried) return;
  s.script_tried = true;
  Result<std::string> text = slurm_->BatchScript(job);
  if (!text.ok()) {
    ++st_.script_errors;
    s.input_error = "batch script: " + text.error().message;
    last_error_ = "job " + std::to_string(job) + ": " + s.input_error;
    return;
  }
  ++st_.scripts_read;
  s.script = semantic::InputFile{"job-" + std::to_string(job) + ".sbatch", std::move(*text)};
  s.schema = semantic::InspectText(s.script->name, s.script->text);
  if (!s.schema->warnings.empty()) s.input_error = semantic::FormatWarning(s.schema->warnings.front());
  if (!filler_) return;
  const semantic::LlmOutcome o = filler_->FromCache(&*s.schema, *s.script);
  if (o == semantic::LlmOutcome::kPending) {
    s.llm_pending = true;
    s.llm_key = filler_->Key(*s.script);
    llm_wanted_.push_back(job);
    return;
  }
  if (o != semantic::LlmOutcome::kNotNeeded) ++st_.llm_config_cached;
  CountOutcome(o);
}

std::optional<semantic::InputFile> LiveSignals::LaunchFile(uint32_t job) const {
  auto it = jobs_.find(job);
  if (it == jobs_.end()) return std::nullopt;
  return it->second->script;
}

std::optional<semantic::LaunchSchema> LiveSignals::LaunchSchemaOf(uint32_t job) const {
  auto it = jobs_.find(job);
  if (it == jobs_.end()) return std::nullopt;
  return it->second->schema;
}

// ---------------------------------------------------------------- advisor: LLM fallback

void LiveSignals::CountOutcome(semantic::LlmOutcome o) {
  switch (o) {
    case semantic::LlmOutcome::kMerged: ++st_.llm_config_merged; return;
    case semantic::LlmOutcome::kRejected: ++st_.llm_config_rejected; return;
    case semantic::LlmOutcome::kNoAnswer: ++st_.llm_config_failed; return;
    case semantic::LlmOutcome::kNotNeeded:
    case semantic::LlmOutcome::kPending: return;
  }
}

// An answer (or a transport failure) for every job waiting on that config: the first job's
// Answered keeps a valid answer in the cache, the others then read it from there.
void LiveSignals::ApplyAnswer(const llm::AsyncAsker::Answer& a, std::vector<uint32_t>* improved) {
  bool first = true;
  for (auto& [id, js] : jobs_) {
    JobState& s = *js;
    if (!s.llm_pending || s.llm_key != a.id) continue;
    s.llm_pending = false;
    const semantic::LlmOutcome o = first || !a.content.ok() ? filler_->Answered(&*s.schema, *s.script, a.content)
                                                            : filler_->FromCache(&*s.schema, *s.script);
    first = false;
    CountOutcome(o);
    if (o == semantic::LlmOutcome::kMerged) improved->push_back(id);
    else if (!s.schema->warnings.empty()) {
      s.input_error = semantic::FormatWarning(s.schema->warnings.back());
      last_error_ = "job " + std::to_string(id) + ": " + s.input_error;
    }
  }
}

// Up to llm_questions_per_cycle new questions, oldest job first; a config already asked
// about (another job's) is not asked again, its answer serves both.
void LiveSignals::SendQuestions() {
  uint32_t budget = o_.llm_questions_per_cycle;
  while (budget > 0 && !llm_wanted_.empty()) {
    const uint32_t job = llm_wanted_.front();
    auto it = jobs_.find(job);
    if (it == jobs_.end() || !it->second->llm_pending) {
      llm_wanted_.pop_front();
      continue;
    }
    const JobState& js = *it->second;
    switch (asker_->Ask(js.llm_key, std::string(semantic::SchemaPrompt()), filler_->Question(*js.script))) {
      case llm::AsyncAsker::Queued::kFull: return;  // this job waits for a later cycle
      case llm::AsyncAsker::Queued::kAlreadyAsked: break;  // another job's question: its answer serves both
      case llm::AsyncAsker::Queued::kYes:
        ++st_.llm_config_questions;
        --budget;
        break;
    }
    llm_wanted_.pop_front();
  }
}

void LiveSignals::AdvisorStep(std::vector<uint32_t>* improved) {
  if (!asker_) return;
  for (const llm::AsyncAsker::Answer& a : asker_->Take()) ApplyAnswer(a, improved);
  SendQuestions();
}

// ---------------------------------------------------------------- tracker

void LiveSignals::NewAttempt(JobState& s, uint32_t gen) {
  s.gen = gen;
  s.tail.reset();
  s.tracker = std::make_unique<logs::ProgressTracker>(logs::TrackerOptions{}, oracle_.get());
  s.next_read = kNoTime;
  s.reported_step = -1;
  const std::string log = s.view.log;
  s.view = ProgressView{};
  s.view.log = log;
  if (s.restored && s.restored->gen != gen) s.restored.reset();
}

// Whether the job's StdOut path is known, asking Slurm when allowed (a bounded number of
// lookups per cycle; a failed one waits lookup_retry_s).
bool LiveSignals::KnowsLog(uint32_t job, JobState& s, Time now, uint32_t* lookups) {
  if (!s.log.empty()) return true;
  if (*lookups == 0 || (s.lookup_at != kNoTime && now < s.lookup_at)) return false;
  --*lookups;
  ++st_.lookups;
  Result<JobFiles> f = slurm_->Files(job);
  if (!f.ok() || f->stdout_path.empty()) {
    ++st_.lookup_errors;
    last_error_ = "job " + std::to_string(job) + ": StdOut: " + (f.ok() ? "Slurm shows none" : f.error().message);
    s.lookup_at = now + o_.lookup_retry_s;
    return false;
  }
  s.log = f->stdout_path;
  s.view.log = s.log;
  return true;
}

// Reads the new bytes of the job's log (at most `budget`) into its tracker; returns the bytes read.
size_t LiveSignals::ReadLog(JobState& s, Time now, size_t budget) {
  if (!s.tail) s.tail = std::make_unique<LogTail>(s.log, TailOptions{o_.max_bytes_per_job, true});
  Result<TailRead> r = s.tail->Read([&](std::string_view line) {
    s.tracker->Feed(line, now);
    s.tracker->Feed("\n", now);
  }, budget);
  if (!r.ok()) {
    ++st_.read_errors;
    s.input_error = "StdOut: " + r.error().message;
    last_error_ = r.error().message;
    s.next_read = now + std::max(o_.read_interval_s, o_.lookup_retry_s);
    return 0;
  }
  s.next_read = now + o_.read_interval_s;
  st_.bytes_read += r->bytes;
  st_.bytes_skipped += r->skipped;
  st_.lines += r->lines;
  st_.truncations += r->truncated;
  st_.rotations += r->rotated;
  return r->bytes;
}

// The tracker's reading into the view; a report (and a journal row) when the step changed.
void LiveSignals::Reading(uint32_t job, uint32_t slot, JobState& s, Time now, std::vector<Report>* out,
                          std::vector<JournalProgress>* changed) {
  const logs::Reading r = s.tracker->latest();
  ProgressView& v = s.view;
  v.stalled = s.tracker->Stalled(now);
  if (!r.step) return;
  v.framework = r.framework;
  v.loss = r.loss;
  v.seconds_per_step = r.smoothed_step_s ? r.smoothed_step_s : r.seconds_per_step;
  if (*r.step == s.reported_step && r.total_steps.value_or(-1) == v.total) return;
  v.step = *r.step;
  v.total = r.total_steps.value_or(-1);
  v.eta_s = r.eta_s;
  v.read_at = now;
  // A step the journal already had before a restart was reached then, not now.
  const bool same_as_restored = s.restored && s.restored->step == v.step;
  v.progress_at = same_as_restored ? s.restored->at : (r.updated == kNoTime ? now : r.updated);
  s.restored.reset();
  s.reported_step = v.step;
  ++st_.reports;
  out->push_back(Report{job, slot, SignalReading{v.step, v.total, v.eta_s.value_or(-1)}, v.progress_at});
  changed->push_back(JournalProgress{job, s.gen, v.step, v.total, v.eta_s.value_or(-1), v.progress_at, v.read_at});
}

void LiveSignals::Poll(std::vector<RunningJob> running, Time now, std::vector<Report>* out,
                       std::vector<JournalProgress>* changed) {
  if (!o_.tracker) return;
  std::sort(running.begin(), running.end(), [](const RunningJob& a, const RunningJob& b) { return a.job < b.job; });
  // Round robin: start after the job where the last cycle's budget ran out.
  auto first = std::upper_bound(running.begin(), running.end(), rr_after_,
                                [](uint32_t id, const RunningJob& r) { return id < r.job; });
  std::rotate(running.begin(), first, running.end());
  size_t budget = o_.max_bytes_per_cycle;
  uint32_t lookups = o_.lookups_per_cycle;
  for (const RunningJob& rj : running) {
    JobState& s = StateOf(rj.job);
    if (s.gen != rj.gen) NewAttempt(s, rj.gen);
    if (s.restored && !s.restored_sent) {  // the journaled belief, to the core before the first read
      s.restored_sent = true;
      const JournalProgress& p = *s.restored;
      const double eta = p.eta_s < 0 ? -1 : std::max(0.0, p.eta_s - static_cast<double>(now - p.read_at));
      out->push_back(Report{rj.job, rj.slot, SignalReading{p.step, p.total, eta}, p.at});
      s.view.step = p.step;
      s.view.total = p.total;
      s.view.eta_s = eta < 0 ? std::nullopt : std::optional<double>(eta);
      s.view.read_at = now;
      s.view.progress_at = p.at;
      s.reported_step = p.step;
    }
    if (!KnowsLog(rj.job, s, now, &lookups)) continue;
    if (s.next_read != kNoTime && now < s.next_read) continue;
    if (budget == 0) {
      ++st_.capped_cycles;
      break;
    }
    budget -= std::min(budget, ReadLog(s, now, budget));
    rr_after_ = rj.job;
    Reading(rj.job, rj.slot, s, now, out, changed);
  }
  if (oracle_) st_.llm_calls = oracle_->calls();
}

void LiveSignals::Restore(const JournalProgress& p) {
  JobState& s = StateOf(p.job);
  s.gen = p.gen;
  s.tracker = std::make_unique<logs::ProgressTracker>(logs::TrackerOptions{}, oracle_.get());
  s.restored = p;
}

std::vector<uint32_t> LiveSignals::Known() const {
  std::vector<uint32_t> ids;
  ids.reserve(jobs_.size());
  for (const auto& [id, s] : jobs_) ids.push_back(id);
  return ids;
}

void LiveSignals::Forget(uint32_t job) { jobs_.erase(job); }

const ProgressView* LiveSignals::View(uint32_t job) const {
  auto it = jobs_.find(job);
  if (it == jobs_.end() || it->second->view.step < 0) return nullptr;
  return &it->second->view;
}

std::string LiveSignals::InputError(uint32_t job) const {
  auto it = jobs_.find(job);
  return it == jobs_.end() ? std::string() : it->second->input_error;
}

}  // namespace orrery::live
