#include "server/http/http_limits.h"

#include <charconv>
#include <cstdint>

namespace zstore::server {

std::size_t body_limit(std::string_view method, std::string_view path) {
  return method == "POST" && path == "/admin/checkpoint" ? kMaxFormBytes : 0;
}

std::optional<BodyRefusal> refuse_body(std::string_view method, std::string_view path,
                                       const std::string* content_length, bool has_transfer_encoding) {
  std::size_t limit = body_limit(method, path);
  if (has_transfer_encoding) {
    return BodyRefusal{411, "a body needs Content-Length (Transfer-Encoding is not accepted)"};
  }
  if (content_length == nullptr) {
    if (method == "POST" || method == "PUT" || method == "PATCH" || method == "PRI") {
      return BodyRefusal{411, "a " + std::string(method) + " needs Content-Length"};
    }
    return std::nullopt;
  }
  std::uint64_t length = 0;
  const char* end = content_length->data() + content_length->size();
  auto [ptr, ec] = std::from_chars(content_length->data(), end, length);
  if (content_length->empty() || ec != std::errc() || ptr != end) {
    return BodyRefusal{400, "Content-Length is not a number of bytes"};
  }
  if (length > limit) {
    return BodyRefusal{413, "a body of " + std::to_string(length) + " bytes; " + std::string(method) + " " +
                                std::string(path) + " takes at most " + std::to_string(limit)};
  }
  return std::nullopt;
}

}  // namespace zstore::server
