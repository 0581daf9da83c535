// ChpEpochs: the history of a CHP map as a list of epochs. An epoch is the
// run of sequences one active server published: it starts after `base` and
// its last applied sequence is `last`. Two members of a pair compare their
// lists to find the last sequence up to which they applied the same
// history (common_point); what one has past that point the other lacks.
//
// A new epoch's base is a hybrid clock: the larger of everything already
// known (own and peer's last sequence) and the wall clock, in milliseconds
// since 2020 shifted left by 22 bits. An active publishing fewer than
// 2^22 updates per millisecond (4 billion/s) never reaches the base of an
// epoch started later, so a member that never heard of its peer's epoch
// still starts above it, as long as the two clocks agree to within the
// time between the peer's takeover and ours (at least the peer timeout).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace zstore::storage {

struct ChpEpoch {
  std::uint64_t base = 0;  // sequences of the epoch are base+1, base+2, ...
  std::uint64_t last = 0;  // the last one applied (== base while empty)
  bool operator==(const ChpEpoch&) const = default;
};
using ChpEpochs = std::vector<ChpEpoch>;

// Lists keep the newest kMaxEpochs; older ones are taken as shared.
inline constexpr std::size_t kMaxEpochs = 32;
// 2020-01-01T00:00:00Z in ms since the Unix epoch.
inline constexpr std::uint64_t kEpochClockOrigin = 1577836800000ull;
inline constexpr unsigned kEpochClockShift = 22;

// The clock part of a new epoch's base; salt (below 2^21) separates the two
// members of a pair starting an epoch in the same millisecond.
std::uint64_t epoch_clock_base(std::uint64_t now_ms, std::uint64_t salt);

// "base:last,base:last,..." (decimal), oldest first.
std::string format_epochs(const ChpEpochs& epochs);
std::optional<ChpEpochs> parse_epochs(std::string_view text);
// The epochs a KTHXBAI's properties name (protocol::chp::kEpochsProperty);
// empty when they name none or are malformed.
ChpEpochs epochs_in_properties(std::string_view properties);

// The last sequence up to which a and b applied the same history: the
// epochs both hold, compared oldest first, agree up to the first epoch
// whose last differs (then the smaller last) or that only one holds.
// 0 when they share no epoch.
std::uint64_t common_point(const ChpEpochs& a, const ChpEpochs& b);

// Whether sequence is a point of this history: some epoch has
// base <= sequence <= last (an epoch's base is the state it started from).
bool contains_sequence(const ChpEpochs& epochs, std::uint64_t sequence);

// How many sequences of these epochs lie above `after`: the updates a
// history holding all of them keeps after that point.
std::uint64_t sequences_after(const ChpEpochs& epochs, std::uint64_t after);

}  // namespace zstore::storage
