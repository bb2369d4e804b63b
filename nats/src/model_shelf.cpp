#include "model_shelf.hpp"

#include <stdexcept>

#include <fmt/format.h>

#include "eit/recon/model_file.hpp"

namespace eit::nats {

ModelShelf::ModelShelf(std::filesystem::path dir) : dir_(std::move(dir)) {
  if (!std::filesystem::is_directory(dir_))
    throw std::invalid_argument(fmt::format("--model-dir {}: not a directory", dir_.string()));
}

std::shared_ptr<const recon::Model> ModelShelf::get(const std::string& name) {
  std::lock_guard lock(mutex_);
  const std::string key = name.empty() ? "default" : name;
  if (auto it = models_.find(key); it != models_.end()) return it->second;
  const auto path = dir_ / (key + ".h5");
  if (!std::filesystem::exists(path))
    throw std::runtime_error(
        fmt::format("model {}: no such file (Eit-Model header '{}')", path.string(), name));
  auto model = std::make_shared<recon::Model>(recon::load_model(path));
  if (model->gn)
    throw std::runtime_error(
        fmt::format("model {}: a gn model; workers run linear models", path.string()));
  if (model->v_ref.size() == 0)
    throw std::runtime_error(fmt::format(
        "model {}: has no v_ref; a worker needs one so that every worker computes the same "
        "image of a bed",
        path.string()));
  models_.emplace(key, model);
  return model;
}

}  // namespace eit::nats
