#pragma once
// ModelShelf: the models of a worker's --model-dir, loaded once each on first use and shared by
// the bed threads (a mutex; set-up and model changes only, never per frame).
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "eit/recon/model.hpp"

namespace eit::nats {

class ModelShelf {
 public:
  explicit ModelShelf(std::filesystem::path dir);
  // DIR/NAME.h5 (NAME empty: default.h5). Throws naming the file when it is missing, is a gn
  // model or has no v_ref.
  std::shared_ptr<const recon::Model> get(const std::string& name);

 private:
  std::filesystem::path dir_;
  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<const recon::Model>> models_;
};

}  // namespace eit::nats
