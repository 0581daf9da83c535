#include "server/dafka/dafka_fetches.h"

#include <spdlog/spdlog.h>

#include <string_view>
#include <vector>

#include "protocol/dafka_codec.h"

namespace zstore::server {

namespace dafka = protocol::dafka;

bool FetchPump::start(std::string requester, std::unique_ptr<storage::DafkaCursor> cursor, protocol::Frames trailer) {
  if (sessions_.size() >= max_sessions_) return false;
  Session s;
  s.requester = std::move(requester);
  s.cursor = std::move(cursor);
  s.trailer = std::move(trailer);
  sessions_.push_back(std::move(s));
  return true;
}

bool FetchPump::load_next(Session& s) {
  if (s.pending || s.done) return true;
  if (!s.cursor->next_view(&s.record)) {
    if (!s.cursor->status().ok()) {
      error_log_.log(spdlog::level::err, "FETCH answer cut short: {}", s.cursor->status().message());
    }
    s.done = true;
    return !s.trailer.empty();
  }
  if (!s.header.empty() && s.record.partition == s.header_partition && s.record.subject == s.header_subject) {
    dafka::set_direct_record_sequence(s.record.offset, &s.header);
  } else {
    dafka::encode_direct_record_header(s.requester, s.record.partition, s.record.subject, s.record.offset, &s.header);
    s.header_partition.assign(s.record.partition);
    s.header_subject.assign(s.record.subject);
  }
  s.pending = true;
  return true;
}

std::size_t FetchPump::pump(std::size_t budget, const Send& send) {
  blocked_ = false;
  std::size_t sent = 0;
  std::size_t blocked_in_a_row = 0;  // a slow requester must not hold up the others
  while (sent < budget && !sessions_.empty()) {
    Session& s = sessions_.front();
    if (!load_next(s)) {
      sessions_.pop_front();
      continue;
    }
    bool sent_now = false;
    if (s.done) {
      std::vector<std::string_view> trailer(s.trailer.begin(), s.trailer.end());
      sent_now = send(trailer);
    } else {
      const std::string_view frames[] = {s.header, s.record.content};
      sent_now = send(frames);
    }
    if (!sent_now) {
      if (++blocked_in_a_row >= sessions_.size()) {
        blocked_ = true;
        break;
      }
      sessions_.push_back(std::move(sessions_.front()));
      sessions_.pop_front();
      continue;
    }
    blocked_in_a_row = 0;
    if (s.done) {  // the trailer: the session is over
      ++trailers_sent_;
      sessions_.pop_front();
      continue;
    }
    s.pending = false;
    ++sent;
    if (sent % 64 == 0 && sessions_.size() > 1) {  // take turns
      sessions_.push_back(std::move(sessions_.front()));
      sessions_.pop_front();
    }
  }
  return sent;
}

}  // namespace zstore::server
