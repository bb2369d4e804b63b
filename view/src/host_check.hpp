#pragma once
// The DNS-rebinding guard of the view's HTTP server. A page on attacker.example, whose name the
// attacker makes resolve to 127.0.0.1, reaches a loopback server with Origin and Host both
// "attacker.example:PORT", so comparing the two (the cross-origin guard) lets it through. A
// server bound to loopback therefore answers only to a Host that cannot be rebound: a literal
// loopback address or "localhost". A server bound to another address (`--insecure`) is reached by
// whatever name the network gives it, and keeps only the cross-origin guard.
#include <string_view>

#include <boost/asio/ip/address.hpp>

namespace eit::view {

// `host`: the request's Host header ("127.0.0.1:8080", "[::1]:8080", "localhost"); `bound`: the
// address the server listens on.
bool host_header_allowed(std::string_view host, const boost::asio::ip::address& bound);

}  // namespace eit::view
