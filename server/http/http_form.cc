#include "server/http/http_form.h"

#include <algorithm>

namespace zstore::server {
namespace {

int hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string decode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '+') {
      out.push_back(' ');
    } else if (c == '%' && i + 2 < text.size() && hex(text[i + 1]) >= 0 && hex(text[i + 2]) >= 0) {
      out.push_back(static_cast<char>(hex(text[i + 1]) * 16 + hex(text[i + 2])));
      i += 2;
    } else {
      out.push_back(c);
    }
  }
  return out;
}

}  // namespace

std::optional<std::string> form_value(std::string_view form, std::string_view name) {
  while (!form.empty()) {
    std::string_view field = form.substr(0, form.find('&'));
    form.remove_prefix(std::min(form.size(), field.size() + 1));
    std::string_view key = field.substr(0, field.find('='));
    if (decode(key) != name) continue;
    return key.size() < field.size() ? decode(field.substr(key.size() + 1)) : std::string();
  }
  return std::nullopt;
}

}  // namespace zstore::server
