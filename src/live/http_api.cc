#include "live/http_api.h"

#include <httplib.h>

#include <cmath>

#include <nlohmann/json.hpp>

#include "base/json_text.h"

namespace orrery::live {

namespace {

using nlohmann::json;

json TimeJson(Time t) { return t == kNoTime ? json(nullptr) : json(t); }

json OptJson(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

std::string_view SourceName(EstimateSource s) {
  switch (s) {
    case EstimateSource::kNone: return "none";
    case EstimateSource::kEstimator: return "estimator";
    case EstimateSource::kOracle: return "oracle";
    case EstimateSource::kReported: return "reported";
  }
  return "?";
}

// The tracker's reading of a running job (docs/design/live-signals.md#api-and-metrics); eta_s is the remaining
// time as of the entry's cycle, eta its absolute time.
json ProgressJson(const QueueEntry& e) {
  if (!e.progress) return nullptr;
  const ProgressView& p = *e.progress;
  const std::optional<double> left = p.remaining_s(e.as_of);
  const json eta = left ? json(p.read_at + static_cast<Time>(std::ceil(*p.eta_s))) : json(nullptr);
  const double f = p.fraction();
  return {{"step", p.step},
          {"total_steps", p.total < 0 ? json(nullptr) : json(p.total)},
          {"percent", f < 0 ? json(nullptr) : json(std::round(f * 10000.0) / 100.0)},
          {"eta_s", OptJson(left)},
          {"eta", eta},
          {"seconds_per_step", OptJson(p.seconds_per_step)},
          {"loss", OptJson(p.loss)},
          {"framework", std::string(logs::FrameworkName(p.framework))},
          {"progress_at", TimeJson(p.progress_at)},
          {"read_at", TimeJson(p.read_at)},
          {"stalled", p.stalled},
          {"log", p.log}};
}

json FailureJson(const FailureRecord& f) {
  return {{"job", f.job},
          {"generation", f.gen},
          {"time", f.time},
          {"trigger", std::string(TriggerName(f.trigger))},
          {"category", std::string(logs::CategoryName(f.category))},
          {"subtype", f.subtype},
          {"suspect_node", f.suspect},
          {"step", std::string(StepName(f.step))},
          {"reason", f.reason},
          {"evidence", f.evidence},
          {"logs", f.logs}};
}

json DecisionJson(const JournalDecision& d) {
  json nodes = json::array();
  for (const auto& n : d.nodes) nodes.push_back({{"node", n.node}, {"gpus", n.gpus}});
  return {{"key", d.key},     {"kind", std::string(DecisionKindName(d.kind))}, {"job", d.job}, {"generation", d.gen},
          {"cycle", d.cycle}, {"time", d.time}, {"state", std::string(DecisionStateName(d.state))}, {"nodes", nodes},
          {"detail", d.detail}, {"applied_time", TimeJson(d.applied_time)}};
}

bool TokenOk(const std::string& want, const httplib::Request& req) {
  std::string got = req.get_header_value("Authorization");
  const std::string prefix = "Bearer ";
  if (got.rfind(prefix, 0) != 0) return false;
  got = got.substr(prefix.size());
  if (got.size() != want.size()) return false;
  unsigned char diff = 0;  // constant time in the token's length
  for (size_t i = 0; i < want.size(); ++i) diff |= static_cast<unsigned char>(got[i] ^ want[i]);
  return diff == 0;
}

size_t LimitParam(const httplib::Request& req, size_t def) {
  if (!req.has_param("limit")) return def;
  try {
    long v = std::stol(req.get_param_value("limit"));
    return v <= 0 ? def : static_cast<size_t>(std::min<long>(v, 100000));
  } catch (...) {
    return def;
  }
}

void Reply(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(DumpJson(body, 2) + "\n", "application/json");
}

}  // namespace

HttpApi::HttpApi(Daemon* daemon, std::string token) : daemon_(daemon), token_(std::move(token)) {}

HttpApi::~HttpApi() { Stop(); }

Status HttpApi::Start(const std::string& host, int port) {
  server_ = std::make_unique<httplib::Server>();
  auto& s = *server_;
  s.Get("/healthz", [this](const httplib::Request&, httplib::Response& res) {
    Daemon::Health h = daemon_->GetHealth();
    json j = {{"ok", h.ok},          {"paused", h.paused},         {"last_error", h.last_error},
              {"last_cycle", TimeJson(h.last_cycle)}, {"cycles", h.cycles}, {"nodes_up", h.nodes_up},
              {"nodes_total", h.nodes_total}, {"events", h.events}};
    j["energy"] = {{"policy", h.energy.empty() ? json(nullptr) : json(h.energy)},
                   {"nodes_powered_down", h.nodes_powered_down}, {"nodes_booting", h.nodes_booting},
                   {"failed_resumes", h.failed_resumes}};
    Reply(res, h.ok ? 200 : 503, j);
  });
  s.Get("/api/v1/queue", [this](const httplib::Request& req, httplib::Response& res) {
    json arr = json::array();
    for (const QueueEntry& e : daemon_->Queue(LimitParam(req, 1000))) {
      json where = json::array();
      for (const auto& n : e.where) where.push_back({{"node", n.node}, {"gpus", n.gpus}});
      arr.push_back({{"job", e.job}, {"phase", std::string(JobStateName(e.state))}, {"gpus", e.gpus}, {"nodes", e.nodes},
                     {"submit", TimeJson(e.submit)}, {"position", e.position < 0 ? json(nullptr) : json(e.position)},
                     {"why", e.why}, {"predicted_start", TimeJson(e.predicted_start)},
                     {"prediction", e.prediction.empty() ? json(nullptr) : json(std::string(e.prediction))}, {"where", where},
                     {"estimate_s", e.estimate < 0 ? json(nullptr) : json(e.estimate)},
                     {"estimate_source", std::string(SourceName(e.estimate_source))}, {"progress", ProgressJson(e)},
                     {"failure", e.failure.job == 0 ? json(nullptr) : FailureJson(e.failure)},
                     {"input_error", e.input_error.empty() ? json(nullptr) : json(e.input_error)}});
    }
    Reply(res, 200, arr);
  });
  s.Get("/api/v1/decisions", [this](const httplib::Request& req, httplib::Response& res) {
    json arr = json::array();
    for (const JournalDecision& d : daemon_->RecentDecisions(LimitParam(req, 100))) arr.push_back(DecisionJson(d));
    Reply(res, 200, arr);
  });
  s.Get("/api/v1/failures", [this](const httplib::Request& req, httplib::Response& res) {
    json arr = json::array();
    for (const FailureRecord& f : daemon_->Failures(LimitParam(req, 100))) arr.push_back(FailureJson(f));
    Reply(res, 200, arr);
  });
  s.Get("/api/v1/drains", [this](const httplib::Request&, httplib::Response& res) {
    json arr = json::array();
    for (const JournalDecision& d : daemon_->Drains()) arr.push_back(DecisionJson(d));
    Reply(res, 200, arr);
  });
  s.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(daemon_->MetricsText(), "text/plain; version=0.0.4");
  });
  auto guarded = [this](std::function<void(const httplib::Request&, httplib::Response&)> f) {
    return [this, f](const httplib::Request& req, httplib::Response& res) {
      if (token_.empty()) {
        Reply(res, 403, {{"error", "mutating endpoints are disabled: no [http] token in the config"}});
        return;
      }
      if (!TokenOk(token_, req)) {
        res.set_header("WWW-Authenticate", "Bearer");
        Reply(res, 401, {{"error", "missing or wrong bearer token"}});
        return;
      }
      f(req, res);
    };
  };
  s.Post("/api/v1/pause", guarded([this](const httplib::Request&, httplib::Response& res) {
    daemon_->SetPaused(true);
    Reply(res, 200, {{"paused", true}});
  }));
  s.Post("/api/v1/resume", guarded([this](const httplib::Request&, httplib::Response& res) {
    daemon_->SetPaused(false);
    Reply(res, 200, {{"paused", false}});
  }));
  s.Post(R"(/api/v1/nodes/([A-Za-z0-9._-]+)/(power-down|power-up))",
         guarded([this](const httplib::Request& req, httplib::Response& res) {
           std::string node = req.matches[1], action = req.matches[2];
           Status st = daemon_->RequestPower(node, action == "power-up");
           if (!st.ok()) {
             Reply(res, 400, {{"error", st.error().message}});
             return;
           }
           Reply(res, 202, {{"node", node}, {"action", action}, {"state", "planned"}});
         }));
  s.Post(R"(/api/v1/drains/([A-Za-z0-9._-]+)/(confirm|release))",
         guarded([this](const httplib::Request& req, httplib::Response& res) {
           std::string node = req.matches[1], action = req.matches[2];
           Status st = action == "confirm" ? daemon_->ConfirmDrain(node) : daemon_->ReleaseDrain(node);
           if (!st.ok()) {
             Reply(res, st.error().code == ErrorCode::kNotFound ? 404 : 500, {{"error", st.error().message}});
             return;
           }
           Reply(res, 202, {{"node", node}, {"action", action}, {"state", "planned"}});
         }));
  if (port == 0) {
    port_ = s.bind_to_any_port(host.c_str());
    if (port_ <= 0) return MakeError("http: cannot bind " + host + " (any port)", kExitRuntime);
  } else {
    if (!s.bind_to_port(host.c_str(), port))
      return MakeError("http: cannot listen on " + host + ":" + std::to_string(port) + " (address in use or not local?)",
                       kExitRuntime);
    port_ = port;
  }
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  return Status::Ok();
}

void HttpApi::Stop() {
  if (server_) server_->stop();
  if (thread_.joinable()) thread_.join();
  server_.reset();
}

}  // namespace orrery::live
