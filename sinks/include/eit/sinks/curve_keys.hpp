#pragma once
// ZeroMQ CURVE keys for eitstream's sockets (docs/security.md).
//
// Key pairs live in ZeroMQ's certificate files (the z85 text format CZMQ's zcert writes and
// reads): `NAME` holds the public key only and may be handed out; `NAME_secret` holds the public
// and the secret key and is created with mode 0600. An allow list is a certificate file, a text
// file of z85 public keys (one a line, '#' comments), or a folder of either (every regular file
// not ending in `_secret`).
//
// Set-up only (allocates, reads files): errors throw std::runtime_error naming the file, the
// field, what was found and what was expected. apply_* set socket options and must be called
// before bind/connect.
#include <filesystem>
#include <string>
#include <vector>

#include <zmq.hpp>

namespace eit::sinks {

struct CurveKeyPair {
  std::string public_z85;  // 40 z85 characters (32 bytes)
  std::string secret_z85;  // 40 z85 characters; empty for a public certificate
};

// Throws when the libzmq in use was built without CURVE (libsodium).
void require_curve_support();

// A fresh key pair (zmq_curve_keypair).
CurveKeyPair generate_curve_keypair();

// Writes `public_path` (public key) and `public_path` + "_secret" (both keys, mode 0600). Refuses
// to overwrite existing files unless `overwrite`.
void write_curve_certificates(const std::filesystem::path& public_path, const CurveKeyPair& keys,
                              bool overwrite = false);

// Reads a certificate; `need_secret`: the file must hold a secret key (and must not be readable
// by group or others).
CurveKeyPair read_curve_certificate(const std::filesystem::path& path, bool need_secret);

// The allowed client public keys (z85) from a certificate, a key list or a folder of them.
std::vector<std::string> read_curve_allow_list(const std::filesystem::path& path);

// True for 40 z85 characters that decode to 32 bytes.
bool is_z85_key(const std::string& text);

// The server side: this socket accepts CURVE clients only (and, with a ZapAuthenticator on the
// socket's context, only the allowed ones).
void apply_curve_server(zmq::socket_t& socket, const CurveKeyPair& server);

// The client side: `server_public` is the server's public key, `client` the client's own pair.
void apply_curve_client(zmq::socket_t& socket, const std::string& server_public_z85,
                        const CurveKeyPair& client);

}  // namespace eit::sinks
