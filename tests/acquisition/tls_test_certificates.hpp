#pragma once
// Test certificates made by the openssl command: two CAs, "ward" and "other"; a server
// certificate (CN=server), a device certificate and a second one ("rogue_ward", to revoke) from
// "ward", a rogue device from "other".
// Returns the folder (NAME.pem, NAME.key), or an empty path when openssl is not available;
// TlsTestCertificates holds them for one test.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

#include <doctest/doctest.h>
#include <fmt/format.h>

namespace eit::test {

inline bool tls_sh(const std::string& cmd) {
  return std::system(("{ " + cmd + "; } >/dev/null 2>&1").c_str()) == 0;
}

inline std::filesystem::path make_tls_certificates() {
  namespace fs = std::filesystem;
  static int serial = 0;
  const fs::path d =
      fs::temp_directory_path() / fmt::format("eit-tls-{}-{}", getpid(), ++serial);
  fs::remove_all(d);
  fs::create_directories(d);
  const std::string in = "cd '" + d.string() + "' && ";
  auto ca = [&](const char* name) {
    return tls_sh(in + fmt::format("openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 "
                               "-nodes -days 2 -subj /CN={0} "
                               "-keyout {0}.key -out {0}.pem",
                               name));
  };
  auto leaf = [&](const char* name, const char* by) {
    return tls_sh(in + fmt::format("openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 "
                               "-nodes -subj /CN={0} -keyout {0}.key "
                               "-out {0}.csr && openssl x509 -req -in {0}.csr -CA {1}.pem -CAkey "
                               "{1}.key -CAcreateserial -days 2 -out {0}.pem",
                               name, by));
  };
  if (!(ca("ward") && ca("other") && leaf("server", "ward") && leaf("device", "ward") &&
        leaf("rogue", "other") && leaf("rogue_ward", "ward")))
    return {};
  return d;
}

// Revokes NAME.pem (issued by "ward") and writes ward's CRL to ward-crl.pem (openssl ca).
inline bool revoke_tls_certificate(const std::filesystem::path& d, const char* name) {
  const std::string in = "cd '" + d.string() + "' && ";
  return tls_sh(in + "touch index.txt && printf '[ca]\\ndefault_ca = w\\n[w]\\ndatabase = "
                     "index.txt\\ndefault_md = sha256\\ndefault_crl_days = 2\\n' > ca.cnf") &&
         tls_sh(in + fmt::format("openssl ca -config ca.cnf -keyfile ward.key -cert ward.pem "
                                 "-revoke {}.pem",
                                 name)) &&
         tls_sh(in + "openssl ca -config ca.cnf -keyfile ward.key -cert ward.pem -gencrl -out "
                     "ward-crl.pem");
}

// make_tls_certificates()' folder for one test, removed with the object; none without openssl,
// and then missing() says what the test skips.
class TlsTestCertificates {
 public:
  TlsTestCertificates() = default;
  TlsTestCertificates(const TlsTestCertificates&) = delete;
  TlsTestCertificates& operator=(const TlsTestCertificates&) = delete;
  ~TlsTestCertificates() {
    std::error_code ec;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
  }

  // True when there are none; says so, and that the test (or `part` of it) is skipped.
  bool missing(const char* part = nullptr) const {
    if (dir_.empty())
      MESSAGE(
          fmt::format("SKIPPED{}: the openssl command is not available to make test "
                      "certificates",
                      part ? fmt::format(" ({})", part) : ""));
    return dir_.empty();
  }
  const std::filesystem::path& dir() const { return dir_; }
  // The path of file `name` ("server.pem", "ward.pem", …).
  std::string operator()(const char* name) const { return (dir_ / name).string(); }
  // A tls-listen:// URI on an ephemeral loopback port that presents the server's certificate.
  std::string server_listen_uri() const {
    return fmt::format("tls-listen://127.0.0.1:0?cert={}&key={}", (*this)("server.pem"),
                       (*this)("server.key"));
  }

 private:
  const std::filesystem::path dir_ = make_tls_certificates();
};

}  // namespace eit::test
