// Violations: the thread-safe list of broken guarantees a torture run found.
// Every check adds one line naming what was expected and what was seen; the
// run prints them all and exits non-zero when there is any.
#pragma once

#include <cstddef>
#include <mutex>
#include <ostream>
#include <string>
#include <vector>

namespace zstore::torture {

class Violations {
 public:
  void add(const std::string& kind, const std::string& detail) {
    std::lock_guard lock(mu_);
    items_.push_back(kind + ": " + detail);
  }
  std::size_t count() const {
    std::lock_guard lock(mu_);
    return items_.size();
  }
  // Prints the violations from index `from` on; returns how many it printed.
  std::size_t print(std::ostream& out, std::size_t from = 0) const {
    std::lock_guard lock(mu_);
    for (std::size_t i = from; i < items_.size(); ++i) out << "VIOLATION " << items_[i] << "\n";
    return items_.size() > from ? items_.size() - from : 0;
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::string> items_;
};

}  // namespace zstore::torture
