#include "security/curve_cert.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zmq.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace zstore::security {
namespace {

constexpr std::size_t kZ85KeySize = 40;

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// `name = "value"` (or 'value', or bare) -> value; nullopt if not that name.
std::optional<std::string_view> value_of(std::string_view line, std::string_view name) {
  if (line.substr(0, name.size()) != name) return std::nullopt;
  auto rest = trim(line.substr(name.size()));
  if (rest.empty() || rest.front() != '=') return std::nullopt;
  rest = trim(rest.substr(1));
  if (rest.size() >= 2 && (rest.front() == '"' || rest.front() == '\'') && rest.back() == rest.front()) {
    rest = rest.substr(1, rest.size() - 2);
  }
  return rest;
}

std::string banner(const char* kind) {
  auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char when[32];
  std::tm tm{};
  gmtime_r(&now, &tm);
  std::strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
  return std::string("#   ****  Generated on ") + when + " UTC by zstore-cli keygen  ****\n#   ZeroMQ CURVE " + kind +
         " Certificate\n";
}

// Creates path with mode, failing if it exists; returns an error text.
std::string write_new_file(const std::string& path, const std::string& text, mode_t mode) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) return path + ": " + std::strerror(errno);
  (void)::fchmod(fd, mode);  // exactly mode, whatever the umask
  bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ok = ::fsync(fd) == 0 && ok;
  ok = ::close(fd) == 0 && ok;
  return ok ? std::string() : path + ": write failed: " + std::strerror(errno);
}

}  // namespace

std::optional<std::string> decode_key(std::string_view z85) {
  if (z85.size() != kZ85KeySize) return std::nullopt;
  std::string text(z85);
  std::string raw(32, '\0');
  if (!zmq_z85_decode(reinterpret_cast<std::uint8_t*>(raw.data()), text.c_str())) return std::nullopt;
  return raw;
}

std::string encode_key(std::string_view raw32) {
  char out[kZ85KeySize + 1];
  zmq_z85_encode(out, reinterpret_cast<const std::uint8_t*>(raw32.data()), 32);
  return std::string(out, kZ85KeySize);
}

CertResult parse_cert(std::string_view text) {
  CurveCert cert;
  bool has_public = false, has_secret = false;
  std::istringstream in{std::string(text)};
  for (std::string raw; std::getline(in, raw);) {
    auto line = trim(raw);
    if (line.empty() || line.front() == '#') continue;
    if (auto v = value_of(line, "public-key")) cert.public_key = *v, has_public = true;
    if (auto v = value_of(line, "secret-key")) cert.secret_key = *v, has_secret = true;
  }
  if (!has_public) return {std::nullopt, "no public-key line"};
  if (!decode_key(cert.public_key)) return {std::nullopt, "public-key is not a 40-character Z85 key"};
  if (!has_secret) return {cert, {}};
  if (!decode_key(cert.secret_key)) return {std::nullopt, "secret-key is not a 40-character Z85 key"};
  char derived[kZ85KeySize + 1];
  if (zmq_curve_public(derived, cert.secret_key.c_str()) != 0 || cert.public_key != derived) {
    return {std::nullopt, "secret-key does not belong to public-key"};
  }
  return {cert, {}};
}

CertResult load_cert(const std::string& path, bool need_secret) {
  std::ifstream in(path);
  if (!in) return {std::nullopt, "cannot read certificate " + path + ": " + std::strerror(errno)};
  std::stringstream ss;
  ss << in.rdbuf();
  auto r = parse_cert(ss.str());
  if (!r.cert) return {std::nullopt, "bad certificate " + path + ": " + r.error};
  if (need_secret && r.cert->secret_key.empty()) {
    return {std::nullopt, "certificate " + path + " has no secret-key (give the NAME.key_secret file)"};
  }
  return r;
}

CurveCert generate_cert() {
  char pub[kZ85KeySize + 1], sec[kZ85KeySize + 1];
  if (zmq_curve_keypair(pub, sec) != 0) return {};
  return {pub, sec};
}

std::string format_public_cert(const CurveCert& cert) {
  return banner("Public") +
         "#   Exchange securely, or use a secure mechanism to verify the contents\n"
         "#   of this file after exchange.\n\nmetadata\ncurve\n    public-key = \"" +
         cert.public_key + "\"\n";
}

std::string format_secret_cert(const CurveCert& cert) {
  return banner("**Secret**") +
         "#   DO NOT PROVIDE THIS FILE TO OTHER USERS nor change its permissions.\n\nmetadata\ncurve\n"
         "    public-key = \"" +
         cert.public_key + "\"\n    secret-key = \"" + cert.secret_key + "\"\n";
}

std::string save_cert(const CurveCert& cert, const std::string& dir, const std::string& name) {
  if (!valid_cert_name(name))
    return "bad certificate name '" + name + "': use 1-64 of A-Z a-z 0-9 _ . - (no leading .)";
  if (cert.public_key.empty() || cert.secret_key.empty())
    return "no CURVE support in libzmq (zmq_curve_keypair failed)";
  auto base = (std::filesystem::path(dir) / name).string();
  for (const char* ext : {".key", ".key_secret"}) {
    if (std::filesystem::exists(base + ext)) return base + ext + " exists; not overwriting it";
  }
  if (auto e = write_new_file(base + ".key", format_public_cert(cert), 0644); !e.empty()) return e;
  return write_new_file(base + ".key_secret", format_secret_cert(cert), 0600);
}

bool valid_cert_name(std::string_view name) {
  if (name.empty() || name.size() > 64 || name.front() == '.') return false;
  for (char c : name) {
    bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
    if (!ok) return false;
  }
  return true;
}

}  // namespace zstore::security
