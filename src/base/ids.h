// Strong integer ids: JobId, NodeId, VcId ... are distinct types that cannot be
// mixed up, cost nothing at run time, and index dense arrays.
#pragma once

#include <compare>
#include <cstdint>
#include <functional>
#include <limits>

namespace orrery {

template <class Tag, class Rep = uint32_t>
struct Id {
  using rep_type = Rep;
  static constexpr Rep kInvalid = std::numeric_limits<Rep>::max();
  Rep v = kInvalid;

  constexpr Id() = default;
  constexpr explicit Id(Rep value) : v(value) {}
  constexpr bool valid() const { return v != kInvalid; }
  constexpr Rep value() const { return v; }
  friend constexpr auto operator<=>(Id, Id) = default;
};

struct JobTag;
struct NodeTag;
struct VcTag;
struct UserTag;
struct NameTag;
struct GpuTypeTag;

using JobId = Id<JobTag, uint32_t>;       // dense index of a job in its Trace (0..n-1)
using NodeId = Id<NodeTag, uint32_t>;     // dense index of a node in its Cluster
using VcId = Id<VcTag, uint16_t>;         // virtual cluster / partition
using UserId = Id<UserTag, uint32_t>;     // interned user name
using NameId = Id<NameTag, uint32_t>;     // interned job name
using GpuTypeId = Id<GpuTypeTag, uint8_t>;  // interned GPU model (at most 32 per trace/cluster)

}  // namespace orrery

template <class Tag, class Rep>
struct std::hash<orrery::Id<Tag, Rep>> {
  size_t operator()(orrery::Id<Tag, Rep> id) const noexcept { return std::hash<Rep>()(id.v); }
};
