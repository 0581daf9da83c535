// Poller: the parts of a reactor share one zmq_poll. Each part adds its
// sockets (or file descriptors) with the handler to call when one is
// readable; wait() polls them all and calls the handlers of the ready ones,
// in the order of their rank, then of their addition. A socket is added as
// the zmq::socket_t object that holds it, which must outlive its
// registration but may be given a new socket meanwhile (move-assigned):
// each poll uses whatever socket it holds then.
//
// A handler may add and remove items, its own included: a removed item's
// handler is never called after remove() returns, and an added item is
// polled from the next poll on. Not thread-safe: one reactor thread. Once
// the items are added, poll() and dispatch() allocate nothing.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include <zmq.hpp>

namespace zstore::server {

class Poller {
 public:
  using Handler = std::function<void()>;

  Poller() = default;
  Poller(const Poller&) = delete;
  Poller& operator=(const Poller&) = delete;

  // Adds *socket (readable: handler runs). Lower ranks run first. A socket
  // or descriptor already added is not added twice (the call is ignored).
  void add(zmq::socket_t& socket, Handler handler, int rank = 0);
  void add(int fd, Handler handler, int rank = 0);
  // Removes the item; absent ones are ignored.
  void remove(const zmq::socket_t& socket);
  void remove(int fd);

  // Waits up to timeout (0: not at all) until an item is readable and
  // notes which are; returns how many. Throws zmq::error_t as zmq_poll
  // fails (EINTR included).
  std::size_t poll(std::chrono::milliseconds timeout);
  // Whether fd was readable at the last poll (and not dispatched since).
  bool ready(int fd) const;
  // Calls the handlers of the items readable at the last poll, once each.
  void dispatch();
  // poll() then dispatch(); returns how many were readable.
  std::size_t wait(std::chrono::milliseconds timeout);

  std::size_t size() const;  // items added and not removed

 private:
  struct Entry {
    zmq::socket_t* socket = nullptr;  // null: a descriptor item
    int fd = -1;
    int rank = 0;
    Handler handler;
    bool removed = false;
  };
  Entry* find(const zmq::socket_t* socket, int fd);
  void insert(Entry entry);
  void settle();  // drops removed entries, inserts those added while dispatching

  std::vector<Entry> entries_;  // by rank, then addition; items_[i] polls entries_[i]
  std::vector<zmq::pollitem_t> items_;
  std::vector<Entry> added_;  // added while dispatching
  bool dispatching_ = false;
  bool removed_ = false;  // entries_ holds a removed entry
};

}  // namespace zstore::server
