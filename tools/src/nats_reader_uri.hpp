#pragma once
// The checks `view nats://…` and `listen nats://…` make of a bed's URI before they read it, so
// that a mistake in it (a malformed since=, a credentials or TLS file that is not there) is an
// error at once, while a server that is down or a bed whose stream does not exist yet (no
// publisher so far) is waited for: both try to open the reader again every kNatsReaderRetry.
// Set-up only; throws CommandError starting with `command` (the subcommand's name).
#include <chrono>
#include <string>
#include <string_view>

#include "eit/nats/nats_address.hpp"

namespace eit::cli {

inline constexpr std::chrono::seconds kNatsReaderRetry{1};

nats::NatsAddress checked_nats_reader_address(std::string_view command, const std::string& uri);

// The URI's since= value ("" when absent), and the URI with `since` in place of any since=.
std::string since_of(const std::string& uri);
std::string with_since(const std::string& uri, std::string_view since);

}  // namespace eit::cli
