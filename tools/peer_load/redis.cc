// Redis through hiredis (Debian libhiredis-dev), the C client Redis ships:
// pipelined EVALSHA (or XADD) with at most --window replies outstanding per
// connection. Redis answers in order, so the oldest send time is the one
// acknowledged.
#include <hiredis/hiredis.h>

#include <deque>
#include <stdexcept>

#include "tools/peer_load/peer_load.h"

namespace zstore::peer_load {

namespace {

const char* const kPubsubScript = "redis.call('set',KEYS[1],ARGV[1]); return redis.call('publish','ch',ARGV[1])";
const char* const kStreamScript =
    "redis.call('set',KEYS[1],ARGV[1]); return "
    "redis.call('xadd','changes','MAXLEN','~','1000000','*','k',KEYS[1],'v',ARGV[1])";

struct Context {
  explicit Context(int port) : c(redisConnect("127.0.0.1", port)) {
    if (c == nullptr || c->err) throw std::runtime_error("redis: cannot connect: " + std::string(c ? c->errstr : "?"));
  }
  ~Context() { redisFree(c); }
  redisContext* c;
};

struct Reply {
  explicit Reply(void* r) : r(static_cast<redisReply*>(r)) {}
  ~Reply() {
    if (r) freeReplyObject(r);
  }
  redisReply* r;
};

class Redis : public Workload {
 public:
  explicit Redis(const Spec& spec) : spec_(spec), value_(make_value(spec)) {}

  void setup() override {
    Context ctx(spec_.port);
    Reply del(redisCommand(ctx.c, "DEL changes log"));
    if (spec_.workload == "redis-log") return;
    const char* script = spec_.workload == "redis-pubsub" ? kPubsubScript : kStreamScript;
    Reply r(redisCommand(ctx.c, "SCRIPT LOAD %s", script));
    if (!r.r || r.r->type != REDIS_REPLY_STRING) throw std::runtime_error("redis: SCRIPT LOAD failed");
    sha_ = r.r->str;
  }

  void writer(int index, Recorder& recorder, const Phases& phases) override {
    Context ctx(spec_.port);
    Keys keys(spec_.key_space, 7919u * static_cast<unsigned>(index + 1));
    std::deque<std::int64_t> sent;
    for (;;) {
      std::int64_t t = now_ns();
      while (phases.sending(t) && static_cast<int>(sent.size()) < spec_.window) {
        append(ctx.c, keys.next());
        sent.push_back(t);
      }
      if (sent.empty()) return;
      void* raw = nullptr;
      if (redisGetReply(ctx.c, &raw) != REDIS_OK) throw std::runtime_error("redis: " + std::string(ctx.c->errstr));
      Reply reply(raw);
      if (reply.r->type == REDIS_REPLY_ERROR)
        recorder.fail();
      else
        recorder.ack(sent.front());
      sent.pop_front();
    }
  }

  void watcher(Watch& watch) override {
    if (spec_.workload == "redis-log") {
      watch.ready.store(true);
      return;
    }
    Context ctx(spec_.port);
    if (spec_.workload == "redis-pubsub")
      subscribe(ctx.c, watch);
    else
      read_stream(ctx.c, watch);
  }

  std::uint64_t kept(const Watch& watch) override {
    if (spec_.workload != "redis-log") return watch.received.load();
    Context ctx(spec_.port);
    Reply r(redisCommand(ctx.c, "XLEN log"));
    return r.r && r.r->type == REDIS_REPLY_INTEGER ? static_cast<std::uint64_t>(r.r->integer) : 0;
  }

  std::string durability() const override { return "see --appendfsync of the server"; }

 private:
  void append(redisContext* c, const std::string& key) {
    if (spec_.workload == "redis-log")
      redisAppendCommand(c, "XADD log * v %b", value_.data(), value_.size());
    else
      redisAppendCommand(c, "EVALSHA %s 1 %s %b", sha_.c_str(), key.c_str(), value_.data(), value_.size());
  }

  // SUBSCRIBE: a publish is lost while the subscriber is away; counts them.
  static void subscribe(redisContext* c, Watch& watch) {
    Reply r(redisCommand(c, "SUBSCRIBE ch"));
    timeval tv{0, 300000};
    redisSetTimeout(c, tv);
    watch.ready.store(true);
    while (!watch.stop.load()) {
      void* raw = nullptr;
      if (redisGetReply(c, &raw) != REDIS_OK) return;  // timed out: hiredis drops the connection
      Reply m(raw);
      watch.received.fetch_add(1);
    }
  }

  // XREAD BLOCK from the last id seen: a reconnecting watcher loses nothing.
  static void read_stream(redisContext* c, Watch& watch) {
    std::string last = "0-0";
    watch.ready.store(true);
    while (!watch.stop.load()) {
      Reply r(redisCommand(c, "XREAD COUNT 1000 BLOCK 300 STREAMS changes %s", last.c_str()));
      if (!r.r) throw std::runtime_error("redis: XREAD: " + std::string(c->errstr));
      if (r.r->type != REDIS_REPLY_ARRAY || r.r->elements == 0) continue;
      redisReply* entries = r.r->element[0]->element[1];
      if (entries->elements == 0) continue;
      last = entries->element[entries->elements - 1]->element[0]->str;
      watch.received.fetch_add(entries->elements);
    }
  }

  Spec spec_;
  std::string value_;
  std::string sha_;
};

}  // namespace

std::unique_ptr<Workload> make_redis(const Spec& spec) { return std::make_unique<Redis>(spec); }

}  // namespace zstore::peer_load
