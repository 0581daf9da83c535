#include "server/reactor/poller.h"

#include <algorithm>
#include <utility>

namespace zstore::server {

namespace {

// A socket object that holds no socket yet (a part not started) is polled
// as nothing: a negative descriptor with no events.
zmq::pollitem_t item_of(zmq::socket_t* socket, int fd) {
  if (!socket) return {nullptr, fd, ZMQ_POLLIN, 0};
  if (!socket->handle()) return {nullptr, -1, 0, 0};
  return {socket->handle(), 0, ZMQ_POLLIN, 0};
}

}  // namespace

void Poller::add(zmq::socket_t& socket, Handler handler, int rank) {
  if (find(&socket, -1)) return;
  insert({&socket, -1, rank, std::move(handler)});
}

void Poller::add(int fd, Handler handler, int rank) {
  if (find(nullptr, fd)) return;
  insert({nullptr, fd, rank, std::move(handler)});
}

void Poller::insert(Entry entry) {
  if (dispatching_) {
    added_.push_back(std::move(entry));
    return;
  }
  auto at = std::upper_bound(entries_.begin(), entries_.end(), entry.rank,
                             [](int rank, const Entry& e) { return rank < e.rank; });
  auto index = at - entries_.begin();
  items_.insert(items_.begin() + index, item_of(entry.socket, entry.fd));
  entries_.insert(at, std::move(entry));
}

Poller::Entry* Poller::find(const zmq::socket_t* socket, int fd) {
  auto same = [&](const Entry& e) { return !e.removed && e.socket == socket && (socket || e.fd == fd); };
  if (auto it = std::find_if(entries_.begin(), entries_.end(), same); it != entries_.end()) return &*it;
  if (auto it = std::find_if(added_.begin(), added_.end(), same); it != added_.end()) return &*it;
  return nullptr;
}

void Poller::remove(const zmq::socket_t& socket) {
  if (Entry* e = find(&socket, -1)) e->removed = true;
  removed_ = true;
  if (!dispatching_) settle();
}

void Poller::remove(int fd) {
  if (Entry* e = find(nullptr, fd)) e->removed = true;
  removed_ = true;
  if (!dispatching_) settle();
}

void Poller::settle() {
  std::erase_if(added_, [](const Entry& e) { return e.removed; });  // added, then removed, in one dispatch
  if (removed_) {
    std::size_t kept = 0;
    for (std::size_t i = 0; i < entries_.size(); ++i) {
      if (entries_[i].removed) continue;
      if (kept != i) {
        entries_[kept] = std::move(entries_[i]);
        items_[kept] = items_[i];
      }
      ++kept;
    }
    entries_.resize(kept);
    items_.resize(kept);
    removed_ = false;
  }
  for (auto& e : added_) insert(std::move(e));  // not dispatching: into entries_
  added_.clear();
}

std::size_t Poller::poll(std::chrono::milliseconds timeout) {
  for (std::size_t i = 0; i < entries_.size(); ++i) items_[i] = item_of(entries_[i].socket, entries_[i].fd);
  int n = zmq::poll(items_.data(), items_.size(), timeout);
  return n > 0 ? static_cast<std::size_t>(n) : 0;
}

bool Poller::ready(int fd) const {
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    if (!entries_[i].socket && entries_[i].fd == fd) return (items_[i].revents & ZMQ_POLLIN) != 0;
  }
  return false;
}

void Poller::dispatch() {
  struct Settle {
    Poller* p;
    ~Settle() {
      p->dispatching_ = false;
      p->settle();
    }
  } settle_after{this};
  dispatching_ = true;
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    if (!(items_[i].revents & ZMQ_POLLIN)) continue;
    items_[i].revents = 0;
    if (!entries_[i].removed) entries_[i].handler();
  }
}

std::size_t Poller::wait(std::chrono::milliseconds timeout) {
  std::size_t n = poll(timeout);
  if (n > 0) dispatch();
  return n;
}

std::size_t Poller::size() const {
  std::size_t n = added_.size();
  for (const auto& e : entries_) n += e.removed ? 0 : 1;
  return n;
}

}  // namespace zstore::server
