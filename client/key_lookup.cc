#include "client/key_lookup.h"

#include <stdexcept>

#include "client/one_shot_snapshot.h"

namespace zstore::client {

KeyLookup lookup_key(const Options& options, std::string_view key, std::chrono::milliseconds timeout) {
  if (key.empty()) throw std::invalid_argument("lookup_key: empty key");
  if (options.servers.empty()) throw std::invalid_argument("lookup_key: no server");
  KeyLookup out;
  auto on_entry = [&](protocol::chp::KvMsg&& entry) {
    if (entry.key != key || entry.body.empty()) return true;
    out.value = std::move(entry.body);
    out.sequence = entry.sequence;
    return false;  // found: the rest of the subtree is not needed
  };
  auto got = one_shot_snapshot(options, key, timeout, on_entry, [] {});
  switch (got.result) {
    case OneShotSnapshot::Result::kStopped:
      out.result = KeyLookup::Result::kFound;
      break;
    case OneShotSnapshot::Result::kComplete:
      out.result = KeyLookup::Result::kAbsent;
      break;
    case OneShotSnapshot::Result::kHandshakeFailed:
      out.result = KeyLookup::Result::kHandshakeFailed;
      break;
    case OneShotSnapshot::Result::kNoAnswer:
      out.result = KeyLookup::Result::kNoAnswer;
      break;
  }
  out.error = std::move(got.error);
  out.server = std::move(got.server);
  return out;
}

}  // namespace zstore::client
