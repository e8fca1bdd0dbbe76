#include "slurm/conf.h"

#include <memory>
#include <set>
#include <unordered_map>

#include "base/io.h"
#include "base/parse.h"

namespace orrery::slurm {

std::string_view Name(PreemptMode m) {
  switch (m) {
    case PreemptMode::kOff: return "OFF";
    case PreemptMode::kCancel: return "CANCEL";
    case PreemptMode::kRequeue: return "REQUEUE";
    case PreemptMode::kSuspend: return "SUSPEND";
  }
  return "?";
}

Result<PreemptMode> ParsePreemptMode(std::string_view s) {
  std::optional<PreemptMode> mode;
  size_t pos = 0;
  const std::string l = Lower(s);
  while (pos <= l.size()) {
    const size_t comma = l.find(',', pos);
    const std::string w = l.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    pos = comma == std::string::npos ? l.size() + 1 : comma + 1;
    if (w == "gang" || w == "within")
      return MakeError("expected OFF, CANCEL, REQUEUE or SUSPEND (" +
                       std::string(w == "gang" ? "GANG time slicing" : "WITHIN") + " is not modelled)");
    std::optional<PreemptMode> m;
    if (w == "off") m = PreemptMode::kOff;
    else if (w == "cancel") m = PreemptMode::kCancel;
    else if (w == "requeue") m = PreemptMode::kRequeue;
    else if (w == "suspend") m = PreemptMode::kSuspend;
    if (!m || mode) return MakeError("expected one of OFF, CANCEL, REQUEUE, SUSPEND");
    mode = m;
  }
  return *mode;
}

namespace {

struct Token {
  std::string key;    // as written
  std::string lkey;   // lower case
  std::string value;  // quotes removed
  bool has_value = false;
  SourcePos kpos, vpos;
};
using Line = std::vector<Token>;

bool Blank(char c) { return c == ' ' || c == '\t'; }

class ConfReader {
 public:
  ConfReader(std::string_view file, SlurmConfBounds bounds) : file_(file), bounds_(bounds) {}
  Result<SlurmConf> Run(std::string_view text);

 private:
  SourcePos Pos(uint64_t line, size_t col) const { return SourcePos{file_, line, static_cast<uint32_t>(col + 1)}; }
  Error Bad(const Token& t, std::string_view expected) const {
    return MakeError(FormatPos(t.vpos) + ": key '" + t.key + "': expected " + std::string(expected) + ", got " +
                     Quote(t.value));
  }
  Error BadMsg(const Token& t, const std::string& msg) const {
    return MakeError(FormatPos(t.vpos) + ": key '" + t.key + "': " + msg);
  }
  Error BadWith(const Token& t, const Error& e) const { return BadMsg(t, e.message); }
  void Warn(const SourcePos& p, const std::string& dedup, const std::string& what) {
    if (warned_.insert(dedup).second) conf_.warnings.push_back(FormatPos(p) + ": " + what);
  }
  Status Tokenize(std::string_view text, std::vector<Line>* lines) const;
  Status SplitLogical(std::string_view s, const std::vector<SourcePos>& at, Line* out) const;
  Result<uint32_t> U32(const Token& t, uint32_t lo) const;
  Result<int64_t> Duration(const Token& t, bool allow_unlimited) const;
  Status TopLevel(const Token& t);
  Status Priority(const Token& t);
  Status PriorityFlags(const Token& t);
  Status WeightTres(const Token& t);
  Status SchedulerParameters(const Token& t);
  Status SchedOption(const Token& t, std::string_view opt, std::string_view val, bool has_val);
  Result<PreemptMode> Mode(const Token& t) const;
  Status NodeLine(const Line& line);
  Status NodeAttr(const Token& t, NodeDef* n);
  Status Gres(const Token& t, NodeDef* n);
  Status PartitionLine(const Line& line);
  Status PartitionAttr(const Token& t, PartitionDef* p, Token* nodes);
  Status ResolveNodes(const Token& t, PartitionDef* p);

  Status AddMemberships(const Token& t, size_t n);

  std::string file_;
  SlurmConfBounds bounds_;
  size_t memberships_ = 0;  // (partition, node) pairs so far
  SlurmConf conf_;
  std::set<std::string> warned_;
  std::unordered_map<std::string, uint64_t> set_at_;  // top-level key -> line
  std::unordered_map<std::string, uint32_t> node_index_;
  std::set<std::string> partition_names_;
  NodeDef node_default_;
  PartitionDef part_default_;
  bool part_nodes_default_set_ = false;
  Token part_nodes_default_;
  bool saw_default_partition_ = false;
};

// One logical line's tokens: `text` with the source position of each of its bytes.
Status ConfReader::SplitLogical(std::string_view s, const std::vector<SourcePos>& at, Line* out) const {
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && Blank(s[i])) ++i;
    if (i >= s.size()) break;
    Token t;
    t.kpos = at[i];
    std::string text;
    bool quoted = false;
    size_t eq = std::string::npos;
    for (; i < s.size() && (quoted || !Blank(s[i])); ++i) {
      if (s[i] == '"') {
        quoted = !quoted;
      } else if (s[i] == '=' && eq == std::string::npos && !quoted) {
        eq = i;
        t.key = std::move(text);
        text.clear();
      } else {
        text += s[i];
      }
    }
    if (quoted) return MakeError(FormatPos(t.kpos) + ": expected a closing '\"' on this line, got the end of the line");
    if (eq == std::string::npos) {
      t.key = std::move(text);
      t.vpos = t.kpos;
    } else {
      t.has_value = true;
      t.value = std::move(text);
      t.vpos = eq + 1 < at.size() ? at[eq + 1] : at[eq];
    }
    if (t.key.empty()) return MakeError(FormatPos(t.kpos) + ": expected Key=Value, got " + Quote("=" + t.value));
    t.lkey = Lower(t.key);
    out->push_back(std::move(t));
  }
  return Status::Ok();
}

// Comments are cut from each physical line first ('#' outside quotes; "\#" is a literal '#'),
// then a line ending in '\' is joined with the next, as slurmctld reads it.
Status ConfReader::Tokenize(std::string_view text, std::vector<Line>* lines) const {
  size_t pos = 0;
  std::string_view phys;
  uint64_t line_no = 0;
  std::string logical;
  std::vector<SourcePos> at;
  while (NextLine(text, &pos, &phys)) {
    ++line_no;
    if (phys.find('\0') != std::string_view::npos)
      return MakeError(FormatPos(Pos(line_no, phys.find('\0'))) + ": expected text, got a NUL byte");
    bool quoted = false;
    size_t i = 0;
    for (; i < phys.size(); ++i) {
      if (phys[i] == '"') quoted = !quoted;
      if (phys[i] == '#' && !quoted) break;
      if (phys[i] == '\\' && i + 1 < phys.size() && phys[i + 1] == '#') ++i;  // the '#' is kept
      logical += phys[i];
      at.push_back(Pos(line_no, i));
    }
    if (i == phys.size() && !logical.empty() && logical.back() == '\\' && at.back().line == line_no) {
      logical.pop_back();
      at.pop_back();
      continue;
    }
    Line cur;
    ORR_RETURN_IF_ERROR(SplitLogical(logical, at, &cur));
    if (!cur.empty()) lines->push_back(std::move(cur));
    logical.clear();
    at.clear();
  }
  Line cur;
  ORR_RETURN_IF_ERROR(SplitLogical(logical, at, &cur));
  if (!cur.empty()) lines->push_back(std::move(cur));
  return Status::Ok();
}

Result<uint32_t> ConfReader::U32(const Token& t, uint32_t lo) const {
  int64_t v = 0;
  if (!ParseI64(t.value, &v) || v < lo || v > UINT32_MAX)
    return Bad(t, lo == 0 ? "a non-negative integer below 2^32" : "a positive integer below 2^32");
  return static_cast<uint32_t>(v);
}

Result<int64_t> ConfReader::Duration(const Token& t, bool allow_unlimited) const {
  auto d = ParseDuration(t.value);
  if (!d || (*d == kUnlimited && !allow_unlimited))
    return Bad(t, allow_unlimited ? "a time as MINUTES, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS or UNLIMITED"
                                  : "a time as MINUTES, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS");
  return *d;
}

Result<PreemptMode> ConfReader::Mode(const Token& t) const {
  auto m = ParsePreemptMode(t.value);
  if (!m.ok()) return BadMsg(t, m.error().message + ", got " + Quote(t.value));
  return *m;
}

Status ConfReader::WeightTres(const Token& t) {
  conf_.priority.weight_tres.clear();
  size_t pos = 0;
  const std::string_view v = t.value;
  while (pos <= v.size()) {
    const size_t comma = v.find(',', pos);
    const std::string_view item = v.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
    pos = comma == std::string_view::npos ? v.size() + 1 : comma + 1;
    const size_t eq = item.find('=');
    double w = 0;
    if (eq == std::string_view::npos || eq == 0 || !ParseF64(item.substr(eq + 1), &w) || !(w >= 0) || w > 1e12)
      return Bad(t, "a list of TRES=weight (CPU=1000,Mem=2000,GRES/gpu=3000) with weights from 0 to 1e12");
    const std::string name = Lower(item.substr(0, eq));
    if (name != "cpu" && name != "mem" && name != "node" && name != "gres/gpu")
      return Bad(t, "weights of the TRES cpu, mem, node or gres/gpu (others are not modelled)");
    conf_.priority.weight_tres[name] = w;
  }
  return Status::Ok();
}

Status ConfReader::PriorityFlags(const Token& t) {
  size_t pos = 0;
  const std::string l = Lower(t.value);
  conf_.priority.accrue_always = false;
  while (pos <= l.size()) {
    const size_t comma = l.find(',', pos);
    const std::string f = l.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    pos = comma == std::string::npos ? l.size() + 1 : comma + 1;
    if (f == "accrue_always") conf_.priority.accrue_always = true;
    else if (f == "calculate_running" || f == "fair_tree") continue;  // no effect on pending jobs' order
    else if (f.empty() && l.empty()) continue;
    else
      return Bad(t, "PriorityFlags of ACCRUE_ALWAYS, CALCULATE_RUNNING, FAIR_TREE (others, such as NO_FAIR_TREE, "
                    "DEPTH_OBLIVIOUS, SMALL_RELATIVE_TO_TIME, MAX_TRES or NO_NORMAL_*, are not modelled)");
  }
  return Status::Ok();
}

Status ConfReader::Priority(const Token& t) {
  PriorityConf& p = conf_.priority;
  const std::string& k = t.lkey;
  if (k == "prioritytype") {
    const std::string v = Lower(t.value);
    if (v == "priority/basic") p.type = PriorityType::kBasic;
    else if (v == "priority/multifactor") p.type = PriorityType::kMultifactor;
    else return Bad(t, "priority/basic or priority/multifactor");
    return Status::Ok();
  }
  uint32_t* weight = k == "priorityweightage"         ? &p.weight_age
                     : k == "priorityweightfairshare" ? &p.weight_fairshare
                     : k == "priorityweightjobsize"   ? &p.weight_job_size
                     : k == "priorityweightpartition" ? &p.weight_partition
                     : k == "priorityweightqos"       ? &p.weight_qos
                                                      : nullptr;
  if (weight != nullptr) {
    ORR_ASSIGN_OR_RETURN(*weight, U32(t, 0));
    return Status::Ok();
  }
  if (k == "priorityweightassoc") {
    ORR_ASSIGN_OR_RETURN(const uint32_t w, U32(t, 0));
    if (w != 0) return Bad(t, "0 (the association priority factor is not modelled)");
    return Status::Ok();
  }
  if (k == "priorityweighttres") return WeightTres(t);
  if (k == "priorityflags") return PriorityFlags(t);
  if (k == "priorityfavorsmall") {
    auto b = ParseBool(t.value);
    if (!b) return Bad(t, "YES or NO");
    p.favor_small = *b;
    return Status::Ok();
  }
  if (k == "prioritydecayhalflife") {
    ORR_ASSIGN_OR_RETURN(p.decay_half_life_s, Duration(t, false));
  } else if (k == "prioritycalcperiod") {
    ORR_ASSIGN_OR_RETURN(p.calc_period_s, Duration(t, false));
    if (p.calc_period_s < 1) return Bad(t, "a period of at least one second");
  } else if (k == "prioritymaxage") {
    ORR_ASSIGN_OR_RETURN(p.max_age_s, Duration(t, false));
  } else {
    Warn(t.kpos, "key:" + k, "key '" + t.key + "' is not modelled; ignored");
  }
  return Status::Ok();
}

Status ConfReader::SchedOption(const Token& t, std::string_view opt, std::string_view val, bool has_val) {
  SchedulerParams& s = conf_.sched;
  struct IntOpt {
    std::string_view name;
    int64_t* field;
    int64_t lo, hi, scale;
  };
  const IntOpt ints[] = {
      {"sched_interval", &s.sched_interval_s, 0, 86400, 1},
      {"default_queue_depth", &s.default_queue_depth, 1, 1'000'000, 1},
      {"bf_interval", &s.bf_interval_s, 1, 10800, 1},
      {"bf_window", &s.bf_window_s, 1, 43200, 60},
      {"bf_resolution", &s.bf_resolution_s, 1, 3600, 1},
      {"bf_max_job_test", &s.bf_max_job_test, 1, 1'000'000, 1},
      {"bf_max_job_user", &s.bf_max_job_user, 0, 1'000'000, 1},
      {"batch_sched_delay", &s.batch_sched_delay_s, 0, 86400, 1},
  };
  for (const IntOpt& o : ints) {
    if (opt != o.name) continue;
    int64_t v = 0;
    if (!has_val || !ParseI64(val, &v) || v < o.lo || v > o.hi)
      return Bad(t, std::string(o.name) + "=N with N from " + std::to_string(o.lo) + " to " + std::to_string(o.hi) +
                        (o.scale == 60 ? " minutes" : ""));
    *o.field = v * o.scale;
    return Status::Ok();
  }
  if (opt == "bf_continue") {
    if (has_val) return Bad(t, "bf_continue without a value");
    s.bf_continue = true;
    return Status::Ok();
  }
  Warn(t.vpos, "sched:" + std::string(opt),
       "SchedulerParameters option '" + std::string(opt) + "' is not modelled; ignored");
  return Status::Ok();
}

Status ConfReader::SchedulerParameters(const Token& t) {
  conf_.sched = SchedulerParams{};
  size_t pos = 0;
  const std::string l = Lower(t.value);
  while (pos < l.size()) {
    const size_t comma = l.find(',', pos);
    const std::string item = l.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    pos = comma == std::string::npos ? l.size() : comma + 1;
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    const std::string opt = item.substr(0, eq);
    const std::string val = eq == std::string::npos ? "" : item.substr(eq + 1);
    ORR_RETURN_IF_ERROR(SchedOption(t, opt, val, eq != std::string::npos));
  }
  return Status::Ok();
}

Status ConfReader::TopLevel(const Token& t) {
  const std::string& k = t.lkey;
  if (k == "include")
    return MakeError(FormatPos(t.kpos) + ": expected the settings in this one file, got " + Quote(t.key) +
                     " (Include is not supported: merge the included file into this one)");
  if (!t.has_value) return MakeError(FormatPos(t.kpos) + ": expected Key=Value, got " + Quote(t.key));
  auto [it, fresh] = set_at_.emplace(k, t.kpos.line);
  if (!fresh) {
    Warn(t.kpos, "again:" + k,
         "key '" + t.key + "' set again (first on line " + std::to_string(it->second) + "); the last value is used");
    it->second = t.kpos.line;
  }
  if (k.rfind("priority", 0) == 0 &&
      (k == "prioritytype" || k.rfind("priorityweight", 0) == 0 || k == "priorityflags" ||
       k == "priorityfavorsmall" || k == "prioritydecayhalflife" || k == "prioritycalcperiod" ||
       k == "prioritymaxage"))
    return Priority(t);
  if (k == "schedulertype") {
    const std::string v = Lower(t.value);
    if (v == "sched/backfill") conf_.scheduler = SchedulerType::kBackfill;
    else if (v == "sched/builtin") conf_.scheduler = SchedulerType::kBuiltin;
    else return Bad(t, "sched/backfill or sched/builtin");
    return Status::Ok();
  }
  if (k == "schedulerparameters") return SchedulerParameters(t);
  if (k == "priorityusageresetperiod" && Lower(t.value) != "none")
    return Bad(t, "NONE (usage resets are not modelled: usage only decays)");
  if (k == "fairsharedampeningfactor" && t.value != "1")
    return Bad(t, "1 (fair share dampening is not modelled)");
  if (k == "priorityusageresetperiod" || k == "fairsharedampeningfactor") return Status::Ok();
  if (k == "preempttype") {
    const std::string v = Lower(t.value);
    if (v == "preempt/none") conf_.preempt_type = PreemptType::kNone;
    else if (v == "preempt/partition_prio") conf_.preempt_type = PreemptType::kPartitionPrio;
    else if (v == "preempt/qos") conf_.preempt_type = PreemptType::kQos;
    else return Bad(t, "preempt/none, preempt/partition_prio or preempt/qos");
    return Status::Ok();
  }
  if (k == "preemptmode") {
    ORR_ASSIGN_OR_RETURN(conf_.preempt_mode, Mode(t));
    return Status::Ok();
  }
  if (k == "preemptexempttime") {  // -1 disables it, as 0 does
    conf_.preempt_exempt_s = 0;
    if (t.value == "-1") return Status::Ok();
    ORR_ASSIGN_OR_RETURN(conf_.preempt_exempt_s, Duration(t, false));
    return Status::Ok();
  }
  Warn(t.kpos, "key:" + k, "key '" + t.key + "' is not modelled; ignored");
  return Status::Ok();
}


Status ConfReader::Gres(const Token& t, NodeDef* n) {
  n->gpus = 0;
  n->gpu_type.clear();
  size_t pos = 0;
  const std::string_view v = t.value;
  while (pos < v.size()) {
    const size_t comma = v.find(',', pos);
    std::string_view item = v.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
    pos = comma == std::string_view::npos ? v.size() : comma + 1;
    item = item.substr(0, item.find('('));  // "(S:0-1)": socket binding, not modelled
    const size_t c1 = item.find(':');
    const std::string name = Lower(item.substr(0, c1));
    if (name != "gpu") {
      Warn(t.vpos, "gres:" + name, "key 'Gres': GRES '" + name + "' is not modelled; ignored");
      continue;
    }
    std::string_view type, count = "1";
    if (c1 != std::string_view::npos) {
      const std::string_view rest = item.substr(c1 + 1);
      const size_t c2 = rest.find(':');
      if (c2 == std::string_view::npos) count = rest;
      else type = rest.substr(0, c2), count = rest.substr(c2 + 1);
    }
    int64_t k = 0;
    if (!ParseI64(count, &k) || k < 0 || k > 1024)
      return Bad(t, "GPUs as gpu:N or gpu:TYPE:N with N from 0 to 1024");
    if (!type.empty() && !n->gpu_type.empty() && n->gpu_type != type)
      return Bad(t, "one GPU type per node (nodes mixing GPU types are not modelled)");
    if (!type.empty()) n->gpu_type = std::string(type);
    n->gpus += static_cast<uint32_t>(k);
    if (n->gpus > 1024) return Bad(t, "at most 1024 GPUs per node");
  }
  return Status::Ok();
}

Status ConfReader::NodeAttr(const Token& t, NodeDef* n) {
  const std::string& k = t.lkey;
  if (!t.has_value) return MakeError(FormatPos(t.kpos) + ": expected Attribute=Value, got " + Quote(t.key));
  if (k == "cpus" || k == "procs") {
    ORR_ASSIGN_OR_RETURN(n->cpus, U32(t, 1));
  } else if (k == "realmemory") {
    ORR_ASSIGN_OR_RETURN(const uint32_t m, U32(t, 1));
    n->real_memory_mib = m;
  } else if (k == "weight") {
    ORR_ASSIGN_OR_RETURN(n->weight, U32(t, 0));
  } else if (k == "gres") {
    return Gres(t, n);
  } else {
    Warn(t.kpos, "node:" + k, "NodeName attribute '" + t.key + "' is not modelled; ignored");
  }
  return Status::Ok();
}

Status ConfReader::NodeLine(const Line& line) {
  const Token& head = line.front();
  NodeDef proto = node_default_;
  for (size_t i = 1; i < line.size(); ++i) ORR_RETURN_IF_ERROR(NodeAttr(line[i], &proto));
  if (Lower(head.value) == "default") {
    node_default_ = proto;
    return Status::Ok();
  }
  if (head.value.empty()) return Bad(head, "a host list such as gpu[001-016]");
  if (conf_.nodes.size() >= bounds_.max_nodes)
    return BadMsg(head, "expected at most " + std::to_string(bounds_.max_nodes) + " nodes in all, got more");
  auto names = ExpandHostList(head.value, bounds_.max_nodes - conf_.nodes.size());
  if (!names.ok()) return BadWith(head, names.error());
  for (std::string& name : *names) {
    if (!node_index_.emplace(name, static_cast<uint32_t>(conf_.nodes.size())).second)
      return BadMsg(head, "expected each node defined once, got " + Quote(name) + " again (first on line " +
                              std::to_string(conf_.nodes[node_index_[name]].line) + ")");
    conf_.nodes.push_back(proto);
    conf_.nodes.back().name = std::move(name);
    conf_.nodes.back().line = head.kpos.line;
  }
  return Status::Ok();
}

Status ConfReader::PartitionAttr(const Token& t, PartitionDef* p, Token* nodes) {
  const std::string& k = t.lkey;
  if (!t.has_value) return MakeError(FormatPos(t.kpos) + ": expected Attribute=Value, got " + Quote(t.key));
  if (k == "nodes") {
    *nodes = t;
  } else if (k == "prioritytier") {
    ORR_ASSIGN_OR_RETURN(p->priority_tier, U32(t, 0));
  } else if (k == "priorityjobfactor") {
    ORR_ASSIGN_OR_RETURN(p->priority_job_factor, U32(t, 0));
  } else if (k == "priority") {  // the older spelling: sets both
    ORR_ASSIGN_OR_RETURN(p->priority_tier, U32(t, 0));
    p->priority_job_factor = p->priority_tier;
  } else if (k == "maxtime") {
    ORR_ASSIGN_OR_RETURN(p->max_time_s, Duration(t, true));
  } else if (k == "preemptmode") {
    ORR_ASSIGN_OR_RETURN(p->preempt_mode, Mode(t));
  } else if (k == "tresbillingweights") {
    return Bad(t, "no TRESBillingWeights (usage is charged as allocated CPUs × seconds, Slurm's default billing)");
  } else if (k == "default") {
    auto b = ParseBool(t.value);
    if (!b) return Bad(t, "YES or NO");
    p->is_default = *b;
  } else {
    Warn(t.kpos, "part:" + k, "PartitionName attribute '" + t.key + "' is not modelled; ignored");
  }
  return Status::Ok();
}

Status ConfReader::AddMemberships(const Token& t, size_t n) {
  memberships_ += n;
  if (memberships_ > bounds_.max_memberships)
    return BadMsg(t, "expected at most " + std::to_string(bounds_.max_memberships) +
                         " partition memberships (a node named by a partition) in all, got " +
                         std::to_string(memberships_) + " so far");
  return Status::Ok();
}

Status ConfReader::ResolveNodes(const Token& t, PartitionDef* p) {
  p->nodes.clear();
  if (Lower(t.value) == "all") {
    ORR_RETURN_IF_ERROR(AddMemberships(t, conf_.nodes.size()));
    for (uint32_t i = 0; i < conf_.nodes.size(); ++i) p->nodes.push_back(i);
    return Status::Ok();
  }
  // A list names each defined node at most a few times: the bound keeps a hostile list cheap.
  auto names = ExpandHostList(t.value, 2 * conf_.nodes.size() + 16);
  if (!names.ok()) return BadWith(t, names.error());
  std::set<uint32_t> seen;
  for (const std::string& name : *names) {
    auto it = node_index_.find(name);
    if (it == node_index_.end())
      return BadMsg(t, "expected nodes defined by NodeName lines, got undefined node " + Quote(name));
    if (seen.insert(it->second).second) p->nodes.push_back(it->second);
  }
  return AddMemberships(t, p->nodes.size());
}

Status ConfReader::PartitionLine(const Line& line) {
  const Token& head = line.front();
  PartitionDef p = part_default_;
  Token nodes = part_nodes_default_;
  bool has_nodes = part_nodes_default_set_;
  for (size_t i = 1; i < line.size(); ++i) {
    Token got;
    ORR_RETURN_IF_ERROR(PartitionAttr(line[i], &p, &got));
    if (!got.key.empty()) nodes = got, has_nodes = true;
  }
  if (Lower(head.value) == "default") {
    part_default_ = p;
    part_nodes_default_ = nodes;
    part_nodes_default_set_ = has_nodes;
    return Status::Ok();
  }
  if (head.value.empty() || head.value.find(',') != std::string::npos) return Bad(head, "one partition name");
  if (!partition_names_.insert(head.value).second) return Bad(head, "each partition defined once");
  if (has_nodes) ORR_RETURN_IF_ERROR(ResolveNodes(nodes, &p));
  p.name = head.value;
  p.line = head.kpos.line;
  if (p.is_default) {
    if (saw_default_partition_) return BadMsg(head, "expected one partition with Default=YES, got a second: " + Quote(head.value));
    saw_default_partition_ = true;
    conf_.default_partition = static_cast<uint32_t>(conf_.partitions.size());
  }
  conf_.partitions.push_back(std::move(p));
  return Status::Ok();
}

Result<SlurmConf> ConfReader::Run(std::string_view text) {
  std::vector<Line> lines;
  ORR_RETURN_IF_ERROR(Tokenize(text, &lines));
  for (const Line& line : lines) {
    const std::string& k = line.front().lkey;
    if (k == "nodename" && line.front().has_value) {
      ORR_RETURN_IF_ERROR(NodeLine(line));
    } else if (k == "partitionname" && line.front().has_value) {
      ORR_RETURN_IF_ERROR(PartitionLine(line));
    } else {
      for (const Token& t : line) ORR_RETURN_IF_ERROR(TopLevel(t));
    }
  }
  conf_.key_lines.insert(set_at_.begin(), set_at_.end());
  return std::move(conf_);
}

}  // namespace

Result<SlurmConf> ParseSlurmConf(std::string_view text, std::string_view file, SlurmConfBounds bounds) {
  ConfReader r(file, bounds);
  return r.Run(text);
}

Result<SlurmConf> ReadSlurmConf(const std::string& path) {
  ORR_ASSIGN_OR_RETURN(auto text, ReadFile(path));
  return ParseSlurmConf(text, path);
}

}  // namespace orrery::slurm
