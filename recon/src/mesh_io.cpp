#include "eit/recon/mesh_io.hpp"

#include "eit/recon/mesh_boundary.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <sstream>
#include <string>

#ifdef EIT_HAVE_ZLIB
#include <zlib.h>
#endif

#include <fmt/format.h>

#include "eit/recon/mesh_check.hpp"

namespace eit::recon {
namespace {

// A numeric CSV table: rows of fields, every row the same width (checked by the caller).
struct CsvTable {
  std::vector<std::vector<double>> rows;
  std::vector<int> line_numbers;
};

// The whole file as text; a path ending in .gz is decompressed (zlib) when built with it.
std::string read_text(const std::filesystem::path& path) {
  if (path.extension() == ".gz") {
#ifdef EIT_HAVE_ZLIB
    gzFile f = gzopen(path.c_str(), "rb");
    if (f == nullptr) throw std::runtime_error(fmt::format("{}: cannot open", path.string()));
    std::string text;
    char buffer[1 << 16];
    int n = 0;
    while ((n = gzread(f, buffer, sizeof buffer)) > 0) text.append(buffer, static_cast<size_t>(n));
    const bool failed = n < 0;
    gzclose(f);
    if (failed) throw std::runtime_error(fmt::format("{}: corrupt gzip data", path.string()));
    return text;
#else
    throw std::runtime_error(
        fmt::format("{}: gzip'd CSV needs zlib, which this build lacks; gunzip it first",
                    path.string()));
#endif
  }
  std::ifstream file(path);
  if (!file) throw std::runtime_error(fmt::format("{}: cannot open", path.string()));
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

CsvTable read_csv(const std::filesystem::path& path) {
  std::istringstream in(read_text(path));
  CsvTable table;
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    std::vector<double> row;
    size_t start = 0;
    while (true) {
      const size_t end = std::min(line.find(',', start), line.size());
      std::string field = line.substr(start, end - start);
      const char* text = field.c_str();
      char* stop = nullptr;
      errno = 0;
      const double value = std::strtod(text, &stop);
      while (*stop == ' ' || *stop == '\t') ++stop;
      if (stop == text || *stop != '\0' || errno == ERANGE || !std::isfinite(value))
        throw std::invalid_argument(fmt::format("{}:{}: field {} is '{}', expected a finite number",
                                                path.string(), line_no, row.size() + 1, field));
      row.push_back(value);
      if (end == line.size()) break;
      start = end + 1;
    }
    table.rows.push_back(std::move(row));
    table.line_numbers.push_back(line_no);
  }
  return table;
}

void require_width(const CsvTable& t, const std::filesystem::path& path, size_t lo, size_t hi) {
  for (size_t r = 0; r < t.rows.size(); ++r) {
    const size_t w = t.rows[r].size();
    if (w < lo || w > hi || w != t.rows[0].size())
      throw std::invalid_argument(
          fmt::format("{}:{}: {} columns, expected {} (and the same in every row)", path.string(),
                      t.line_numbers[r], w,
                      lo == hi ? fmt::format("{}", lo) : fmt::format("{} or {}", lo, hi)));
  }
}

int to_index(double value, const std::filesystem::path& path, int line_no) {
  if (value != std::floor(value) || value < 0 || value > 2e9)
    throw std::invalid_argument(fmt::format("{}:{}: '{}' is not a non-negative integer index",
                                            path.string(), line_no, value));
  return static_cast<int>(value);
}

}  // namespace

Mesh load_mesh_csv_folder(const std::filesystem::path& folder) {
  // name.csv, else name.csv.gz (pyEIT reference folders ship gzip'd CSVs).
  const auto csv = [&](const char* name) {
    const auto plain = folder / fmt::format("{}.csv", name);
    const auto gz = folder / fmt::format("{}.csv.gz", name);
    return !std::filesystem::exists(plain) && std::filesystem::exists(gz) ? gz : plain;
  };
  const auto nodes_path = csv("nodes");
  const auto elements_path = csv("elements");
  const auto el_pos_path = csv("el_pos");

  Mesh mesh;
  const CsvTable nodes = read_csv(nodes_path);
  if (nodes.rows.empty())
    throw std::invalid_argument(fmt::format("{}: no nodes", nodes_path.string()));
  require_width(nodes, nodes_path, 2, 3);

  const CsvTable elements = read_csv(elements_path);
  if (elements.rows.empty())
    throw std::invalid_argument(fmt::format("{}: no elements", elements_path.string()));
  require_width(elements, elements_path, 3, 4);
  const int per_element = static_cast<int>(elements.rows[0].size());
  // Triangles use x, y (a z column, pyEIT's 2-D export, is dropped); tetrahedra need x, y, z.
  const int dim = per_element == 4 ? 3 : 2;
  if (dim == 3 && nodes.rows[0].size() != 3)
    throw std::invalid_argument(fmt::format(
        "{}: {} columns, expected 3 (x, y, z) for the tetrahedra of {}", nodes_path.string(),
        nodes.rows[0].size(), elements_path.string()));
  mesh.nodes.resize(static_cast<Eigen::Index>(nodes.rows.size()), dim);
  for (size_t i = 0; i < nodes.rows.size(); ++i)
    for (int c = 0; c < dim; ++c) mesh.nodes(static_cast<Eigen::Index>(i), c) = nodes.rows[i][c];
  mesh.elements.resize(static_cast<Eigen::Index>(elements.rows.size()), per_element);
  for (size_t e = 0; e < elements.rows.size(); ++e)
    for (int k = 0; k < per_element; ++k)
      mesh.elements(static_cast<Eigen::Index>(e), k) =
          to_index(elements.rows[e][k], elements_path, elements.line_numbers[e]);

  const CsvTable el_pos = read_csv(el_pos_path);
  for (size_t r = 0; r < el_pos.rows.size(); ++r)
    for (double v : el_pos.rows[r])
      mesh.electrode_nodes.push_back(to_index(v, el_pos_path, el_pos.line_numbers[r]));
  if (mesh.electrode_nodes.empty())
    throw std::invalid_argument(fmt::format("{}: no electrodes", el_pos_path.string()));

  mesh.ref_node = pyeit_ref_node(mesh.electrode_nodes);
  check_mesh(mesh, folder.string());
  return mesh;
}

}  // namespace eit::recon
