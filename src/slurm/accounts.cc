#include "slurm/accounts.h"

#include <set>
#include <unordered_map>

#include "base/io.h"
#include "base/parse.h"

namespace orrery::slurm {

namespace {

// What a column means. kUnenforced: a limit Orrery does not enforce (refused when set);
// kInfo: anything else it does not model (one warning when set).
enum class Col : uint8_t {
  kInfo, kUnenforced, kCluster, kAccount, kUser, kPartition, kParent, kShare, kGrpTres, kMaxTres, kGrpJobs,
  kGrpSubmit, kMaxJobs, kMaxSubmit, kQosList, kDefQos, kName, kPriority, kPreempt, kPreemptMode, kUsageFactor,
  kMaxTresPu, kMaxJobsPu, kMaxSubmitPu, kMaxWall,
};

enum class Table : uint8_t { kAssoc, kQos };

struct Column {
  std::string header;  // as written
  Col col = Col::kInfo;
  uint32_t index = 0;
};

std::string HeaderKey(std::string_view h) {
  std::string k;
  for (char c : Lower(Trim(h)))
    if (c != ' ') k += c;
  return k;
}

Col AssocColumn(const std::string& k) {
  static const std::unordered_map<std::string, Col> m = {
      {"cluster", Col::kCluster}, {"account", Col::kAccount}, {"user", Col::kUser},
      {"partition", Col::kPartition}, {"parname", Col::kParent}, {"parentname", Col::kParent},
      {"share", Col::kShare}, {"shares", Col::kShare}, {"fairshare", Col::kShare}, {"grptres", Col::kGrpTres},
      {"maxtres", Col::kMaxTres}, {"maxtresperjob", Col::kMaxTres}, {"grpjobs", Col::kGrpJobs},
      {"grpsubmit", Col::kGrpSubmit}, {"grpsubmitjobs", Col::kGrpSubmit}, {"maxjobs", Col::kMaxJobs},
      {"maxsubmit", Col::kMaxSubmit}, {"maxsubmitjobs", Col::kMaxSubmit}, {"qos", Col::kQosList},
      {"defqos", Col::kDefQos}, {"defaultqos", Col::kDefQos}, {"grptresmins", Col::kUnenforced},
      {"grptresrunmins", Col::kUnenforced}, {"grpwall", Col::kUnenforced}, {"maxtrespernode", Col::kUnenforced},
      {"maxtresmins", Col::kUnenforced}, {"maxtresminsperjob", Col::kUnenforced}, {"maxwall", Col::kUnenforced},
      {"maxwalldurationperjob", Col::kUnenforced},
  };
  auto it = m.find(k);
  return it == m.end() ? Col::kInfo : it->second;
}

Col QosColumn(const std::string& k) {
  static const std::unordered_map<std::string, Col> m = {
      {"name", Col::kName}, {"priority", Col::kPriority}, {"preempt", Col::kPreempt},
      {"preemptmode", Col::kPreemptMode}, {"usagefactor", Col::kUsageFactor}, {"grptres", Col::kGrpTres},
      {"grpjobs", Col::kGrpJobs}, {"grpsubmit", Col::kGrpSubmit}, {"grpsubmitjobs", Col::kGrpSubmit},
      {"maxtres", Col::kMaxTres}, {"maxtresperjob", Col::kMaxTres}, {"maxwall", Col::kMaxWall},
      {"maxwalldurationperjob", Col::kMaxWall}, {"maxtrespu", Col::kMaxTresPu}, {"maxtresperuser", Col::kMaxTresPu},
      {"maxjobspu", Col::kMaxJobsPu}, {"maxjobsperuser", Col::kMaxJobsPu}, {"maxsubmitpu", Col::kMaxSubmitPu},
      {"maxsubmitjobsperuser", Col::kMaxSubmitPu}, {"grptresmins", Col::kUnenforced},
      {"grptresrunmins", Col::kUnenforced}, {"grpwall", Col::kUnenforced}, {"maxtrespernode", Col::kUnenforced},
      {"maxtresmins", Col::kUnenforced}, {"maxtrespa", Col::kUnenforced}, {"maxtresperaccount", Col::kUnenforced},
      {"maxjobspa", Col::kUnenforced}, {"maxjobsperaccount", Col::kUnenforced}, {"maxsubmitpa", Col::kUnenforced},
      {"maxsubmitjobsperaccount", Col::kUnenforced}, {"mintres", Col::kUnenforced},
      {"mintresperjob", Col::kUnenforced}, {"usagethres", Col::kUnenforced},
  };
  auto it = m.find(k);
  return it == m.end() ? Col::kInfo : it->second;
}

struct Cell {
  std::string_view text;
  SourcePos pos;
  const Column* column;
};

class Reader {
 public:
  explicit Reader(std::string_view file) : file_(file) {}
  Result<Accounts> Run(std::string_view text);

 private:
  Error Bad(const Cell& c, std::string_view expected) const {
    return MakeError(FormatPos(c.pos) + ": column '" + c.column->header + "': expected " + std::string(expected) +
                     ", got " + Quote(c.text));
  }
  Error BadMsg(const Cell& c, const std::string& msg) const {
    return MakeError(FormatPos(c.pos) + ": column '" + c.column->header + "': " + msg);
  }
  Status Header(std::string_view line, uint64_t line_no);
  Status Row(std::string_view line, uint64_t line_no);
  Status AssocCell(const Cell& c, Assoc* a, size_t* indent);
  Status QosCell(const Cell& c, Qos* q);
  Status SharedCell(const Cell& c, TresMap* grp, TresMap* max, int64_t* grp_jobs, int64_t* grp_submit);
  Result<int64_t> Limit(const Cell& c) const;
  Result<TresMap> Tres(const Cell& c) const;
  Status AddAssoc(Assoc a, size_t indent, const Cell& first);
  Status Validate();

  std::string file_;
  Accounts out_;
  Table table_ = Table::kAssoc;
  std::vector<Column> columns_;
  bool trailing_bar_ = false;
  bool has_parent_column_ = false;
  std::string cluster_;
  std::set<std::string> warned_;
  std::vector<std::pair<size_t, std::string>> indent_stack_;  // tree listings: (depth, account)
  std::set<std::tuple<std::string, std::string, std::string>> assoc_keys_;
  std::unordered_map<std::string, size_t> qos_index_;
  std::unordered_map<std::string, SourcePos> qos_refs_;  // first use of each QOS name in an association
};

Status Reader::Header(std::string_view line, uint64_t line_no) {
  columns_.clear();
  trailing_bar_ = !line.empty() && line.back() == '|';
  if (trailing_bar_) line.remove_suffix(1);
  bool has_account = false, has_name = false;
  size_t pos = 0;
  uint32_t index = 0;
  while (pos <= line.size()) {
    const size_t bar = line.find('|', pos);
    const std::string_view h = line.substr(pos, bar == std::string_view::npos ? std::string_view::npos : bar - pos);
    pos = bar == std::string_view::npos ? line.size() + 1 : bar + 1;
    const std::string k = HeaderKey(h);
    has_account |= k == "account";
    has_name |= k == "name";
    columns_.push_back(Column{std::string(Trim(h)), Col::kInfo, index++});
  }
  if (!has_account && !has_name)
    return MakeError(FormatPos(SourcePos{file_, line_no, 1}) +
                     ": expected a header line of `sacctmgr -P show assoc` (with an Account column) or of "
                     "`sacctmgr -P show qos` (with a Name column), got " + Quote(line));
  table_ = has_account ? Table::kAssoc : Table::kQos;
  has_parent_column_ = false;
  std::set<Col> seen;
  for (Column& c : columns_) {
    const std::string k = HeaderKey(c.header);
    c.col = table_ == Table::kAssoc ? AssocColumn(k) : QosColumn(k);
    has_parent_column_ |= c.col == Col::kParent;
    if (c.col != Col::kInfo && c.col != Col::kUnenforced && !seen.insert(c.col).second)
      return MakeError(FormatPos(SourcePos{file_, line_no, 1}) + ": expected each column once, got " +
                       Quote(c.header) + " twice");
  }
  indent_stack_.clear();
  return Status::Ok();
}

Result<int64_t> Reader::Limit(const Cell& c) const {
  if (c.text.empty()) return kNoLimit;
  int64_t v = 0;
  if (!ParseI64(c.text, &v) || v < 0 || v > 1'000'000'000) return Bad(c, "a count from 0 to 10^9, or empty (no limit)");
  return v;
}

Result<TresMap> Reader::Tres(const Cell& c) const {
  if (c.text.empty()) return TresMap{};
  auto t = ParseTres(c.text);
  if (!t.ok()) return BadMsg(c, t.error().message);
  for (const auto& entry : *t) {
    const std::string& name = entry.first;
    if (name != "cpu" && name != "mem" && name != "node" && name != "gres/gpu")
      return BadMsg(c, "expected limits on the TRES cpu, mem, node or gres/gpu (others are not enforced), got " +
                           Quote(name));
  }
  return std::move(t).value();
}

// The columns both tables have; the caller's switch sends only these here.
Status Reader::SharedCell(const Cell& c, TresMap* grp, TresMap* max, int64_t* grp_jobs, int64_t* grp_submit) {
  const Col col = c.column->col;
  if (col == Col::kGrpTres) {
    ORR_ASSIGN_OR_RETURN(*grp, Tres(c));
  } else if (col == Col::kMaxTres) {
    ORR_ASSIGN_OR_RETURN(*max, Tres(c));
  } else if (col == Col::kGrpJobs) {
    ORR_ASSIGN_OR_RETURN(*grp_jobs, Limit(c));
  } else if (col == Col::kGrpSubmit) {
    ORR_ASSIGN_OR_RETURN(*grp_submit, Limit(c));
  } else if (col == Col::kUnenforced) {
    if (!c.text.empty()) return Bad(c, "no value (this limit is not enforced by the model)");
  } else if (!c.text.empty() && warned_.insert(HeaderKey(c.column->header)).second) {
    out_.warnings.push_back(FormatPos(c.pos) + ": column '" + c.column->header + "' is not modelled; ignored");
  }
  return Status::Ok();
}

std::vector<std::string> NameList(std::string_view s) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < s.size()) {
    const size_t comma = s.find(',', pos);
    const std::string_view n = Trim(s.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos));
    pos = comma == std::string_view::npos ? s.size() : comma + 1;
    if (!n.empty()) out.emplace_back(n);
  }
  return out;
}

Status Reader::AssocCell(const Cell& c, Assoc* a, size_t* indent) {
  switch (c.column->col) {
    case Col::kCluster:
      if (!c.text.empty() && !cluster_.empty() && c.text != cluster_)
        return Bad(c, "the associations of one cluster, " + Quote(cluster_));
      if (!c.text.empty()) cluster_ = std::string(c.text);
      return Status::Ok();
    case Col::kAccount: {
      *indent = c.text.find_first_not_of(' ');
      if (*indent == std::string_view::npos) *indent = 0;
      a->account = std::string(Trim(c.text));
      if (a->account.empty()) return Bad(c, "an account name");
      return Status::Ok();
    }
    case Col::kUser: a->user = std::string(Trim(c.text)); return Status::Ok();
    case Col::kPartition: a->partition = std::string(Trim(c.text)); return Status::Ok();
    case Col::kParent: a->parent = std::string(Trim(c.text)); return Status::Ok();
    case Col::kShare: {
      int64_t v = 1;
      if (Lower(c.text) == "parent")
        return Bad(c, "a number of shares (Share=parent, fair share taken from the parent, is not modelled)");
      if (!c.text.empty() && (!ParseI64(c.text, &v) || v < 0 || v > UINT32_MAX))
        return Bad(c, "a non-negative number of shares below 2^32");
      a->shares = static_cast<uint32_t>(v);
      return Status::Ok();
    }
    case Col::kMaxJobs: {
      ORR_ASSIGN_OR_RETURN(a->max_jobs, Limit(c));
      return Status::Ok();
    }
    case Col::kMaxSubmit: {
      ORR_ASSIGN_OR_RETURN(a->max_submit, Limit(c));
      return Status::Ok();
    }
    case Col::kQosList:
      a->qos = NameList(c.text);
      for (const std::string& q : a->qos) qos_refs_.emplace(q, c.pos);
      return Status::Ok();
    case Col::kDefQos: a->def_qos = std::string(Trim(c.text)); return Status::Ok();
    case Col::kGrpTres:
    case Col::kMaxTres:
    case Col::kGrpJobs:
    case Col::kGrpSubmit:
    case Col::kUnenforced:
    case Col::kInfo:
      return SharedCell(c, &a->grp_tres, &a->max_tres, &a->grp_jobs, &a->grp_submit);
    case Col::kName:
    case Col::kPriority:
    case Col::kPreempt:
    case Col::kPreemptMode:
    case Col::kUsageFactor:
    case Col::kMaxTresPu:
    case Col::kMaxJobsPu:
    case Col::kMaxSubmitPu:
    case Col::kMaxWall:
      break;
  }
  return MakeError("column '" + c.column->header + "' is not a column of associations", kExitRuntime);
}

Status Reader::QosCell(const Cell& c, Qos* q) {
  switch (c.column->col) {
    case Col::kName:
      q->name = std::string(Trim(c.text));
      if (q->name.empty()) return Bad(c, "a QOS name");
      return Status::Ok();
    case Col::kPriority: {
      int64_t v = 0;
      if (!c.text.empty() && (!ParseI64(c.text, &v) || v < 0 || v > UINT32_MAX))
        return Bad(c, "a non-negative priority below 2^32");
      q->priority = static_cast<uint32_t>(v);
      return Status::Ok();
    }
    case Col::kPreempt: q->preempt = NameList(c.text); return Status::Ok();
    case Col::kPreemptMode: {
      if (c.text.empty() || Lower(c.text) == "cluster") return Status::Ok();
      auto m = ParsePreemptMode(c.text);
      if (!m.ok()) return BadMsg(c, m.error().message + ", got " + Quote(c.text));
      q->preempt_mode = *m;
      return Status::Ok();
    }
    case Col::kUsageFactor:
      if (!c.text.empty() && (!ParseF64(c.text, &q->usage_factor) || !(q->usage_factor >= 0) ||
                              q->usage_factor > 1e6))
        return Bad(c, "a usage factor from 0 to 10^6");
      return Status::Ok();
    case Col::kMaxTresPu: {
      ORR_ASSIGN_OR_RETURN(q->max_tres_pu, Tres(c));
      return Status::Ok();
    }
    case Col::kMaxJobsPu: {
      ORR_ASSIGN_OR_RETURN(q->max_jobs_pu, Limit(c));
      return Status::Ok();
    }
    case Col::kMaxSubmitPu: {
      ORR_ASSIGN_OR_RETURN(q->max_submit_pu, Limit(c));
      return Status::Ok();
    }
    case Col::kMaxWall: {
      if (c.text.empty()) return Status::Ok();
      auto d = ParseDuration(c.text);
      if (!d) return Bad(c, "a time as MINUTES, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS or UNLIMITED");
      q->max_wall_s = *d;
      return Status::Ok();
    }
    case Col::kGrpTres:
    case Col::kMaxTres:
    case Col::kGrpJobs:
    case Col::kGrpSubmit:
    case Col::kUnenforced:
    case Col::kInfo:
      return SharedCell(c, &q->grp_tres, &q->max_tres, &q->grp_jobs, &q->grp_submit);
    case Col::kCluster:
    case Col::kAccount:
    case Col::kUser:
    case Col::kPartition:
    case Col::kParent:
    case Col::kShare:
    case Col::kMaxJobs:
    case Col::kMaxSubmit:
    case Col::kQosList:
    case Col::kDefQos:
      break;
  }
  return MakeError("column '" + c.column->header + "' is not a column of QOS", kExitRuntime);
}

// Places an association in the tree: its parent from `Par Name`, else from the indentation
// of a tree listing, else root (user associations hang under their account).
Status Reader::AddAssoc(Assoc a, size_t indent, const Cell& first) {
  const SourcePos at{file_, a.line, 1};
  if (!assoc_keys_.insert({a.account, a.user, a.partition}).second)
    return MakeError(FormatPos(at) + ": expected each association (account, user, partition) once, got " +
                     Quote(a.account + "," + a.user + "," + a.partition) + " again");
  if (!a.user.empty()) {
    a.parent = a.account;
  } else if (!has_parent_column_) {
    while (!indent_stack_.empty() && indent_stack_.back().first >= indent) indent_stack_.pop_back();
    if (!indent_stack_.empty()) a.parent = indent_stack_.back().second;
    else if (indent > 0) return BadMsg(first, "expected an indented account under a less indented one");
    else if (a.account != "root") a.parent = "root";
    indent_stack_.emplace_back(indent, a.account);
  }
  out_.assocs.push_back(std::move(a));
  return Status::Ok();
}

Status Reader::Row(std::string_view line, uint64_t line_no) {
  if (trailing_bar_ && !line.empty() && line.back() == '|') line.remove_suffix(1);
  std::vector<Cell> cells;
  size_t pos = 0;
  while (pos <= line.size()) {
    const size_t bar = line.find('|', pos);
    const std::string_view t = line.substr(pos, bar == std::string_view::npos ? std::string_view::npos : bar - pos);
    if (cells.size() == columns_.size())
      return MakeError(FormatPos(SourcePos{file_, line_no, static_cast<uint32_t>(pos + 1)}) + ": expected " +
                       std::to_string(columns_.size()) + " fields as the header has, got more");
    cells.push_back(Cell{t, SourcePos{file_, line_no, static_cast<uint32_t>(pos + 1)}, &columns_[cells.size()]});
    pos = bar == std::string_view::npos ? line.size() + 1 : bar + 1;
  }
  if (cells.size() != columns_.size())
    return MakeError(FormatPos(SourcePos{file_, line_no, static_cast<uint32_t>(line.size() + 1)}) + ": expected " +
                     std::to_string(columns_.size()) + " fields as the header has, got " +
                     std::to_string(cells.size()));
  if (table_ == Table::kQos) {
    Qos q;
    q.line = line_no;
    for (const Cell& c : cells) ORR_RETURN_IF_ERROR(QosCell(c, &q));
    if (q.name.empty()) return MakeError(FormatPos(cells[0].pos) + ": expected a Name column with the QOS name");
    if (!qos_index_.emplace(q.name, out_.qos.size()).second)
      return MakeError(FormatPos(cells[0].pos) + ": expected each QOS once, got " + Quote(q.name) + " again");
    out_.qos.push_back(std::move(q));
    return Status::Ok();
  }
  Assoc a;
  a.line = line_no;
  size_t indent = 0;
  const Cell* account = nullptr;
  for (const Cell& c : cells) {
    ORR_RETURN_IF_ERROR(AssocCell(c, &a, &indent));
    if (c.column->col == Col::kAccount) account = &c;
  }
  if (account == nullptr) return MakeError(FormatPos(cells[0].pos) + ": expected an Account column");
  return AddAssoc(std::move(a), indent, *account);
}

Status Reader::Validate() {
  std::set<std::string> accounts;
  for (const Assoc& a : out_.assocs)
    if (a.user.empty()) accounts.insert(a.account);
  for (const Assoc& a : out_.assocs) {
    const SourcePos at{file_, a.line, 1};
    if (!a.user.empty() && !accounts.count(a.account))
      return MakeError(FormatPos(at) + ": expected an association of account " + Quote(a.account) +
                       " (a row with an empty User) for user " + Quote(a.user) + ", got none");
    if (a.user.empty() && !a.parent.empty() && !accounts.count(a.parent))
      return MakeError(FormatPos(at) + ": expected parent account " + Quote(a.parent) + " of " + Quote(a.account) +
                       " to have an association, got none");
  }
  // Every account reaches root: each chain of parents is walked once (linear in accounts).
  std::unordered_map<std::string, std::string> parent_of;
  for (const Assoc& a : out_.assocs)
    if (a.user.empty()) parent_of.emplace(a.account, a.parent);
  std::unordered_map<std::string, uint8_t> state;  // 1: on the chain being walked, 2: reaches root
  for (const Assoc& a : out_.assocs) {
    if (!a.user.empty()) continue;
    std::vector<std::string> chain;
    std::string at = a.account;
    while (!at.empty() && state[at] != 2) {
      if (state[at] == 1)
        return MakeError(FormatPos(SourcePos{file_, a.line, 1}) + ": expected account " + Quote(a.account) +
                         " under root, got a cycle of parent accounts");
      state[at] = 1;
      chain.push_back(at);
      at = parent_of[at];
    }
    for (const std::string& c : chain) state[c] = 2;
  }
  if (out_.qos.empty()) return Status::Ok();
  for (const auto& [name, pos] : qos_refs_)
    if (!qos_index_.count(name))
      return MakeError(FormatPos(pos) + ": column 'QOS': expected QOS listed in the QOS table, got " + Quote(name));
  for (const Qos& q : out_.qos)
    for (const std::string& p : q.preempt)
      if (!qos_index_.count(p))
        return MakeError(FormatPos(SourcePos{file_, q.line, 1}) + ": QOS " + Quote(q.name) +
                         ": expected QOS to preempt listed in the QOS table, got " + Quote(p));
  return Status::Ok();
}

Result<Accounts> Reader::Run(std::string_view text) {
  size_t pos = 0;
  std::string_view line;
  uint64_t line_no = 0;
  bool in_table = false;
  while (NextLine(text, &pos, &line)) {
    ++line_no;
    if (line.find('\0') != std::string_view::npos)
      return MakeError(FormatPos(SourcePos{file_, line_no, static_cast<uint32_t>(line.find('\0') + 1)}) +
                       ": expected text, got a NUL byte");
    if (Trim(line).empty()) {
      in_table = false;
      continue;
    }
    if (!in_table) {
      ORR_RETURN_IF_ERROR(Header(line, line_no));
      in_table = true;
      continue;
    }
    ORR_RETURN_IF_ERROR(Row(line, line_no));
  }
  ORR_RETURN_IF_ERROR(Validate());
  return std::move(out_);
}

}  // namespace

Result<Accounts> ParseSacctmgr(std::string_view text, std::string_view file) {
  Reader r(file);
  return r.Run(text);
}

Result<Accounts> ReadSacctmgr(const std::string& path) {
  ORR_ASSIGN_OR_RETURN(auto text, ReadFile(path));
  return ParseSacctmgr(text, path);
}

}  // namespace orrery::slurm
