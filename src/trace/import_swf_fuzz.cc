// libFuzzer target: the swf importer (see trace/fuzz_import.h for the properties checked).
#include "trace/fuzz_import.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return orrery::FuzzImport(orrery::TraceFormat::kSwf, data, size);
}
