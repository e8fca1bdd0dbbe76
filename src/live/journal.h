// The daemon's journal: SQLite in WAL mode. A decision is written (state "planned") and
// committed before it is applied to Slurm, then marked "applied" (or "failed" /
// "superseded"); keys are unique per decision (start/<job>/<gen>, requeue/<job>/<gen>,
// power-down/<node>/<n>), so a restarted daemon re-applies exactly the decisions that were
// planned but not yet confirmed, and never records one twice.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/result.h"
#include "base/time.h"
#include "live/recovery.h"
#include "live/slurm_client.h"
#include "logs/rules.h"

struct sqlite3;
struct sqlite3_stmt;

namespace orrery::live {

// What a decision does; stored as its name ("start", "requeue", "power-down", "power-up",
// "drain", "recover", "give-up", "undrain"). The last four are recovery's (live/recovery.h).
enum class DecisionKind : uint8_t {
  kStart,
  kRequeue,
  kPowerDown,
  kPowerUp,
  kDrain,    // drain a node a failure's diagnosis names (key drain/<node>/<job>/<gen>)
  kRecover,  // requeue (held) a failed or hung job to restart it (key recover/<job>/<gen>)
  kGiveUp,   // a failed job is not retried: nothing is sent, the reason is recorded (key recover/<job>/<gen>)
  kUndrain,  // an operator returns a drained node to service (key undrain/<node>/<n>)
};
// Where it is on the apply path; stored as its name ("planned", "applied", ...).
enum class DecisionState : uint8_t {
  kPlanned,     // journaled, not yet confirmed in Slurm
  kApplied,     // Slurm took it (or showed it in effect)
  kFailed,      // Slurm refused it and it is not retried (power actions)
  kSuperseded,  // it can no longer take effect (the job or node changed first)
  kAwaiting,    // a drain over the hourly limit: journaled, applied only once an operator confirms it
};
std::string_view DecisionKindName(DecisionKind k);
// Recovery's kinds (drain, recover, give-up, undrain): settled by recovery, not by a job's end.
bool IsRecoveryDecision(DecisionKind k);
std::string_view DecisionStateName(DecisionState s);
bool ParseDecisionKind(std::string_view s, DecisionKind* out);
bool ParseDecisionState(std::string_view s, DecisionState* out);

struct JournalDecision {
  std::string key;
  int64_t seq = 0;  // row id: total order of decisions
  int64_t cycle = 0;
  Time time = 0;
  DecisionKind kind = DecisionKind::kStart;
  uint32_t job = 0;
  uint32_t gen = 0;
  std::vector<NodeShare> nodes;  // start: where; power: the node
  DecisionState state = DecisionState::kPlanned;
  std::string detail;
  Time applied_time = kNoTime;
};

// A running job's last progress reading (live_signals.h), kept across restarts.
struct JournalProgress {
  uint32_t job = 0, gen = 0;
  int64_t step = -1, total = -1;
  double eta_s = -1;       // remaining seconds as of read_at (-1: none)
  Time at = kNoTime;       // when the step was reached
  Time read_at = kNoTime;  // when it was read
};

// One failure the daemon handled (live/recovery.h): what Slurm said, what the log's
// diagnosis found, what was done. The API's /api/v1/failures and the queue's reasons.
struct FailureRecord {
  uint32_t job = 0;
  uint32_t gen = 0;
  Time time = 0;
  Trigger trigger = Trigger::kFailed;                // what Slurm said, or a hang
  logs::Category category = logs::Category::kUnknown;  // the diagnosis's
  std::string subtype;      // e.g. "nccl_timeout", "module_not_found", "hang"
  std::string suspect;      // the node drained or named ("" none)
  RecoveryStep step = RecoveryStep::kGiveUp;          // what was done
  std::string reason;       // one line for people
  std::string evidence;     // the deciding log lines, newline-separated
  std::string logs;         // the files read, comma-separated
};

std::string EncodeNodes(const std::vector<NodeShare>& nodes);  // "node1:4,node2:8"
Result<std::vector<NodeShare>> DecodeNodes(const std::string& s);

class Journal {
 public:
  // synchronous_full: fsync at every commit (survives power loss); otherwise NORMAL (a
  // killed process still loses nothing in WAL mode).
  static Result<std::unique_ptr<Journal>> Open(const std::string& path, bool synchronous_full = true);
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  Status Begin();
  Status Commit();
  Status Rollback();
  // Records a planned decision; fails with "duplicate decision" when the key exists.
  Status Plan(JournalDecision* d);
  Status Mark(const std::string& key, DecisionState state, Time t, const std::string& detail);
  Result<std::vector<JournalDecision>> WithState(DecisionState state);
  Result<std::vector<JournalDecision>> Recent(size_t n);
  Result<std::vector<JournalDecision>> All();
  Result<JournalDecision> Get(const std::string& key);  // error when absent
  bool Has(const std::string& key);
  // Per-job generation (number of requeues the daemon has seen); absent = 0.
  Status SetGen(uint32_t job, uint32_t gen);
  Result<std::unordered_map<uint32_t, uint32_t>> Gens();
  Status Event(Time t, const std::string& kind, const std::string& detail);
  // Progress readings (journal_progress.cc): one row per job, replaced by each new one.
  Status SetProgress(const JournalProgress& p);
  Status DropProgress(uint32_t job);
  Result<std::vector<JournalProgress>> AllProgress();
  // Failures (replaces the record of the same job and generation).
  Status RecordFailure(const FailureRecord& f);
  Result<std::vector<FailureRecord>> Failures(size_t n);  // newest first
  Result<FailureRecord> FailureOf(uint32_t job, uint32_t gen);  // kNotFound when absent
  // Recoveries that requeued each job (failure records other than give-ups).
  Result<std::unordered_map<uint32_t, int>> Restarts();
  // Decisions of one kind planned at or after `since`, in order.
  Result<std::vector<JournalDecision>> OfKind(DecisionKind kind, Time since);
  Result<int64_t> GetCounter(const std::string& name);
  Status SetCounter(const std::string& name, int64_t v);
  const std::string& path() const { return path_; }
  // Copies the write-ahead log into the database when it holds at least min_pages pages
  // (automatic checkpoints are off: they ran inside a commit, on the decision path).
  Status Checkpoint(int min_pages);
  int wal_pages() const { return wal_pages_; }

 private:
  Journal() = default;
  Status Exec(const char* sql);
  Error Err(const std::string& what) const;
  Result<std::vector<JournalDecision>> Query(const std::string& where_order, const std::vector<std::string>& binds);
  Result<std::vector<FailureRecord>> FailuresWhere(const std::string& where_order);  // numbers only in the text
  // Prepared once per statement text (a literal: the pointer is the key), reused every cycle.
  Result<sqlite3_stmt*> Prepared(const char* sql);
  static int WalHook(void* self, sqlite3* db, const char* name, int pages);
  sqlite3* db_ = nullptr;
  std::string path_;
  std::unordered_map<const char*, sqlite3_stmt*> cache_;
  int wal_pages_ = 0;
};

}  // namespace orrery::live
