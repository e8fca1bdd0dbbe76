#include "live/journal.h"

#include <sqlite3.h>

#include <charconv>
#include <iterator>

namespace orrery::live {

std::string EncodeNodes(const std::vector<NodeShare>& nodes) {
  std::string s;
  for (size_t i = 0; i < nodes.size(); ++i) s += (i ? "," : "") + nodes[i].node + ":" + std::to_string(nodes[i].gpus);
  return s;
}

Result<std::vector<NodeShare>> DecodeNodes(const std::string& s) {
  std::vector<NodeShare> out;
  size_t b = 0;
  while (b < s.size()) {
    size_t e = s.find(',', b);
    if (e == std::string::npos) e = s.size();
    std::string item = s.substr(b, e - b);
    size_t c = item.rfind(':');
    unsigned v = 0;
    if (c == std::string::npos || c == 0 ||
        std::from_chars(item.data() + c + 1, item.data() + item.size(), v).ec != std::errc() || v > UINT16_MAX)
      return MakeError("journal: bad node list \"" + s + "\"", kExitRuntime);
    out.push_back(NodeShare{item.substr(0, c), static_cast<uint16_t>(v)});
    b = e + 1;
  }
  return out;
}

Journal::~Journal() {
  for (auto& [sql, stmt] : cache_) sqlite3_finalize(stmt);
  if (db_) sqlite3_close(db_);
}

Result<sqlite3_stmt*> Journal::Prepared(const char* sql) {
  auto it = cache_.find(sql);
  if (it != cache_.end()) return it->second;
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v3(db_, sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt, nullptr) != SQLITE_OK) {
    sqlite3_finalize(stmt);
    return Err(std::string("prepare \"") + sql + "\"");
  }
  cache_.emplace(sql, stmt);
  return stmt;
}

int Journal::WalHook(void* self, sqlite3*, const char*, int pages) {
  static_cast<Journal*>(self)->wal_pages_ = pages;
  return SQLITE_OK;
}

Status Journal::Checkpoint(int min_pages) {
  if (wal_pages_ < min_pages) return Status::Ok();
  int log = 0, done = 0;
  // PASSIVE: copies what no reader holds back, never waits for readers or writers.
  if (sqlite3_wal_checkpoint_v2(db_, nullptr, SQLITE_CHECKPOINT_PASSIVE, &log, &done) != SQLITE_OK)
    return Err("checkpoint");
  if (log == done) wal_pages_ = 0;
  return Status::Ok();
}

Error Journal::Err(const std::string& what) const {
  return MakeError("journal " + path_ + ": " + what + ": " + (db_ ? sqlite3_errmsg(db_) : "not open"), kExitRuntime);
}

Status Journal::Exec(const char* sql) {
  char* msg = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &msg) != SQLITE_OK) {
    std::string m = msg ? msg : "?";
    sqlite3_free(msg);
    return MakeError("journal " + path_ + ": " + m + " (in: " + std::string(sql).substr(0, 60) + ")", kExitRuntime);
  }
  return Status::Ok();
}

Result<std::unique_ptr<Journal>> Journal::Open(const std::string& path, bool synchronous_full) {
  std::unique_ptr<Journal> j(new Journal());
  j->path_ = path;
  if (sqlite3_open_v2(path.c_str(), &j->db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
                      nullptr) != SQLITE_OK)
    return j->Err("cannot open");
  sqlite3_busy_timeout(j->db_, 5000);
  ORR_RETURN_IF_ERROR(j->Exec("PRAGMA journal_mode=WAL"));
  // No checkpoint inside a commit (it made the commit of a decision cycle 10x slower now and
  // then); the daemon checkpoints after a cycle's decisions are applied (Checkpoint()).
  ORR_RETURN_IF_ERROR(j->Exec("PRAGMA wal_autocheckpoint=0"));
  sqlite3_wal_hook(j->db_, &Journal::WalHook, j.get());
  ORR_RETURN_IF_ERROR(j->Exec(synchronous_full ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL"));
  ORR_RETURN_IF_ERROR(j->Exec(
      "CREATE TABLE IF NOT EXISTS decisions(seq INTEGER PRIMARY KEY AUTOINCREMENT, key TEXT UNIQUE NOT NULL,"
      " cycle INTEGER, time INTEGER, kind TEXT, job INTEGER, gen INTEGER, nodes TEXT, state TEXT,"
      " detail TEXT, applied_time INTEGER);"
      "CREATE INDEX IF NOT EXISTS decisions_state ON decisions(state);"
      "CREATE TABLE IF NOT EXISTS gens(job INTEGER PRIMARY KEY, gen INTEGER);"
      "CREATE TABLE IF NOT EXISTS events(seq INTEGER PRIMARY KEY AUTOINCREMENT, time INTEGER, kind TEXT, detail TEXT);"
      "CREATE TABLE IF NOT EXISTS counters(name TEXT PRIMARY KEY, value INTEGER);"
      "CREATE TABLE IF NOT EXISTS progress(job INTEGER PRIMARY KEY, gen INTEGER, step INTEGER, total INTEGER,"
      " eta_s REAL, at INTEGER, read_at INTEGER);"
      "CREATE TABLE IF NOT EXISTS failures(job INTEGER, gen INTEGER, time INTEGER, trigger TEXT, category TEXT,"
      " subtype TEXT, suspect TEXT, step TEXT, reason TEXT, evidence TEXT, logs TEXT, PRIMARY KEY(job, gen));"));
  return j;
}

namespace {
constexpr std::string_view kKindNames[] = {"start", "requeue", "power-down", "power-up",
                                           "drain", "recover", "give-up", "undrain"};
constexpr std::string_view kStateNames[] = {"planned", "applied", "failed", "superseded", "awaiting-confirmation"};
static_assert(std::size(kKindNames) == static_cast<size_t>(DecisionKind::kUndrain) + 1);
static_assert(std::size(kStateNames) == static_cast<size_t>(DecisionState::kAwaiting) + 1);

template <class E, size_t N>
bool ParseName(const std::string_view (&names)[N], std::string_view s, E* out) {
  for (size_t i = 0; i < N; ++i)
    if (names[i] == s) {
      *out = static_cast<E>(i);
      return true;
    }
  return false;
}
}  // namespace

std::string_view DecisionKindName(DecisionKind k) { return kKindNames[static_cast<size_t>(k)]; }
bool IsRecoveryDecision(DecisionKind k) {
  switch (k) {
    case DecisionKind::kDrain:
    case DecisionKind::kRecover:
    case DecisionKind::kGiveUp:
    case DecisionKind::kUndrain: return true;
    case DecisionKind::kStart:
    case DecisionKind::kRequeue:
    case DecisionKind::kPowerDown:
    case DecisionKind::kPowerUp: return false;
  }
  return false;
}
std::string_view DecisionStateName(DecisionState s) { return kStateNames[static_cast<size_t>(s)]; }
bool ParseDecisionKind(std::string_view s, DecisionKind* out) { return ParseName(kKindNames, s, out); }
bool ParseDecisionState(std::string_view s, DecisionState* out) { return ParseName(kStateNames, s, out); }

Status Journal::Begin() { return Exec("BEGIN IMMEDIATE"); }
Status Journal::Commit() { return Exec("COMMIT"); }
Status Journal::Rollback() { return Exec("ROLLBACK"); }

namespace {
struct Stmt {
  sqlite3_stmt* s = nullptr;
  ~Stmt() { sqlite3_finalize(s); }
};
// A cached statement is reset and unbound when its use ends, so the next use starts clean.
struct Reset {
  sqlite3_stmt* s;
  ~Reset() {
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
  }
};
void BindText(sqlite3_stmt* s, int i, const std::string& v) { sqlite3_bind_text(s, i, v.c_str(), -1, SQLITE_TRANSIENT); }
std::string Col(sqlite3_stmt* s, int i) {
  const unsigned char* t = sqlite3_column_text(s, i);
  return t ? reinterpret_cast<const char*>(t) : "";
}
}  // namespace

Status Journal::Plan(JournalDecision* d) {
  ORR_ASSIGN_OR_RETURN(sqlite3_stmt * stmt, Prepared("INSERT INTO decisions(key,cycle,time,kind,job,gen,nodes,state,detail,applied_time)"
                         " VALUES(?,?,?,?,?,?,?,?,?,NULL)"));
  Reset reset{stmt};
  BindText(stmt, 1, d->key);
  sqlite3_bind_int64(stmt, 2, d->cycle);
  sqlite3_bind_int64(stmt, 3, d->time);
  BindText(stmt, 4, std::string(DecisionKindName(d->kind)));
  sqlite3_bind_int64(stmt, 5, d->job);
  sqlite3_bind_int64(stmt, 6, d->gen);
  BindText(stmt, 7, EncodeNodes(d->nodes));
  // Planned, or awaiting an operator's confirmation (a drain over the hourly limit).
  if (d->state != DecisionState::kAwaiting) d->state = DecisionState::kPlanned;
  BindText(stmt, 8, std::string(DecisionStateName(d->state)));
  BindText(stmt, 9, d->detail);
  int rc = sqlite3_step(stmt);
  if (rc == SQLITE_CONSTRAINT) return MakeError("journal: duplicate decision " + d->key, kExitRuntime, ErrorCode::kDuplicate);
  if (rc != SQLITE_DONE) return Err("insert decision " + d->key);
  d->seq = sqlite3_last_insert_rowid(db_);
  return Status::Ok();
}

Status Journal::Mark(const std::string& key, DecisionState state, Time t, const std::string& detail) {
  ORR_ASSIGN_OR_RETURN(sqlite3_stmt * stmt, Prepared("UPDATE decisions SET state=?, applied_time=?, detail=? WHERE key=?"));
  Reset reset{stmt};
  BindText(stmt, 1, std::string(DecisionStateName(state)));
  sqlite3_bind_int64(stmt, 2, t);
  BindText(stmt, 3, detail);
  BindText(stmt, 4, key);
  if (sqlite3_step(stmt) != SQLITE_DONE) return Err("update decision " + key);
  if (sqlite3_changes(db_) != 1) return MakeError("journal: no decision " + key, kExitRuntime, ErrorCode::kNotFound);
  return Status::Ok();
}

Result<std::vector<JournalDecision>> Journal::Query(const std::string& where_order, const std::vector<std::string>& binds) {
  Stmt st;  // not cached: the text varies (LIMIT), and it is off the cycle path
  std::string sql = "SELECT seq,key,cycle,time,kind,job,gen,nodes,state,detail,applied_time FROM decisions " + where_order;
  if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &st.s, nullptr) != SQLITE_OK) return Err("prepare select");
  for (size_t i = 0; i < binds.size(); ++i) BindText(st.s, static_cast<int>(i + 1), binds[i]);
  std::vector<JournalDecision> out;
  int rc;
  while ((rc = sqlite3_step(st.s)) == SQLITE_ROW) {
    JournalDecision d;
    d.seq = sqlite3_column_int64(st.s, 0);
    d.key = Col(st.s, 1);
    d.cycle = sqlite3_column_int64(st.s, 2);
    d.time = sqlite3_column_int64(st.s, 3);
    if (!ParseDecisionKind(Col(st.s, 4), &d.kind))
      return MakeError("journal: decision " + d.key + " has an unknown kind \"" + Col(st.s, 4) + "\"", kExitRuntime);
    d.job = static_cast<uint32_t>(sqlite3_column_int64(st.s, 5));
    d.gen = static_cast<uint32_t>(sqlite3_column_int64(st.s, 6));
    ORR_ASSIGN_OR_RETURN(d.nodes, DecodeNodes(Col(st.s, 7)));
    if (!ParseDecisionState(Col(st.s, 8), &d.state))
      return MakeError("journal: decision " + d.key + " has an unknown state \"" + Col(st.s, 8) + "\"", kExitRuntime);
    d.detail = Col(st.s, 9);
    d.applied_time = sqlite3_column_type(st.s, 10) == SQLITE_NULL ? kNoTime : sqlite3_column_int64(st.s, 10);
    out.push_back(std::move(d));
  }
  if (rc != SQLITE_DONE) return Err("select decisions");
  return out;
}

Result<std::vector<JournalDecision>> Journal::WithState(DecisionState state) {
  return Query("WHERE state=? ORDER BY seq", {std::string(DecisionStateName(state))});
}
Result<std::vector<JournalDecision>> Journal::Recent(size_t n) {
  return Query("ORDER BY seq DESC LIMIT " + std::to_string(n), {});
}
Result<std::vector<JournalDecision>> Journal::All() { return Query("ORDER BY seq", {}); }

Result<JournalDecision> Journal::Get(const std::string& key) {
  ORR_ASSIGN_OR_RETURN(auto v, Query("WHERE key=?", {key}));
  if (v.empty()) return MakeError("journal: no decision " + key, kExitRuntime, ErrorCode::kNotFound);
  return std::move(v[0]);
}

bool Journal::Has(const std::string& key) {
  auto r = Get(key);
  return r.ok();
}

Status Journal::SetGen(uint32_t job, uint32_t gen) {
  ORR_ASSIGN_OR_RETURN(sqlite3_stmt * stmt, Prepared("INSERT OR REPLACE INTO gens(job,gen) VALUES(?,?)"));
  Reset reset{stmt};
  sqlite3_bind_int64(stmt, 1, job);
  sqlite3_bind_int64(stmt, 2, gen);
  if (sqlite3_step(stmt) != SQLITE_DONE) return Err("set gen");
  return Status::Ok();
}

Result<std::unordered_map<uint32_t, uint32_t>> Journal::Gens() {
  ORR_ASSIGN_OR_RETURN(sqlite3_stmt * stmt, Prepared("SELECT job,gen FROM gens"));
  Reset reset{stmt};
  std::unordered_map<uint32_t, uint32_t> out;
  int rc;
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW)
    out[static_cast<uint32_t>(sqlite3_column_int64(stmt, 0))] = static_cast<uint32_t>(sqlite3_column_int64(stmt, 1));
  if (rc != SQLITE_DONE) return Err("select gens");
  return out;
}

Status Journal::Event(Time t, const std::string& kind, const std::string& detail) {
  ORR_ASSIGN_OR_RETURN(sqlite3_stmt * stmt, Prepared("INSERT INTO events(time,kind,detail) VALUES(?,?,?)"));
  Reset reset{stmt};
  sqlite3_bind_int64(stmt, 1, t);
  BindText(stmt, 2, kind);
  BindText(stmt, 3, detail);
  if (sqlite3_step(stmt) != SQLITE_DONE) return Err("insert event");
  return Status::Ok();
}

Status Journal::RecordFailure(const FailureRecord& f) {
  ORR_ASSIGN_OR_RETURN(sqlite3_stmt * stmt,
                       Prepared("INSERT OR REPLACE INTO failures(job,gen,time,trigger,category,subtype,suspect,step,"
                                "reason,evidence,logs) VALUES(?,?,?,?,?,?,?,?,?,?,?)"));
  Reset reset{stmt};
  sqlite3_bind_int64(stmt, 1, f.job);
  sqlite3_bind_int64(stmt, 2, f.gen);
  sqlite3_bind_int64(stmt, 3, f.time);
  const std::string names[] = {std::string(TriggerName(f.trigger)), std::string(logs::CategoryName(f.category)),
                               std::string(StepName(f.step))};
  const std::string* text[] = {&names[0], &names[1], &f.subtype, &f.suspect, &names[2], &f.reason, &f.evidence, &f.logs};
  for (int i = 0; i < 8; ++i) BindText(stmt, 4 + i, *text[i]);
  if (sqlite3_step(stmt) != SQLITE_DONE) return Err("insert failure");
  return Status::Ok();
}

Result<FailureRecord> Journal::FailureOf(uint32_t job, uint32_t gen) {
  ORR_ASSIGN_OR_RETURN(auto all, FailuresWhere("WHERE job=" + std::to_string(job) + " AND gen=" + std::to_string(gen)));
  if (all.empty()) return MakeError("journal: no failure of job " + std::to_string(job), kExitRuntime, ErrorCode::kNotFound);
  return std::move(all[0]);
}

Result<std::vector<FailureRecord>> Journal::Failures(size_t n) {
  return FailuresWhere("ORDER BY time DESC, job DESC LIMIT " + std::to_string(n));
}

Result<std::vector<FailureRecord>> Journal::FailuresWhere(const std::string& where_order) {
  Stmt st;  // not cached: the text varies, and it is off the cycle path
  std::string sql = "SELECT job,gen,time,trigger,category,subtype,suspect,step,reason,evidence,logs FROM failures " +
                    where_order;
  if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &st.s, nullptr) != SQLITE_OK) return Err("prepare select failures");
  std::vector<FailureRecord> out;
  int rc;
  while ((rc = sqlite3_step(st.s)) == SQLITE_ROW) {
    FailureRecord f;
    f.job = static_cast<uint32_t>(sqlite3_column_int64(st.s, 0));
    f.gen = static_cast<uint32_t>(sqlite3_column_int64(st.s, 1));
    f.time = sqlite3_column_int64(st.s, 2);
    std::string trigger, category, step;
    std::string* text[] = {&trigger, &category, &f.subtype, &f.suspect, &step, &f.reason, &f.evidence, &f.logs};
    for (int i = 0; i < 8; ++i) *text[i] = Col(st.s, 3 + i);
    const auto t = ParseTrigger(trigger);
    const auto s = ParseStep(step);
    const auto c = category == logs::CategoryName(logs::Category::kUnknown) ? logs::Category::kUnknown
                                                                             : logs::ParseCategory(category);
    if (!t || !s || !c)
      return MakeError(path_ + ": failures row of job " + std::to_string(f.job) + ": expected a trigger, category and "
                       "step, got \"" + trigger + "\", \"" + category + "\", \"" + step + "\"", kExitRuntime);
    f.trigger = *t;
    f.category = *c;
    f.step = *s;
    out.push_back(std::move(f));
  }
  if (rc != SQLITE_DONE) return Err("select failures");
  return out;
}

Result<std::unordered_map<uint32_t, int>> Journal::Restarts() {
  ORR_ASSIGN_OR_RETURN(sqlite3_stmt * stmt,
                       Prepared("SELECT job, COUNT(*) FROM failures WHERE step != 'give-up' GROUP BY job"));
  Reset reset{stmt};
  std::unordered_map<uint32_t, int> out;
  int rc;
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW)
    out[static_cast<uint32_t>(sqlite3_column_int64(stmt, 0))] = static_cast<int>(sqlite3_column_int64(stmt, 1));
  if (rc != SQLITE_DONE) return Err("select restarts");
  return out;
}

Result<std::vector<JournalDecision>> Journal::OfKind(DecisionKind kind, Time since) {
  return Query("WHERE kind=? AND time>=? ORDER BY seq", {std::string(DecisionKindName(kind)), std::to_string(since)});
}

Result<int64_t> Journal::GetCounter(const std::string& name) {
  ORR_ASSIGN_OR_RETURN(sqlite3_stmt * stmt, Prepared("SELECT value FROM counters WHERE name=?"));
  Reset reset{stmt};
  BindText(stmt, 1, name);
  int rc = sqlite3_step(stmt);
  if (rc == SQLITE_ROW) return static_cast<int64_t>(sqlite3_column_int64(stmt, 0));
  if (rc == SQLITE_DONE) return int64_t{0};
  return Err("select counter");
}

Status Journal::SetCounter(const std::string& name, int64_t v) {
  ORR_ASSIGN_OR_RETURN(sqlite3_stmt * stmt, Prepared("INSERT OR REPLACE INTO counters(name,value) VALUES(?,?)"));
  Reset reset{stmt};
  BindText(stmt, 1, name);
  sqlite3_bind_int64(stmt, 2, v);
  if (sqlite3_step(stmt) != SQLITE_DONE) return Err("set counter");
  return Status::Ok();
}

// ---------------------------------------------------------------- progress readings

Status Journal::SetProgress(const JournalProgress& p) {
  ORR_ASSIGN_OR_RETURN(sqlite3_stmt * stmt,
                       Prepared("INSERT OR REPLACE INTO progress(job,gen,step,total,eta_s,at,read_at) VALUES(?,?,?,?,?,?,?)"));
  Reset reset{stmt};
  sqlite3_bind_int64(stmt, 1, p.job);
  sqlite3_bind_int64(stmt, 2, p.gen);
  sqlite3_bind_int64(stmt, 3, p.step);
  sqlite3_bind_int64(stmt, 4, p.total);
  sqlite3_bind_double(stmt, 5, p.eta_s);
  sqlite3_bind_int64(stmt, 6, p.at);
  sqlite3_bind_int64(stmt, 7, p.read_at);
  if (sqlite3_step(stmt) != SQLITE_DONE) return Err("set progress");
  return Status::Ok();
}

Status Journal::DropProgress(uint32_t job) {
  ORR_ASSIGN_OR_RETURN(sqlite3_stmt * stmt, Prepared("DELETE FROM progress WHERE job=?"));
  Reset reset{stmt};
  sqlite3_bind_int64(stmt, 1, job);
  if (sqlite3_step(stmt) != SQLITE_DONE) return Err("drop progress");
  return Status::Ok();
}

Result<std::vector<JournalProgress>> Journal::AllProgress() {
  ORR_ASSIGN_OR_RETURN(sqlite3_stmt * stmt, Prepared("SELECT job,gen,step,total,eta_s,at,read_at FROM progress ORDER BY job"));
  Reset reset{stmt};
  std::vector<JournalProgress> out;
  int rc;
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    JournalProgress p;
    p.job = static_cast<uint32_t>(sqlite3_column_int64(stmt, 0));
    p.gen = static_cast<uint32_t>(sqlite3_column_int64(stmt, 1));
    p.step = sqlite3_column_int64(stmt, 2);
    p.total = sqlite3_column_int64(stmt, 3);
    p.eta_s = sqlite3_column_double(stmt, 4);
    p.at = sqlite3_column_int64(stmt, 5);
    p.read_at = sqlite3_column_int64(stmt, 6);
    out.push_back(p);
  }
  if (rc != SQLITE_DONE) return Err("select progress");
  return out;
}

}  // namespace orrery::live
