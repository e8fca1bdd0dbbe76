// The live driver's only window onto Slurm. Everything that knows Slurm's vocabulary
// (job states, hold reasons, hostlists, GRES strings, scontrol verbs) lives in live/;
// policies see the same ClusterState/SchedJob as in the simulator.
//
// Two implementations: ExecSlurmClient runs squeue/sinfo/scontrol/sbatch (fork/exec with
// argument vectors, no shell, a timeout, stderr captured into the error), and FakeSlurm
// (fake_slurm.h) keeps an in-memory cluster for unit tests and the cycle benchmark.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "base/time.h"
#include "live/listing_delta.h"
#include "model/attempt.h"

namespace orrery::live {

enum class SlurmJobState : uint8_t {
  kPending,
  kRunning,     // RUNNING, COMPLETING, CONFIGURING, SUSPENDED (holds resources)
  kFinished,    // COMPLETED
  kFailed,      // FAILED, TIMEOUT, NODE_FAIL, OUT_OF_MEMORY, BOOT_FAIL, DEADLINE
  kCancelled,   // CANCELLED, PREEMPTED, REVOKED
};
std::string_view SlurmJobStateName(SlurmJobState s);
// A state name as squeue prints it (%T: "PENDING", "RUNNING", "CANCELLED", ...).
SlurmJobState ParseSlurmJobState(std::string_view raw);
bool IsTerminal(SlurmJobState s);
// Why Slurm reports a job failed (SlurmJobState::kFailed), from its state name.
enum class SlurmFailure : uint8_t {
  kNone,         // not failed
  kExit,         // FAILED, SPECIAL_EXIT: the batch script exited non-zero
  kNodeFail,     // NODE_FAIL: a node of the job failed
  kBootFail,     // BOOT_FAIL: a node could not be booted for it
  kTimeout,      // TIMEOUT, DEADLINE: it ran past its time limit or deadline
  kOutOfMemory,  // OUT_OF_MEMORY: the cgroup memory limit
};
std::string_view SlurmFailureName(SlurmFailure f);  // "", "FAILED", "NODE_FAIL", "BOOT_FAIL", "TIMEOUT", "OUT_OF_MEMORY"
// The core's failure kind for a Slurm failure when nothing else is known (no diagnosis).
FailureKind FailureKindOf(SlurmFailure f);
struct SlurmJob;
// A released pending job that waits because nodes it was pinned to are unavailable
// (reason ReqNodeNotAvail: a node went down between the decision and the launch).
bool WaitsForUnavailableNodes(const SlurmJob& j);
// A released pending job that waits for its begin time (reason BeginTime): after a requeue,
// Slurm pushes it ~2 minutes ahead when the requeue completes.
bool WaitsForBeginTime(const SlurmJob& j);
// Slurm lists the job COMPLETING: its processes are being killed (after a requeue: until the
// requeue completes and it is pending again).
bool Completing(const SlurmJob& j);

struct SlurmJob {
  uint32_t id = 0;
  std::string name;
  std::string partition;
  std::string user;
  SlurmJobState state = SlurmJobState::kPending;
  SlurmFailure failure = SlurmFailure::kNone;  // why, when state is kFailed
  std::string state_raw;      // e.g. "PENDING", "COMPLETING"
  std::string reason;         // e.g. "JobHeldAdmin", "Resources", "None"
  bool held = false;          // user or admin hold (priority 0)
  uint32_t num_nodes = 1;
  uint32_t gpus_per_node = 0;  // from --gres=gpu:N (per node)
  Duration time_limit = -1;   // seconds; -1 = UNLIMITED / unknown
  Time submit = kNoTime;      // Unix seconds
  Time start = kNoTime;
  Time end = kNoTime;
  std::vector<std::string> nodes;  // expanded node list (running jobs)
  std::string comment;        // carries the duration hint "orrery:duration=SECONDS"
};

enum class NodeAvail : uint8_t {
  kUp,           // idle / mixed / allocated / completing: schedulable
  kDown,         // down, drained, failing, not responding, fail
  kPoweredDown,  // powered off (~) or powering down (%, !)
  kPoweringUp,   // powering up (#)
};
std::string_view NodeAvailName(NodeAvail a);

struct SlurmNode {
  std::string name;
  std::string partition;
  std::string state_raw;  // sinfo %T, e.g. "idle", "mixed", "idle~", "down*"
  NodeAvail avail = NodeAvail::kUp;
  uint16_t gpus = 0;
  uint16_t gpus_used = 0;
};

// One node's share of a start decision.
struct NodeShare {
  std::string node;
  uint16_t gpus = 0;
};

struct SubmitSpec {
  std::string name = "orrery";
  std::string partition;
  uint32_t nodes = 1;
  uint32_t gpus_per_node = 0;
  Duration sleep_s = 1;       // the job runs `sleep sleep_s`
  Duration duration_hint = -1;  // written as comment orrery:duration=N
  std::string comment;          // more of the comment (e.g. "orrery:heartbeat=PATH", recovery.h)
  Duration time_limit_s = -1;
  bool hold = true;
  std::string workdir = "/tmp";
  std::string user;             // sbatch --uid (root only); empty: the caller
  std::string account;          // sbatch --account; empty: the user's default
  uint32_t cpus_per_gpu = 0;    // sbatch --cpus-per-gpu; 0: Slurm's default
};

// A job's own files as `scontrol show job` reports them (Slurm expands %j, %x, ... there; a
// relative path is taken relative to WorkDir). Empty when Slurm shows none.
struct JobFiles {
  std::string stdout_path;
  std::string stderr_path;
  std::string workdir;
};
// Batch scripts longer than this are cut (the advisor reads launch settings, not data).
inline constexpr size_t kMaxBatchScriptBytes = 1 << 20;

// A job listing: everything Slurm reports (full) or only the jobs changed since a cursor
// (like slurmrestd's update_time filter; squeue has none: ExecSlurmClient compares each row's
// bytes with its previous listing's, as for nodes; FakeSlurm keeps a change log).
struct JobListing {
  bool full = true;
  uint64_t cursor = 0;  // pass back to get the changes after this listing (0 = full listing)
  std::vector<SlurmJob> jobs;  // full: every job; else the new and changed ones (and the swept slice's)
  std::vector<uint32_t> gone;  // not full: jobs of earlier listings that are no longer listed
  Sweep swept;                 // not full: jobs holds every listed job of this slice (none: swept.of == 0)
};

// The key of a node listing's row: `sinfo -N` lists a node once per partition.
struct NodeRow {
  std::string name;
  std::string partition;
};

// A node listing: every row Slurm lists (full), or only the rows changed since a cursor: new
// rows, rows with a changed field, and the rows no longer listed. sinfo has no changed-since
// filter: ExecSlurmClient compares each row's bytes with its previous listing's
// (listing_delta.h); FakeSlurm keeps a change log (as slurmrestd's update_time would).
struct NodeListing {
  bool full = true;
  uint64_t cursor = 0;           // pass back to get the changes after this listing (0: full listings only)
  std::vector<SlurmNode> nodes;  // full: every row; else the new and changed rows (and the swept slice's)
  std::vector<NodeRow> gone;     // not full: rows of earlier listings that are no longer listed
  Sweep swept;                   // not full: nodes holds every listed row of this slice (none: swept.of == 0)
};

// The rolling resync's slices, the one rule for every client: job `id` is in slice id % of, a
// node row in slice FNV-1a(node name) % of (all partitions' rows of a node in one slice).
uint32_t JobSlice(uint32_t id, uint32_t of);
uint32_t NodeSlice(std::string_view name, uint32_t of);
// The same for a listing's row key (listing_delta.h): squeue's job id, sinfo's "name<sep>partition".
uint32_t SqueueKeySlice(std::string_view key, uint32_t of);
uint32_t SinfoKeySlice(std::string_view key, uint32_t of);

class SlurmClient {
 public:
  virtual ~SlurmClient() = default;
  // Jobs of the given partitions (empty = all) in every state Slurm still reports; with
  // cursor != 0 an implementation may return only the jobs changed since that listing, plus
  // every listed job of `sweep`'s slice (the rolling resync; JobListing::swept says it did).
  Result<JobListing> Jobs(const std::vector<std::string>& partitions, uint64_t cursor, Sweep sweep = {}) {
    return ListJobs(partitions, cursor, sweep);
  }
  virtual Result<std::vector<SlurmNode>> Nodes(const std::vector<std::string>& partitions) = 0;
  // The daemon's read every cycle: with cursor != 0 (a cursor this client returned, for the
  // same partitions) only the rows changed since that listing, plus `sweep`'s slice.
  Result<NodeListing> NodeChanges(const std::vector<std::string>& partitions, uint64_t cursor, Sweep sweep = {}) {
    return ListNodeChanges(partitions, cursor, sweep);
  }
  // Admin hold of a pending job. Holding an already held job is not an error.
  virtual Status Hold(uint32_t job) = 0;
  // Pins a held pending job to `nodes` (ReqNodeList) and releases it, so that
  // Slurm starts it there. Releasing a job that is no longer held is not an error.
  // `after_requeue`: the job was requeued before, and Slurm pushed its begin time ~2 minutes
  // ahead when the requeue completed; it is made eligible now (StartTime=now).
  virtual Status StartOn(uint32_t job, const std::vector<NodeShare>& nodes, bool after_requeue) = 0;
  // Changes a held pending job's request to `nodes`: as many nodes, the same GPU count on
  // each (NumNodes=N-N TresPerNode=gres:gpu:G ReqNodeList=...; Slurm 22.05 refuses NumNodes=N
  // alone when N exceeds the old maximum). The shape the planner chose for a job that opted
  // in (flex_shape.h); StartOn releases it afterwards. An error when the nodes' GPU counts
  // differ (Slurm's request is per node).
  virtual Status Reshape(uint32_t job, const std::vector<NodeShare>& nodes) = 0;
  // Requeues a running job and holds it (preemption); the job must be requeueable.
  virtual Status RequeueHold(uint32_t job) = 0;
  virtual Status SetPriority(uint32_t job, uint32_t priority) = 0;
  // Node power through Slurm's power-saving interface (SuspendProgram / ResumeProgram).
  virtual Status PowerDown(const std::string& node) = 0;
  virtual Status PowerUp(const std::string& node) = 0;
  virtual Result<uint32_t> Submit(const SubmitSpec& spec) = 0;
  virtual Status Cancel(uint32_t job) = 0;
  // The job's StdOut/StdErr paths and working directory (job_files.cc). Clients that cannot
  // tell answer kNotFound.
  virtual Result<JobFiles> Files(uint32_t job);
  // The job's batch script (at most kMaxBatchScriptBytes); kNotFound when the job has none
  // (interactive allocations) or the client cannot tell.
  virtual Result<std::string> BatchScript(uint32_t job);
  // --- recovery (live/recovery.h)
  // Drains a node (running jobs finish, no new ones start): State=DRAIN Reason="...".
  virtual Status Drain(const std::string& node, const std::string& reason) = 0;
  // Returns a drained node to service (State=RESUME).
  virtual Status Undrain(const std::string& node) = 0;
  // Requeues a failed or running batch job into pending, held (StartOn with after_requeue
  // starts it again).
  virtual Status RestartHeld(uint32_t job) = 0;

 protected:
  // Jobs and NodeChanges. The default NodeChanges lists in full (Nodes).
  virtual Result<JobListing> ListJobs(const std::vector<std::string>& partitions, uint64_t cursor, Sweep sweep) = 0;
  virtual Result<NodeListing> ListNodeChanges(const std::vector<std::string>& partitions, uint64_t cursor, Sweep sweep);
};

// The per-node GPU count of `nodes` when every node has the same one (Slurm's per-node
// request), else an error naming the two counts.
Result<uint16_t> UniformGpus(const std::vector<NodeShare>& nodes);

// --- parsing helpers (public for tests and fuzzing)

// "node[1-3,7],gpu-a[01-02]" -> node1 node2 node3 node7 gpu-a01 gpu-a02. Errors on
// unbalanced brackets or bad ranges; "(null)" and "" give an empty list. The expansion is
// bounded before anything is allocated, by count and by bytes: at most `max_names` names
// (kMaxHostlistNames, or the size of the cluster when it is known), each at most
// kMaxNodeNameBytes long (Slurm's node names are host names), kMaxHostlistBytes in all.
// A larger list is an error naming the item and its column, not an allocation of gigabytes.
// A listing of many rows (one squeue listing) has one bound for all its hostlists together:
// a HostlistBudget shared by the rows, with the same limits, charged by every expansion.
inline constexpr size_t kMaxHostlistNames = 1'000'000;
inline constexpr size_t kMaxNodeNameBytes = 255;
inline constexpr size_t kMaxHostlistBytes = 64u << 20;
struct HostlistBudget {
  size_t names = 0;  // expanded so far, by every list charged to it
  size_t bytes = 0;
};
Result<std::vector<std::string>> ExpandHostlist(std::string_view s, size_t max_names = kMaxHostlistNames,
                                                HostlistBudget* listing = nullptr);
// The field separator of kSqueueFormat and kSinfoFormat (the unit separator: it cannot
// occur in names or comments typed by users).
inline constexpr char kFieldSep = '\x1f';
// squeue -h -o with kSqueueFormat. One job per line; the node lists of all the rows
// together are bounded as one hostlist is (HostlistBudget); `max_nodes` bounds each row's
// list (the cluster's size when known).
extern const char* const kSqueueFormat;
Result<std::vector<SlurmJob>> ParseSqueue(std::string_view text, size_t max_nodes = kMaxHostlistNames);
// One line of that output (`lineno` for the error message); nullopt for the rows of array and
// heterogeneous jobs ("12_3", "12+1"), which are not managed.
// `max_nodes` bounds the expansion of the job's node list (the cluster's size when known);
// `listing`, when given, is the bound of all the rows of one listing together.
Result<std::optional<SlurmJob>> ParseSqueueLine(std::string_view line, size_t lineno,
                                                size_t max_nodes = kMaxHostlistNames,
                                                HostlistBudget* listing = nullptr);
// sinfo -h -N -o with kSinfoFormat. One (node, partition) per line.
extern const char* const kSinfoFormat;
Result<std::vector<SlurmNode>> ParseSinfo(std::string_view text);
// One line of that output (`lineno` for the error message).
Result<SlurmNode> ParseSinfoLine(std::string_view line, size_t lineno);
// "gpu:8", "gpu:a100:4(S:0-1)", "gres:gpu:2", "gres/gpu=2" -> GPUs; 0 when none.
uint32_t ParseGpuCount(std::string_view gres);
// Slurm times: "2026-11-30T17:21:26" (local time) -> Unix seconds; "N/A"/"Unknown" -> kNoTime.
Time ParseSlurmTime(std::string_view s);
// The inverse: Unix seconds -> "2026-11-30T17:21:26" in local time; kNoTime -> "N/A".
std::string FormatSlurmTime(Time t);
// "UNLIMITED", "1:00:00", "2-00:00:00", "30:00", "5" (minutes) -> seconds; -1 unlimited.
Duration ParseTimeLimit(std::string_view s);
// The duration hint in a job comment ("orrery:duration=12"), or -1.
Duration DurationHint(std::string_view comment);

// `scontrol show job -o` (one line of Key=Value fields) -> the job's files; an error when the
// line has no StdOut field.
Result<JobFiles> ParseJobFiles(std::string_view text);

// Slurm's error replies classified (the one place that reads their wording): "Invalid job
// id" -> kNotFound, "already ..." -> kAlreadyDone, "not running/pending/held" ->
// kWrongState, "Unable to contact slurm controller" -> kUnavailable, else kGeneric.
ErrorCode ClassifySlurmReply(std::string_view text);
// An error carrying Slurm's reply and its classification (exit code kExitRuntime).
Error SlurmError(std::string message);

// Runs a command without a shell. stdout/stderr captured; killed after timeout_ms.
struct ExecResult {
  int exit_code = -1;
  bool timed_out = false;
  std::string out, err;
};
Result<ExecResult> Exec(const std::vector<std::string>& argv, int timeout_ms,
                        const std::vector<std::string>& extra_env = {});

struct ExecSlurmOptions {
  std::string bin_dir;       // directory of squeue/sinfo/scontrol/sbatch; empty = PATH
  std::string slurm_conf;    // exported as SLURM_CONF when non-empty
  int timeout_ms = 10000;
};

class ExecSlurmClient final : public SlurmClient {
 public:
  explicit ExecSlurmClient(ExecSlurmOptions opts) : opts_(std::move(opts)) {}
  Result<std::vector<SlurmNode>> Nodes(const std::vector<std::string>& partitions) override;
  Status Hold(uint32_t job) override;
  Status StartOn(uint32_t job, const std::vector<NodeShare>& nodes, bool after_requeue) override;
  Status Reshape(uint32_t job, const std::vector<NodeShare>& nodes) override;
  Status RequeueHold(uint32_t job) override;
  Status SetPriority(uint32_t job, uint32_t priority) override;
  Status PowerDown(const std::string& node) override;
  Status PowerUp(const std::string& node) override;
  Result<uint32_t> Submit(const SubmitSpec& spec) override;
  Status Cancel(uint32_t job) override;
  Result<JobFiles> Files(uint32_t job) override;
  Result<std::string> BatchScript(uint32_t job) override;
  Status Drain(const std::string& node, const std::string& reason) override;
  Status Undrain(const std::string& node) override;
  Status RestartHeld(uint32_t job) override;

  // Runs a Slurm tool; a non-zero exit becomes an error carrying the command and stderr
  // (public for live/batch_submit.h).
  Result<std::string> Run(const std::string& tool, std::vector<std::string> args);

 protected:
  // Runs squeue; with the cursor of its previous listing, parses only the rows whose bytes
  // differ from that listing's, and the rows of the sweep's slice.
  Result<JobListing> ListJobs(const std::vector<std::string>& partitions, uint64_t cursor, Sweep sweep) override;
  // Runs sinfo, the same way.
  Result<NodeListing> ListNodeChanges(const std::vector<std::string>& partitions, uint64_t cursor, Sweep sweep) override;

 private:
  // One tool's previous listing, its cursor and partitions (Jobs: squeue; NodeChanges: sinfo).
  struct Listings {
    Listings(char sep, size_t key_fields, ListingDelta::SliceOf slice_of) : rows(sep, key_fields, slice_of) {}
    ListingDelta rows;
    uint64_t cursor = 0;  // the cursor of the previous listing (0: none to compare with)
    std::vector<std::string> partitions;
  };
  // The rows of `out` changed since the listing `cursor` names; every row (*full) unless it
  // names the previous listing of `l` for the same partitions.
  ListingDelta::Diff Changed(Listings& l, std::string out, const std::vector<std::string>& partitions, uint64_t cursor,
                             Sweep sweep, bool* full);
  // After the listing was parsed (its cursor) or not (forgotten: the next one is full; 0).
  uint64_t Settle(Listings& l, bool parsed, const std::vector<std::string>& partitions);
  // One listing of a tool as a delta: Changed, the changed rows parsed by `diff_to` (JobDiff,
  // NodeDiff), Settle, and the listing's cursor.
  template <class Listing>
  Result<Listing> Listed(Listings& l, std::string out, const std::vector<std::string>& partitions, uint64_t cursor,
                         Sweep sweep, Result<Listing> (ExecSlurmClient::*diff_to)(const ListingDelta::Diff&, bool));
  Result<std::string> Squeue(const std::vector<std::string>& partitions);
  Result<std::string> Sinfo(const std::vector<std::string>& partitions);
  Result<JobListing> JobDiff(const ListingDelta::Diff& diff, bool full);
  Result<NodeListing> NodeDiff(const ListingDelta::Diff& diff, bool full);

  ExecSlurmOptions opts_;
  Listings squeue_{kFieldSep, 1, &SqueueKeySlice};  // key: job id
  Listings sinfo_{kFieldSep, 2, &SinfoKeySlice};    // key: node name, partition
  // Distinct nodes of the last full sinfo listing of every partition (0: not known yet): the
  // bound on a job's node list.
  size_t cluster_nodes_ = 0;
  uint64_t listings_ = 0;          // listings answered (both tools: a cursor names one listing)
};

}  // namespace orrery::live
