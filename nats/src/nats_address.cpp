// Parsing of NATS URIs and subject names (see nats_address.hpp).
#include "eit/nats/nats_address.hpp"

#include <charconv>
#include <cmath>
#include <initializer_list>
#include <optional>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

namespace eit::nats {
namespace {

bool valid_token(std::string_view t) noexcept {
  if (t.empty()) return false;
  for (char c : t) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '_';
    if (!ok) return false;
  }
  return true;
}

Since since_value(std::string_view uri, std::string_view v) {
  if (v == "all") return {Since::Kind::kAll};
  if (v == "new") return {Since::Kind::kNew};
  double seconds = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), seconds);
  if (v.empty() || ec != std::errc{} || end != v.data() + v.size() || !(seconds > 0) ||
      !std::isfinite(seconds))
    throw std::invalid_argument(
        fmt::format("'{}': since={} is not 'all', 'new' or seconds since the epoch", uri, v));
  // Nanoseconds in an int64 end in 2262: a larger value is most likely milliseconds.
  if (seconds > kMaxSinceSeconds)
    throw std::invalid_argument(fmt::format(
        "'{}': since={} is after the year 2262 in seconds since the epoch (milliseconds?)", uri,
        v));
  return {Since::Kind::kTime, static_cast<int64_t>(seconds * 1e9)};
}

// The value of the URI's first `key=`, nullopt when it has none.
std::optional<std::string_view> uri_option(std::string_view uri, std::string_view key) {
  const auto q = uri.find('?');
  if (q == std::string_view::npos) return std::nullopt;
  for (std::string_view query = uri.substr(q + 1); !query.empty();) {
    const auto amp = query.find('&');
    const std::string_view item = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    if (item.size() > key.size() && item.starts_with(key) && item[key.size()] == '=')
      return item.substr(key.size() + 1);
  }
  return std::nullopt;
}

// Refuses each of `options` (key, what it is) present in `uri`, naming it and whose option it is.
void refuse_options(std::string_view uri,
                    std::initializer_list<std::pair<const char*, const char*>> options,
                    std::string_view whose, std::string_view refusing) {
  for (const auto& [key, what] : options) {
    if (uri_option(uri, key))
      throw std::invalid_argument(fmt::format("'{}': {}= is a {} option ({}); {} does not take it",
                                              uri, key, whose, what, refusing));
  }
}

}  // namespace

Since parse_since(std::string_view uri) {
  const auto value = uri_option(uri, "since");
  return value ? since_value(uri, *value) : Since{};
}

NatsAddress parse_nats_publisher_address(std::string_view uri) {
  // Silently ignored before: `run --publish nats://…&since=new` published as if it were not there.
  refuse_options(uri,
                 {{"since", "where a reader starts in the bed's history"},
                  {"scale",
                   "the integer scale run --source and reconstruct multiply by; a gateway's own "
                   "is emulate --scale"}},
                 "subscriber", "a publisher's URI (run --publish, emulate --to)");
  return parse_nats_address(uri);
}

NatsAddress parse_nats_subscriber_address(std::string_view uri) {
  // Silently ignored before: `listen nats://…&model=adult` read the bed as if it were not there.
  refuse_options(uri,
                 {{"model",
                   "the model a gateway names on its raw frames, Eit-Model; a worker picks each "
                   "bed's model from them"}},
                 "publisher",
                 "a subscriber's URI (run --source, listen, view, reconstruct, worker)");
  return parse_nats_address(uri);
}

bool is_nats_uri(std::string_view uri) noexcept {
  return uri.starts_with("nats://") || uri.starts_with("tls://");
}

bool NatsAddress::loopback() const noexcept {
  return host == "localhost" || host == "::1" || host == "[::1]" || host.starts_with("127.");
}

std::string NatsAddress::subject(std::string_view kind) const {
  return fmt::format("eit.{}.{}.{}", site, bed, kind);
}

NatsAddress parse_nats_address(std::string_view uri) {
  if (!is_nats_uri(uri)) {
    throw std::invalid_argument(
        fmt::format("'{}': expected nats://host:port[?site=S&bed=B&creds=FILE]", uri));
  }
  NatsAddress a;
  std::string_view rest = uri.substr(uri.find("://") + 3);
  std::string_view query;
  if (const auto q = rest.find('?'); q != std::string_view::npos) {
    query = rest.substr(q + 1);
    rest = rest.substr(0, q);
  }
  if (rest.ends_with('/')) rest.remove_suffix(1);
  if (rest.empty()) throw std::invalid_argument(fmt::format("'{}': no host", uri));
  const auto colon = rest.rfind(':');
  a.host = std::string(colon == std::string_view::npos ? rest : rest.substr(0, colon));
  const std::string port =
      colon == std::string_view::npos ? "4222" : std::string(rest.substr(colon + 1));
  while (!query.empty()) {
    const auto amp = query.find('&');
    const std::string_view item = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    const auto eq = item.find('=');
    if (eq == std::string_view::npos)
      throw std::invalid_argument(fmt::format("'{}': option '{}' has no value", uri, item));
    const std::string_view key = item.substr(0, eq), value = item.substr(eq + 1);
    if (key == "site")
      a.site = value;
    else if (key == "bed")
      a.bed = value;
    else if (key == "creds")
      a.creds_file = value;
    else if (key == "nkey")
      a.nkey = value;
    else if (key == "seed")
      a.nkey_seed_file = value;
    else if (key == "model")
      a.model = value;
    else if (key == "tls-ca")
      a.tls_ca = value;
    else if (key == "tls-cert")
      a.tls_cert = value;
    else if (key == "tls-key")
      a.tls_key = value;
    else if (key == "insecure")
      a.insecure = value == "1" || value == "true";
    else if (key == "since")
      (void)since_value(uri, value);  // read by the consumers that replay history (parse_since)
    else
      throw std::invalid_argument(fmt::format(
          "'{}': option '{}' unknown; expected site, bed, creds, nkey, seed, model, tls-ca, "
          "tls-cert, tls-key, insecure, since",
          uri, key));
  }
  if (a.nkey.empty() != a.nkey_seed_file.empty())
    throw std::invalid_argument(fmt::format(
        "'{}': nkey= and seed= go together (the user's public nkey and its seed file)", uri));
  if (!a.creds_file.empty() && !a.nkey.empty())
    throw std::invalid_argument(fmt::format(
        "'{}': creds= and nkey= exclude each other (a .creds file holds its own nkey)", uri));
  for (auto [name, token] :
       {std::pair{"site", &a.site}, std::pair{"bed", &a.bed}, std::pair{"model", &a.model}}) {
    if (name == std::string_view("model") && token->empty()) continue;
    if (!valid_token(*token))
      throw std::invalid_argument(fmt::format(
          "'{}': {} '{}' is not one subject token (letters, digits, '-', '_')", uri, name, *token));
  }
  const bool tls_scheme = uri.starts_with("tls://") || a.tls();
  a.server_url = fmt::format("{}://{}:{}", tls_scheme ? "tls" : "nats", a.host, port);
  const bool credentials = !a.creds_file.empty() || !a.nkey.empty();
  if (!a.loopback() && !a.insecure && (!credentials || !tls_scheme)) {
    throw std::invalid_argument(
        fmt::format("'{}': a NATS server off this host needs credentials (creds=FILE, or "
                    "nkey=PUB&seed=FILE) and TLS (tls-ca=FILE): "
                    "patient data; add insecure=1 to connect without them anyway",
                    uri));
  }
  return a;
}

}  // namespace eit::nats
