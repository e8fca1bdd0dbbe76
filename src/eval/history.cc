#include "eval/history.h"

#include <sqlite3.h>
#include <sys/stat.h>

#include <algorithm>

namespace orrery::eval {

namespace {

struct Stmt {
  sqlite3_stmt* s = nullptr;
  ~Stmt() { sqlite3_finalize(s); }
};

std::string Text(sqlite3_stmt* s, int i) {
  const unsigned char* t = sqlite3_column_text(s, i);
  return t ? reinterpret_cast<const char*>(t) : "";
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

constexpr const char* kSchema =
    "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
    "CREATE TABLE trials(id INTEGER PRIMARY KEY AUTOINCREMENT, key TEXT UNIQUE NOT NULL, dataset TEXT NOT NULL,"
    " model_params REAL NOT NULL, gpu TEXT NOT NULL, gpus INTEGER NOT NULL, examples INTEGER NOT NULL,"
    " load_s REAL NOT NULL, infer_s REAL NOT NULL, metric_s REAL, time_scale REAL NOT NULL,"
    " recorded_unix INTEGER NOT NULL);"
    "CREATE INDEX trials_dataset ON trials(dataset, gpu);";

}  // namespace

History::~History() {
  if (db_) sqlite3_close(db_);
}

Error History::Err(const std::string& what, int code) const {
  return MakeError("history " + path_ + ": " + what + (db_ ? std::string(": ") + sqlite3_errmsg(db_) : ""), code);
}

Status History::Exec(const char* sql) {
  char* msg = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &msg) == SQLITE_OK) return Status::Ok();
  std::string m = msg ? msg : "?";
  sqlite3_free(msg);
  const int code = sqlite3_errcode(db_) == SQLITE_NOTADB ? kExitBadInput : kExitRuntime;
  return MakeError("history " + path_ + ": " + m, code);
}

Result<std::unique_ptr<History>> History::Open(const std::string& path, bool create) {
  struct stat st;
  const bool exists = ::stat(path.c_str(), &st) == 0;
  if (!exists && !create) return MakeError("history " + path + ": no such file");
  std::unique_ptr<History> h(new History());
  h->path_ = path;
  const int flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0);
  if (sqlite3_open_v2(path.c_str(), &h->db_, flags, nullptr) != SQLITE_OK) return h->Err("cannot open", kExitBadInput);
  sqlite3_busy_timeout(h->db_, 5000);
  ORR_RETURN_IF_ERROR(h->CheckSchema(!exists || st.st_size == 0));
  return h;
}

Status History::CheckSchema(bool fresh) {
  if (fresh) {
    ORR_RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE"));
    ORR_RETURN_IF_ERROR(Exec(kSchema));
    const std::string meta = "INSERT INTO meta VALUES('format','orrery-eval-history'),('schema_version','" +
                             std::to_string(kHistorySchemaVersion) + "');";
    ORR_RETURN_IF_ERROR(Exec(meta.c_str()));
    return Exec("COMMIT");
  }
  Stmt q;
  if (sqlite3_prepare_v2(db_, "SELECT key, value FROM meta", -1, &q.s, nullptr) != SQLITE_OK) {
    const bool not_db = sqlite3_errcode(db_) == SQLITE_NOTADB;
    return MakeError("history " + path_ + ": " + (not_db ? "not a SQLite database" : "not an Orrery evaluation history (no meta table)"));
  }
  std::string format, version;
  while (sqlite3_step(q.s) == SQLITE_ROW) {
    if (Text(q.s, 0) == "format") format = Text(q.s, 1);
    if (Text(q.s, 0) == "schema_version") version = Text(q.s, 1);
  }
  if (format != "orrery-eval-history")
    return MakeError("history " + path_ + ": not an Orrery evaluation history (meta format is \"" + format + "\")");
  if (version != std::to_string(kHistorySchemaVersion))
    return MakeError("history " + path_ + ": schema version " + version + ", this orrery reads version " +
                     std::to_string(kHistorySchemaVersion) + " (use a history written by the same version)");
  return Status::Ok();
}

Result<bool> History::Record(const TrialRecord& r) {
  Stmt q;
  const char* sql =
      "INSERT OR IGNORE INTO trials(key,dataset,model_params,gpu,gpus,examples,load_s,infer_s,metric_s,time_scale,"
      "recorded_unix) VALUES(?,?,?,?,?,?,?,?,?,?,?)";
  if (sqlite3_prepare_v2(db_, sql, -1, &q.s, nullptr) != SQLITE_OK) return Err("prepare insert");
  sqlite3_bind_text(q.s, 1, r.key.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(q.s, 2, r.dataset.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_double(q.s, 3, r.model_params);
  sqlite3_bind_text(q.s, 4, r.gpu.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_int64(q.s, 5, r.gpus);
  sqlite3_bind_int64(q.s, 6, static_cast<int64_t>(r.examples));
  sqlite3_bind_double(q.s, 7, r.load_s);
  sqlite3_bind_double(q.s, 8, r.infer_s);
  if (r.metric_s >= 0) sqlite3_bind_double(q.s, 9, r.metric_s);
  else sqlite3_bind_null(q.s, 9);
  sqlite3_bind_double(q.s, 10, r.time_scale);
  sqlite3_bind_int64(q.s, 11, r.recorded_unix);
  if (sqlite3_step(q.s) != SQLITE_DONE) return Err("insert trial " + r.key);
  return sqlite3_changes(db_) > 0;
}

Result<uint64_t> History::RecordAll(const std::vector<TrialRecord>& rs) {
  ORR_RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE"));
  uint64_t added = 0;
  for (const TrialRecord& r : rs) {
    Result<bool> ins = Record(r);
    if (!ins.ok()) {
      Status rollback = Exec("ROLLBACK");
      return rollback.ok() ? ins.error() : ins.error().With("rollback failed too");
    }
    added += *ins;
  }
  ORR_RETURN_IF_ERROR(Exec("COMMIT"));
  return added;
}

Result<uint64_t> History::Count() {
  Stmt q;
  if (sqlite3_prepare_v2(db_, "SELECT COUNT(*) FROM trials", -1, &q.s, nullptr) != SQLITE_OK ||
      sqlite3_step(q.s) != SQLITE_ROW)
    return Err("count");
  return static_cast<uint64_t>(sqlite3_column_int64(q.s, 0));
}

// (seconds per example in modelled seconds, the run's model_params x gpus) of the last 20 runs.
Result<std::vector<std::pair<double, double>>> History::Runs(const std::string& dataset, const std::string& gpu,
                                                              const char* column) {
  const std::string sql = std::string("SELECT ") + column +
                          " / time_scale / examples, model_params / gpus FROM trials WHERE dataset = ? AND gpu = ? AND metric_s IS " +
                          (std::string_view(column) == "metric_s" ? "NOT NULL" : "NULL") +
                          " AND examples > 0 AND time_scale > 0 ORDER BY id DESC LIMIT 20";
  Stmt q;
  if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &q.s, nullptr) != SQLITE_OK) return Err("prepare priors");
  sqlite3_bind_text(q.s, 1, dataset.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(q.s, 2, gpu.c_str(), -1, SQLITE_TRANSIENT);
  std::vector<std::pair<double, double>> out;
  int rc;
  while ((rc = sqlite3_step(q.s)) == SQLITE_ROW) out.emplace_back(sqlite3_column_double(q.s, 0), sqlite3_column_double(q.s, 1));
  if (rc != SQLITE_DONE) return Err("read priors");
  return out;
}

Result<std::vector<Prior>> History::Priors(const Suite& sized, const ModelSpec& m, const GpuSpec& g, uint32_t gpus) {
  std::vector<Prior> out(sized.datasets.size());
  const double per_gpu = m.params / gpus;
  for (size_t i = 0; i < sized.datasets.size(); ++i) {
    ORR_ASSIGN_OR_RETURN(auto infer, Runs(sized.datasets[i].name, g.name, "infer_s"));
    ORR_ASSIGN_OR_RETURN(auto metric, Runs(sized.datasets[i].name, g.name, "metric_s"));
    std::vector<double> v;
    for (auto [s, run_per_gpu] : infer)
      if (run_per_gpu > 0) v.push_back(s * per_gpu / run_per_gpu);
    if (!v.empty()) out[i].infer_s_per_example = Median(v);
    v.clear();
    for (auto [s, unused] : metric) v.push_back(s);
    if (!v.empty()) out[i].metric_s_per_example = Median(v);
  }
  return out;
}

}  // namespace orrery::eval
