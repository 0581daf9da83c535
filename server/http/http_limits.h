// What an HTTP request may carry, judged from its request line and headers
// alone, before its body is read and before any authentication work: none
// of zstored's endpoints needs more than a short form (http_server.h).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace zstore::server {

// POST /admin/checkpoint's form (dir=NAME) may be this long; every other
// request carries no body.
inline constexpr std::size_t kMaxFormBytes = 4096;

// A request's head (request line and headers) may be this long; a longer
// one is answered 431.
inline constexpr std::size_t kMaxHeadBytes = 8192;

// The most body bytes method on path may carry.
std::size_t body_limit(std::string_view method, std::string_view path);

struct BodyRefusal {
  int status;         // 400 bad Content-Length, 411 no length, 413 too large
  std::string error;  // for the JSON body
};

// Why a request with these headers is refused, or nullopt when its body
// (Content-Length bytes, 0 when absent) may be read. content_length: the
// header's value, null when absent. A chunked (any Transfer-Encoding) body
// is refused, and so is a POST, PUT or PATCH without Content-Length (the
// server would read it until the connection ends).
std::optional<BodyRefusal> refuse_body(std::string_view method, std::string_view path,
                                       const std::string* content_length, bool has_transfer_encoding);

}  // namespace zstore::server
