// CURVE key pairs, ZeroMQ certificate files and allow lists (see curve_keys.hpp).
#include "eit/sinks/curve_keys.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>
#include <zmq.h>

namespace eit::sinks {
namespace {

namespace fs = std::filesystem;

std::string trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string_view::npos) return {};
  const auto e = s.find_last_not_of(" \t\r");
  return std::string(s.substr(b, e - b + 1));
}

// `name = "value"` (ZPL, as zcert writes it) or `name = value`; nullopt when the line is not it.
std::optional<std::string> zpl_value(const std::string& line, std::string_view name) {
  const std::string t = trim(line);
  if (!t.starts_with(name)) return std::nullopt;
  std::string_view rest = std::string_view(t).substr(name.size());
  const auto eq = rest.find_first_not_of(" \t");
  if (eq == std::string_view::npos || rest[eq] != '=') return std::nullopt;
  std::string value = trim(rest.substr(eq + 1));
  if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') &&
      value.back() == value.front())
    value = value.substr(1, value.size() - 2);
  return value;
}

std::string read_text(const fs::path& path, std::string_view what) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw std::runtime_error(
        fmt::format("{} '{}': cannot read ({}); expected a ZeroMQ CURVE "
                    "certificate (eitstream keygen writes them)",
                    what, path.string(), std::strerror(errno)));
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string header(std::string_view kind) {
  const std::time_t now = std::time(nullptr);
  char when[32];
  std::strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", std::gmtime(&now));
  return fmt::format("#   ****  Generated on {} UTC by eitstream keygen  ****\n#   {}\n", when,
                     kind);
}

void write_file(const fs::path& path, const std::string& text, mode_t mode, bool overwrite) {
  const int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (overwrite ? O_TRUNC : O_EXCL);
  const int fd = ::open(path.c_str(), flags, mode);
  if (fd < 0)
    throw std::runtime_error(
        fmt::format("keygen: cannot create '{}' ({}){}", path.string(), std::strerror(errno),
                    errno == EEXIST ? "; expected a new file (--force overwrites)" : ""));
  const bool ok = ::fchmod(fd, mode) == 0 &&
                  ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  const int err = errno;
  ::close(fd);
  if (!ok)
    throw std::runtime_error(
        fmt::format("keygen: cannot write '{}' ({})", path.string(), std::strerror(err)));
}

void add_keys_from(const fs::path& path, std::vector<std::string>& keys) {
  const std::string text = read_text(path, "--curve-allow");
  std::istringstream lines(text);
  std::string line;
  size_t found = 0, n = 0;
  while (std::getline(lines, line)) {
    ++n;
    std::string key;
    if (auto v = zpl_value(line, "public-key")) {
      key = *v;
    } else {
      const std::string t = trim(line);
      if (zpl_value(line, "secret-key"))
        throw std::runtime_error(
            fmt::format("--curve-allow '{}': line {} holds a secret key; expected public keys only "
                        "(give the client's public certificate, not NAME_secret)",
                        path.string(), n));
      // Comments and certificate structure (sections, other metadata `name = value`); a bare
      // key is one word of 40 characters.
      const bool word = t.find_first_of(" \t") == std::string::npos;
      const bool bare_key = word && is_z85_key(t);
      if (!bare_key && (t.empty() || t.starts_with('#') || t == "metadata" || t == "curve" ||
                        t.find('=') != std::string::npos))
        continue;
      key = t;
    }
    if (!is_z85_key(key))
      throw std::runtime_error(fmt::format(
          "--curve-allow '{}': line {}: '{}' is not a CURVE public key; expected 40 z85 "
          "characters",
          path.string(), n, key));
    keys.push_back(key);
    ++found;
  }
  if (found == 0)
    throw std::runtime_error(fmt::format(
        "--curve-allow '{}': no public key found; expected a certificate from eitstream keygen "
        "or one z85 key a line",
        path.string()));
}

}  // namespace

void require_curve_support() {
  if (!zmq_has("curve"))
    throw std::runtime_error(
        "CURVE: this libzmq was built without CURVE (libsodium); expected a libzmq with "
        "zmq_has(\"curve\")");
}

bool is_z85_key(const std::string& text) {
  if (text.size() != 40) return false;
  uint8_t bytes[32];
  return zmq_z85_decode(bytes, text.c_str()) != nullptr;
}

CurveKeyPair generate_curve_keypair() {
  require_curve_support();
  char pub[41], sec[41];
  if (zmq_curve_keypair(pub, sec) != 0)
    throw std::runtime_error(
        fmt::format("keygen: zmq_curve_keypair failed ({})", zmq_strerror(zmq_errno())));
  return {pub, sec};
}

void write_curve_certificates(const fs::path& public_path, const CurveKeyPair& keys,
                              bool overwrite) {
  const fs::path secret_path = public_path.string() + "_secret";
  write_file(secret_path,
             header("ZeroMQ CURVE **Secret** Certificate") +
                 "#   DO NOT PROVIDE THIS FILE TO OTHER USERS nor change its permissions.\n\n"
                 "metadata\ncurve\n" +
                 fmt::format("    public-key = \"{}\"\n    secret-key = \"{}\"\n", keys.public_z85,
                             keys.secret_z85),
             0600, overwrite);
  write_file(public_path,
             header("ZeroMQ CURVE Public Certificate") +
                 "#   Exchange securely, or use a secure mechanism to verify the contents\n"
                 "#   of this file after exchange.\n\nmetadata\ncurve\n" +
                 fmt::format("    public-key = \"{}\"\n", keys.public_z85),
             0644, overwrite);
}

CurveKeyPair read_curve_certificate(const fs::path& path, bool need_secret) {
  const std::string what = need_secret ? "CURVE secret certificate" : "CURVE certificate";
  const std::string text = read_text(path, what);
  if (need_secret) {
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && (st.st_mode & 077) != 0)
      throw std::runtime_error(
          fmt::format("{} '{}': mode {:o} lets other users read the secret key; expected 0600 "
                      "(chmod 600 '{}')",
                      what, path.string(), st.st_mode & 0777, path.string()));
  }
  CurveKeyPair keys;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (auto v = zpl_value(line, "public-key")) keys.public_z85 = *v;
    if (auto v = zpl_value(line, "secret-key")) keys.secret_z85 = *v;
  }
  if (!is_z85_key(keys.public_z85))
    throw std::runtime_error(
        fmt::format("{} '{}': field public-key is '{}'; expected 40 z85 characters", what,
                    path.string(), keys.public_z85));
  if (need_secret && !is_z85_key(keys.secret_z85))
    throw std::runtime_error(fmt::format(
        "{} '{}': field secret-key is {}; expected 40 z85 characters (the NAME_secret file "
        "eitstream keygen writes)",
        what, path.string(), keys.secret_z85.empty() ? "missing" : "malformed"));
  if (need_secret) {
    char derived[41];
    if (zmq_curve_public(derived, keys.secret_z85.c_str()) != 0 || keys.public_z85 != derived)
      throw std::runtime_error(
          fmt::format("{} '{}': public-key does not belong to secret-key; expected a matching "
                      "pair",
                      what, path.string()));
  }
  return keys;
}

std::vector<std::string> read_curve_allow_list(const fs::path& path) {
  std::vector<std::string> keys;
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    for (const auto& entry : fs::directory_iterator(path)) {
      if (!entry.is_regular_file() || entry.path().filename().string().ends_with("_secret") ||
          entry.path().filename().string().starts_with("."))
        continue;
      add_keys_from(entry.path(), keys);
    }
    if (keys.empty())
      throw std::runtime_error(fmt::format(
          "--curve-allow '{}': the folder holds no public certificate; expected the clients' "
          "public certificates (eitstream keygen)",
          path.string()));
  } else {
    add_keys_from(path, keys);
  }
  return keys;
}

void apply_curve_server(zmq::socket_t& socket, const CurveKeyPair& server) {
  require_curve_support();
  socket.set(zmq::sockopt::curve_server, 1);
  socket.set(zmq::sockopt::curve_secretkey, server.secret_z85);
  // Every connection is checked by the ZAP handler (when one is bound on the context).
  socket.set(zmq::sockopt::zap_domain, std::string("eitstream"));
}

void apply_curve_client(zmq::socket_t& socket, const std::string& server_public_z85,
                        const CurveKeyPair& client) {
  require_curve_support();
  socket.set(zmq::sockopt::curve_serverkey, server_public_z85);
  socket.set(zmq::sockopt::curve_publickey, client.public_z85);
  socket.set(zmq::sockopt::curve_secretkey, client.secret_z85);
}

}  // namespace eit::sinks
