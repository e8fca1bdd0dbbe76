// Trace import: every supported input format → model::Trace.
//
// Contract shared by all importers:
//  * Streaming: inputs are read line by line through base/io LineReader (plain or .gz).
//  * Errors: a malformed row fails the whole import with
//      "file:line:col: field 'x': expected ..., got \"...\"" (exit code kExitBadInput),
//    unless ImportOptions::skip_bad_rows, in which case the row is skipped and counted
//    per reason in ImportReport.
//  * Output order: jobs are stable-sorted by submit time (ties keep input order) and
//    numbered 0..n-1 (JobId); the source's own id, if any, is kept in Trace::source_ids.
//  * Time: Trace::epoch_unix is the absolute time of submit == 0 when the source has
//    absolute times; Job::submit/start/end are seconds relative to it.
// The per-format semantics (column mapping, quirks, defined behaviour for duplicate
// ids, negative durations, unsorted rows ...) are documented in docs/formats/.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string_view>
#include <string>
#include <vector>

#include "base/result.h"
#include "model/trace.h"

namespace orrery {

enum class TraceFormat {
  kAuto,        // detect from the header line (LoadTrace only)
  kCanonical,   // Orrery's own format, docs/formats/trace.md
  kHelios,      // Helios cluster_log.csv (+ optional cluster_gpu_number.csv)
  kPhilly,      // Philly job CSV as in the Pollux artifact
  kAlibabaOpenb,  // Alibaba cluster-trace-gpu-v2023 openb pod list
  kSwf,         // Standard Workload Format
  kSacct,       // Slurm sacct --parsable2 output
  kAcme,        // Acme trace_seren.csv / trace_kalos.csv
};

// "canonical", "helios", "philly", "openb", "swf", "sacct", "acme" (and "auto").
Result<TraceFormat> ParseTraceFormat(std::string_view name);
std::string_view TraceFormatName(TraceFormat f);

struct ImportOptions {
  bool skip_bad_rows = false;  // skip malformed rows instead of failing
  // SWF: treat each allocated processor as one GPU (gpus = procs, cpu_milli = 0) instead
  // of a CPU workload (gpus = 0, cpu_milli = procs * 1000), so HPC logs can drive GPU simulations.
  bool swf_procs_as_gpus = false;
};

struct ImportReport {
  uint64_t rows_read = 0;      // data rows seen (excluding header/comments)
  uint64_t jobs_imported = 0;
  uint64_t rows_skipped = 0;
  std::map<std::string, uint64_t> skipped_by_reason;  // reason -> count
  std::vector<std::string> warnings;                  // non-fatal notes (e.g. "input was not sorted")
  uint64_t bytes_read = 0;
};

// Imports one or more inputs of the given format into one Trace. For kHelios the
// optional cluster_gpu_number.csv may be among the inputs (recognised by its header);
// for kAlibabaOpenb only pod lists are jobs (node lists are cluster configs, see config/).
Result<Trace> ImportTrace(TraceFormat format, const std::vector<std::string>& inputs, const ImportOptions& options,
                          ImportReport* report);

// Same as ImportTrace for one in-memory input; `name` stands in for the file name in
// messages (tests, fuzzers). gzip is not decoded here.
Result<Trace> ImportTraceFromString(TraceFormat format, std::string_view data, const std::string& name,
                                    const ImportOptions& options, ImportReport* report);

// Helios cluster_gpu_number.csv ("date,<vc>...,total"): GPUs per VC on `date`
// ("YYYY-MM-DD"); the "total" column is not a VC and is left out.
Result<std::map<std::string, int>> ReadHeliosVcGpus(const std::string& path, const std::string& date);

// Detects the format of `path` from its first non-comment line.
Result<TraceFormat> DetectTraceFormat(const std::string& path);

// Loads a trace in any supported format (kAuto detects). Used by every command that reads a trace.
Result<Trace> LoadTrace(const std::string& path, TraceFormat format = TraceFormat::kAuto,
                        const ImportOptions& options = {}, ImportReport* report = nullptr);

}  // namespace orrery
