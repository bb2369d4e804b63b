#include "msh_parse.hpp"

#include <cctype>
#include <charconv>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string_view>

#include <fmt/format.h>

namespace eit::recon::msh {
namespace {

// Whitespace tokens with their line numbers; quoted names read as one token.
class Lexer {
 public:
  Lexer(std::string text, std::string file) : text_(std::move(text)), file_(std::move(file)) {}

  bool at_end() {
    skip_space();
    return pos_ >= text_.size();
  }
  int line() const { return line_; }
  std::string_view next(const std::string& section, const char* field) {
    skip_space();
    if (pos_ >= text_.size()) fail(section, field, "end of file", "more data");
    const size_t start = pos_;
    if (text_[pos_] == '"') {
      const size_t end = text_.find('"', pos_ + 1);
      if (end == std::string::npos) fail(section, field, "unterminated name", "a closing quote");
      pos_ = end + 1;
      return std::string_view(text_).substr(start + 1, end - start - 1);
    }
    while (pos_ < text_.size() && !std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    return std::string_view(text_).substr(start, pos_ - start);
  }
  template <typename T>
  T number(const std::string& section, const char* field) {
    const std::string_view tok = next(section, field);
    T value{};
    const auto [end, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), value);
    if (ec != std::errc() || end != tok.data() + tok.size())
      fail(section, field, fmt::format("'{}'", tok),
           std::is_integral_v<T> ? "an integer" : "a number");
    return value;
  }
  void expect(std::string_view word, const std::string& section) {
    const std::string_view tok = next(section, "section end");
    if (tok != word) fail(section, "section end", fmt::format("'{}'", tok), std::string(word));
  }
  [[noreturn]] void fail(const std::string& section, const char* field, const std::string& found,
                         const std::string& expected) const {
    throw std::runtime_error(fmt::format("{}:{}: {}: {} {}: expected {}", file_, line_, section,
                                         field, found, expected));
  }

 private:
  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) {
      if (text_[pos_] == '\n') ++line_;
      ++pos_;
    }
  }
  std::string text_;
  std::string file_;
  size_t pos_ = 0;
  int line_ = 1;
};

void read_format(Lexer& lx, RawMsh& out) {
  const std::string s = "$MeshFormat";
  out.version = lx.number<double>(s, "version");
  const int file_type = lx.number<int>(s, "file-type");
  lx.number<int>(s, "data-size");
  if (file_type != 0)
    lx.fail(s, "file-type", std::to_string(file_type),
            "0 (ASCII; binary .msh is not supported, save as ASCII)");
  const bool v2 = out.version >= 2.0 && out.version < 3.0;
  if (!v2 && out.version != 4.1)
    lx.fail(s, "version", fmt::format("{}", out.version), "2.2 or 4.1");
  lx.expect("$EndMeshFormat", s);
}

void read_names(Lexer& lx, RawMsh& out) {
  const std::string s = "$PhysicalNames";
  const int n = lx.number<int>(s, "count");
  for (int i = 0; i < n; ++i) {
    const int dim = lx.number<int>(s, "dimension");
    const int tag = lx.number<int>(s, "physical tag");
    out.physical_names[{dim, tag}] = std::string(lx.next(s, "name"));
  }
  lx.expect("$EndPhysicalNames", s);
}

// v4.1: physical tags live on the entities; elements inherit them from their entity.
using EntityPhysicals = std::map<std::pair<int, int>, std::vector<int>>;

void read_entities(Lexer& lx, EntityPhysicals& phys) {
  const std::string s = "$Entities";
  int counts[4];
  for (int& c : counts) c = lx.number<int>(s, "entity count");
  for (int dim = 0; dim < 4; ++dim)
    for (int i = 0; i < counts[dim]; ++i) {
      const int tag = lx.number<int>(s, "entity tag");
      const int n_coords = dim == 0 ? 3 : 6;
      for (int k = 0; k < n_coords; ++k) lx.number<double>(s, "coordinate");
      const int n_phys = lx.number<int>(s, "numPhysicalTags");
      auto& list = phys[{dim, tag}];
      for (int k = 0; k < n_phys; ++k) list.push_back(lx.number<int>(s, "physical tag"));
      if (dim > 0) {
        const int n_bound = lx.number<int>(s, "numBounding");
        for (int k = 0; k < n_bound; ++k) lx.number<int>(s, "bounding tag");
      }
    }
  lx.expect("$EndEntities", s);
}

void read_nodes(Lexer& lx, RawMsh& out) {
  const std::string s = "$Nodes";
  if (out.version < 3) {
    const long n = lx.number<long>(s, "node count");
    for (long i = 0; i < n; ++i) {
      const auto tag = lx.number<std::size_t>(s, "node tag");
      const double x = lx.number<double>(s, "x"), y = lx.number<double>(s, "y");
      lx.number<double>(s, "z");
      out.nodes[tag] = {x, y};
    }
  } else {
    const long blocks = lx.number<long>(s, "numEntityBlocks");
    lx.number<long>(s, "numNodes");
    lx.number<long>(s, "minNodeTag");
    lx.number<long>(s, "maxNodeTag");
    for (long b = 0; b < blocks; ++b) {
      const int dim = lx.number<int>(s, "entityDim");
      lx.number<int>(s, "entityTag");
      const int parametric = lx.number<int>(s, "parametric");
      const long n = lx.number<long>(s, "numNodesInBlock");
      if (n < 0) lx.fail(s, "numNodesInBlock", fmt::format("'{}'", n), "a count ≥ 0");
      // The count is the file's claim: the list grows with the tags actually there, so a forged
      // count ends at the end of the file, not in a 30 GB allocation (found by fuzz_recon_msh).
      std::vector<std::size_t> tags;
      for (long i = 0; i < n; ++i) tags.push_back(lx.number<std::size_t>(s, "node tag"));
      for (std::size_t t : tags) {
        const double x = lx.number<double>(s, "x"), y = lx.number<double>(s, "y");
        lx.number<double>(s, "z");
        for (int k = 0; parametric && k < dim; ++k) lx.number<double>(s, "parametric coordinate");
        out.nodes[t] = {x, y};
      }
    }
  }
  lx.expect("$EndNodes", s);
}

RawElement element_nodes(Lexer& lx, const std::string& s, int type) {
  RawElement e;
  e.type = type;
  e.line = lx.line();
  const int n = nodes_per_element(type);
  if (n == 0) lx.fail(s, "element type", std::to_string(type), "a known Gmsh element type");
  for (int k = 0; k < n; ++k) e.nodes.push_back(lx.number<std::size_t>(s, "node tag"));
  return e;
}

void read_elements(Lexer& lx, RawMsh& out, const EntityPhysicals& phys) {
  const std::string s = "$Elements";
  if (out.version < 3) {
    const long n = lx.number<long>(s, "element count");
    for (long i = 0; i < n; ++i) {
      lx.number<long>(s, "element tag");
      const int type = lx.number<int>(s, "element type");
      const int n_tags = lx.number<int>(s, "number of tags");
      std::vector<int> tags;
      for (int k = 0; k < n_tags; ++k) tags.push_back(lx.number<int>(s, "tag"));
      RawElement e = element_nodes(lx, s, type);
      if (!tags.empty() && tags[0] != 0) e.physical.push_back(tags[0]);
      out.elements.push_back(std::move(e));
    }
  } else {
    const long blocks = lx.number<long>(s, "numEntityBlocks");
    lx.number<long>(s, "numElements");
    lx.number<long>(s, "minElementTag");
    lx.number<long>(s, "maxElementTag");
    for (long b = 0; b < blocks; ++b) {
      const int dim = lx.number<int>(s, "entityDim");
      const int entity = lx.number<int>(s, "entityTag");
      const int type = lx.number<int>(s, "elementType");
      const long n = lx.number<long>(s, "numElementsInBlock");
      const auto it = phys.find({dim, entity});
      for (long i = 0; i < n; ++i) {
        lx.number<long>(s, "element tag");
        RawElement e = element_nodes(lx, s, type);
        if (it != phys.end()) e.physical = it->second;
        out.elements.push_back(std::move(e));
      }
    }
  }
  lx.expect("$EndElements", s);
}

}  // namespace

int nodes_per_element(int type) {
  switch (type) {
    case 1:
      return 2;  // line
    case 2:
      return 3;  // triangle
    case 3:
      return 4;  // quadrangle
    case 4:
      return 4;  // tetrahedron
    case 5:
      return 8;  // hexahedron
    case 6:
      return 6;  // prism
    case 7:
      return 5;  // pyramid
    case 8:
      return 3;  // second-order line
    case 9:
      return 6;  // second-order triangle
    case 15:
      return 1;  // point
    default:
      return 0;
  }
}

RawMsh parse_msh(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw std::runtime_error(fmt::format("{}: cannot open .msh file", file));
  std::stringstream buffer;
  buffer << in.rdbuf();
  Lexer lx(buffer.str(), file);
  RawMsh out;
  EntityPhysicals phys;
  bool have_format = false, have_nodes = false, have_elements = false;
  while (!lx.at_end()) {
    const std::string section(lx.next("file", "section"));
    if (!have_format && section != "$MeshFormat")
      lx.fail("file", "first section", fmt::format("'{}'", section),
              "$MeshFormat (a Gmsh .msh file)");
    if (section == "$MeshFormat") {
      read_format(lx, out);
      have_format = true;
    } else if (section == "$PhysicalNames") {
      read_names(lx, out);
    } else if (section == "$Entities") {
      read_entities(lx, phys);
    } else if (section == "$Nodes") {
      read_nodes(lx, out);
      have_nodes = true;
    } else if (section == "$Elements") {
      read_elements(lx, out, phys);
      have_elements = true;
    } else if (section.starts_with("$")) {
      const std::string end = "$End" + section.substr(1);
      while (lx.next(section, "content") != end) {
      }
    } else {
      lx.fail("file", "section", fmt::format("'{}'", section), "a $Section name");
    }
  }
  if (!have_nodes || !have_elements)
    throw std::runtime_error(
        fmt::format("{}: no {} section", file, have_nodes ? "$Elements" : "$Nodes"));
  return out;
}

}  // namespace eit::recon::msh
