// The daemon's HTTP API (cpp-httplib), on 127.0.0.1 unless configured otherwise:
//   GET  /healthz                 200 when the last cycle succeeded, else 503 (JSON)
//   GET  /api/v1/queue?limit=N    jobs with phase, queue position, why pending, predicted start
//   GET  /api/v1/decisions?limit=N  recent decisions from the journal
//   GET  /metrics                 Prometheus text format
//   POST /api/v1/pause | /api/v1/resume                 stop / resume making decisions
//   POST /api/v1/nodes/NAME/power-down | power-up       journaled power actions
//   GET  /api/v1/failures?limit=N  failed/hung jobs handled: diagnosis and what was done
//   GET  /api/v1/drains            drains awaiting confirmation, then the last day's
//   POST /api/v1/drains/NAME/confirm | release          an awaiting drain applied / dropped
//                                  (release also returns a drained node to service)
// POST endpoints need "Authorization: Bearer TOKEN" (the config's token); without a
// configured token they are refused (403).
#pragma once

#include <memory>
#include <string>
#include <thread>

#include "base/result.h"
#include "live/daemon.h"

namespace httplib {
class Server;
}

namespace orrery::live {

class HttpApi {
 public:
  HttpApi(Daemon* daemon, std::string token);
  ~HttpApi();
  // Binds and serves on a background thread; port 0 picks a free port (see port()).
  Status Start(const std::string& host, int port);
  void Stop();
  int port() const { return port_; }

 private:
  Daemon* daemon_;
  std::string token_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
};

}  // namespace orrery::live
