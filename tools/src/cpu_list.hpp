#pragma once
// --cpus of `eitstream run` and `eitstream bench`: a comma-separated list of CPU numbers, each in
// 0..(online CPUs − 1). Set-up only; throws CommandError naming the option, the list and the item.
#include <string>
#include <vector>

namespace eit::cli {

// "2,3,5" → {2, 3, 5}; "" → {} (nothing pinned). `option` names the flag in the message.
std::vector<int> parse_cpu_list(const std::string& text, const char* option = "--cpus");

}  // namespace eit::cli
