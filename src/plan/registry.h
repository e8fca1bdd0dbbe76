// Finds the profile of a GPU type by name: the project's own profiles (data/profiles/<name>.json),
// then the shared H200 micro-profiles (../shared/gpu-h200/micro) for "H200-shared" (and "H200"
// when no own profile exists).
#pragma once

#include <string>

#include "base/result.h"
#include "plan/profile.h"

namespace orrery::plan {

struct ProfilePaths {
  std::string profile_dir;  // data/profiles of the source tree unless overridden
  std::string shared_dir;   // ../shared
};

// Paths from ORRERY_PROFILE_DIR / ORRERY_SHARED_DIR (environment), else the build's defaults.
ProfilePaths DefaultProfilePaths();

Result<GpuProfile> ResolveGpu(const std::string& name, const ProfilePaths& paths);

}  // namespace orrery::plan
