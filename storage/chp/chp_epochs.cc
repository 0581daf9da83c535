#include "storage/chp/chp_epochs.h"

#include <algorithm>
#include <charconv>

#include "protocol/chp_codec.h"

namespace zstore::storage {

std::uint64_t epoch_clock_base(std::uint64_t now_ms, std::uint64_t salt) {
  std::uint64_t since = now_ms > kEpochClockOrigin ? now_ms - kEpochClockOrigin : 0;
  return (since << kEpochClockShift) + salt;
}

std::string format_epochs(const ChpEpochs& epochs) {
  std::string out;
  for (const auto& e : epochs) {
    if (!out.empty()) out += ',';
    out += std::to_string(e.base) + ':' + std::to_string(e.last);
  }
  return out;
}

namespace {

bool parse_u64(std::string_view s, std::uint64_t* out) {
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && end == s.data() + s.size() && !s.empty();
}

}  // namespace

std::optional<ChpEpochs> parse_epochs(std::string_view text) {
  ChpEpochs out;
  bool more = !text.empty();
  while (more) {
    auto comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    more = comma != std::string_view::npos;
    text = more ? text.substr(comma + 1) : std::string_view();
    auto colon = item.find(':');
    ChpEpoch e;
    if (colon == std::string_view::npos || !parse_u64(item.substr(0, colon), &e.base) ||
        !parse_u64(item.substr(colon + 1), &e.last) || e.last < e.base) {
      return std::nullopt;
    }
    if (!out.empty() && e.base <= out.back().base) return std::nullopt;
    if (out.size() == kMaxEpochs) return std::nullopt;
    out.push_back(e);
  }
  return out;
}

ChpEpochs epochs_in_properties(std::string_view properties) {
  auto parsed = protocol::chp::parse_properties(properties);
  if (!parsed) return {};
  for (const auto& [name, value] : *parsed) {
    if (name == protocol::chp::kEpochsProperty) return parse_epochs(value).value_or(ChpEpochs{});
  }
  return {};
}

std::uint64_t common_point(const ChpEpochs& a, const ChpEpochs& b) {
  // Align on the oldest epoch both lists hold (lists are truncated).
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size() && a[i].base != b[j].base) {
    if (a[i].base < b[j].base)
      ++i;
    else
      ++j;
  }
  std::uint64_t common = 0;
  for (; i < a.size() && j < b.size(); ++i, ++j) {
    if (a[i].base != b[j].base) break;  // diverged at the epoch after the last shared
    if (a[i].last != b[j].last) return std::min(a[i].last, b[j].last);
    common = a[i].last;
  }
  return common;
}

bool contains_sequence(const ChpEpochs& epochs, std::uint64_t sequence) {
  for (const auto& e : epochs) {
    if (e.base <= sequence && sequence <= e.last) return true;
  }
  return false;
}

std::uint64_t sequences_after(const ChpEpochs& epochs, std::uint64_t after) {
  std::uint64_t n = 0;
  for (const auto& e : epochs) {
    if (e.last > after) n += e.last - std::max(e.base, after);
  }
  return n;
}

}  // namespace zstore::storage
