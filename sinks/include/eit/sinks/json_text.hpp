#pragma once
// json_text(): a JSON document as compact text, with any invalid UTF-8 in its strings replaced
// by U+FFFD. nlohmann's plain dump() throws on such bytes, and they come from outside: a file
// name, a request path, a topic from the network. A status line or an error reply must not
// end the process over them.
#include <string>

#include <nlohmann/json.hpp>

namespace eit::sinks {

inline std::string json_text(const nlohmann::json& j, int indent = -1) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace eit::sinks
