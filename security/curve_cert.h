// CURVE certificates (rfc 26 keys) in ZeroMQ's certificate file format, the
// text that czmq's zcert_save and pyzmq's zmq.auth.create_certificates write:
// `NAME.key` holds the public key, `NAME.key_secret` both keys (mode 0600),
// each as `public-key = "Z85"` / `secret-key = "Z85"` lines of a `curve`
// section, with `#` comment lines and a `metadata` section that we ignore.
// Keys are kept Z85-encoded (40 characters for 32 bytes). No sockets here;
// functions are thread-safe and report errors as text naming the file.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace zstore::security {

struct CurveCert {
  std::string public_key;  // Z85, 40 characters
  std::string secret_key;  // Z85, 40 characters; empty in a public certificate
};

struct CertResult {
  std::optional<CurveCert> cert;  // set on success
  std::string error;              // why not, otherwise
};

// Parses certificate text. Fails on a missing or malformed public key, a
// malformed secret key, or a secret key whose public key is another.
CertResult parse_cert(std::string_view text);

// Reads and parses a certificate file; errors name the path. With
// need_secret, a file without a secret key is an error too.
CertResult load_cert(const std::string& path, bool need_secret);

// A fresh key pair (libsodium through libzmq's zmq_curve_keypair).
CurveCert generate_cert();

// The file texts: the public certificate, and the secret one.
std::string format_public_cert(const CurveCert& cert);
std::string format_secret_cert(const CurveCert& cert);

// Writes DIR/NAME.key and DIR/NAME.key_secret (0600), refusing to overwrite
// either. Returns an error text, or empty on success.
std::string save_cert(const CurveCert& cert, const std::string& dir, const std::string& name);

// Whether NAME can name a client (a file stem): 1-64 of [A-Za-z0-9_.-],
// not starting with '.'.
bool valid_cert_name(std::string_view name);

// The 32 raw bytes of a Z85 key, or nullopt if it is not one.
std::optional<std::string> decode_key(std::string_view z85);
// The Z85 text of 32 raw bytes.
std::string encode_key(std::string_view raw32);

}  // namespace zstore::security
