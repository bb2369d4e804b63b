#pragma once
// The lines `eitstream view` and `eitstream run --http` print when the live view is up: the
// address to open (tests read the port from it) and a warning when it is not loopback-only.
#include <string>

#include "eit/view/view_server.hpp"

namespace eit::cli {

void print_view_banner(const view::ViewServer& server, const std::string& what);
// ViewServerOptions::report for the CLI: "eitstream: view: …" on stderr.
void print_view_report(const std::string& line);

}  // namespace eit::cli
