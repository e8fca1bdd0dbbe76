#include "plan/registry.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>

#include "base/gpu_names.h"
#include "plan/transfer.h"

namespace orrery::plan {

namespace fs = std::filesystem;

ProfilePaths DefaultProfilePaths() {
  ProfilePaths p;
#ifdef ORRERY_DEFAULT_PROFILE_DIR
  p.profile_dir = ORRERY_DEFAULT_PROFILE_DIR;
#endif
#ifdef ORRERY_DEFAULT_SHARED_DIR
  p.shared_dir = ORRERY_DEFAULT_SHARED_DIR;
#endif
  if (const char* e = std::getenv("ORRERY_PROFILE_DIR")) p.profile_dir = e;
  if (const char* e = std::getenv("ORRERY_SHARED_DIR")) p.shared_dir = e;
  return p;
}

namespace {

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::string Upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::toupper(c); });
  return s;
}

std::string KnownList(const ProfilePaths& paths) {
  std::string names;
  std::error_code ec;
  if (!paths.profile_dir.empty() && fs::is_directory(paths.profile_dir, ec)) {
    std::vector<std::string> found;
    for (const auto& e : fs::directory_iterator(paths.profile_dir, ec)) {
      // infer-*.json are inference profiles (plan/infer.h), not training ones.
      const std::string stem = e.path().stem().string();
      if (e.path().extension() == ".json" && stem.rfind("infer-", 0) != 0) found.push_back(stem);
    }
    std::sort(found.begin(), found.end());
    for (const auto& f : found) names += (names.empty() ? "" : ", ") + f;
  }
  names += std::string(names.empty() ? "" : ", ") + "H200-shared, A100-40, A100-80, V100-16 (transferred from H200)";
  return names;
}

}  // namespace

namespace {

// The planner's profile name of a GPU given in any spelling of base/gpu_names.h (h200, a100-40,
// A100-40G, v100, ...); other names (H200-shared, a profile of data/profiles) as given.
std::string ProfileName(const std::string& name) {
  const std::string_view gpu = CanonicalGpu(name);
  if (gpu == "h200") return "H200";
  if (gpu == "h100") return "H100";
  if (gpu == "a100-40") return "A100-40";
  if (gpu == "a100-80") return "A100-80";
  if (gpu == "v100") return "V100-16";
  return name;
}

}  // namespace

Result<GpuProfile> ResolveGpu(const std::string& given, const ProfilePaths& paths) {
  const std::string name = ProfileName(given);
  const std::string lower = Lower(name);
  const std::string own = paths.profile_dir + "/" + lower + ".json";
  std::error_code ec;
  if (lower != "h200-shared" && !paths.profile_dir.empty() && fs::exists(own, ec)) {
    ORR_ASSIGN_OR_RETURN(GpuProfile p, LoadProfile(own));
    // A profile measured on one GPU has no collectives: take the shared 2-GPU NCCL tables of
    // the same GPU type when they are there.
    const std::string micro = paths.shared_dir + "/gpu-h200/micro";
    if (p.collectives.empty() && lower == "h200" && fs::exists(micro, ec)) {
      Result<GpuProfile> shared = LoadH200Micro(micro);
      if (shared.ok()) p.collectives = shared->collectives;
    }
    return p;
  }
  if (lower == "h200-shared" || lower == "h200") {
    const std::string micro = paths.shared_dir + "/gpu-h200/micro";
    if (fs::exists(micro, ec)) return LoadH200Micro(micro);
  }
  // A100-40, A100-80, V100-16: the project's H200 profile transferred by Sailor's data.
  const std::string sailor = paths.shared_dir + "/sailor-profiles";
  if (const std::string upper = Upper(name); TransferableGpu(upper) && fs::exists(sailor, ec)) {
    ORR_ASSIGN_OR_RETURN(GpuProfile h200, ResolveGpu("H200", paths));
    return TransferProfile(h200, upper, sailor);
  }
  return MakeError("unknown GPU type '" + given + "' (known: " + KnownList(paths) +
                   "; GPU names: " + std::string(kGpuNames) + ", any case; or give a profile file with --profile)");
}

}  // namespace orrery::plan
