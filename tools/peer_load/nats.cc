// NATS JetStream through libnats (Debian libnats-dev, the NATS C client):
// js_PublishAsync with PublishAsync.MaxPending = --window per connection,
// acknowledged by the stream's PubAck. nats-kv publishes to a key-value
// bucket's subjects ($KV.bench.<key>, what kvStore_Put does, without
// waiting) with a kvStore_WatchAll watcher; nats-log to a file-storage
// stream, whose message count is what it kept. Debian's nats-server 2.9
// has no per-write fsync: its file store syncs in the background.
#include <nats/nats.h>

#include <cstring>
#include <stdexcept>
#include <thread>

#include "tools/peer_load/peer_load.h"

namespace zstore::peer_load {

namespace {

void check(natsStatus s, const char* what) {
  if (s != NATS_OK) throw std::runtime_error(std::string("nats: ") + what + ": " + natsStatus_GetText(s));
}

void on_ack(jsCtx*, natsMsg* msg, jsPubAck* pa, jsPubAckErr*, void* closure) {
  auto* recorder = static_cast<Recorder*>(closure);
  std::int64_t sent = 0;
  if (natsMsg_GetDataLength(msg) >= static_cast<int>(sizeof sent))
    std::memcpy(&sent, natsMsg_GetData(msg), sizeof sent);
  if (pa != nullptr)
    recorder->ack(sent);
  else
    recorder->fail();
  natsMsg_Destroy(msg);
}

struct Connection {
  Connection(int port, Recorder* recorder, int window) {
    std::string url = "nats://127.0.0.1:" + std::to_string(port);
    check(natsConnection_ConnectTo(&nc, url.c_str()), "connect");
    jsOptions o;
    jsOptions_Init(&o);
    o.PublishAsync.MaxPending = window;
    o.PublishAsync.AckHandler = on_ack;
    o.PublishAsync.AckHandlerClosure = recorder;
    o.PublishAsync.StallWait = 10000;
    check(natsConnection_JetStream(&js, nc, &o), "JetStream context");
  }
  ~Connection() {
    jsCtx_Destroy(js);
    natsConnection_Destroy(nc);
  }
  natsConnection* nc = nullptr;
  jsCtx* js = nullptr;
};

class Nats : public Workload {
 public:
  explicit Nats(const Spec& spec) : spec_(spec), log_(spec.workload == "nats-log") {}

  void setup() override {
    Connection c(spec_.port, nullptr, 1);
    jsErrCode err;
    if (log_) {
      jsStreamConfig sc;
      jsStreamConfig_Init(&sc);
      const char* subjects[] = {"log"};
      sc.Name = "log";
      sc.Subjects = subjects;
      sc.SubjectsLen = 1;
      sc.Storage = js_FileStorage;
      jsStreamInfo* si = nullptr;
      check(js_AddStream(&si, c.js, &sc, nullptr, &err), "add stream log");
      jsStreamInfo_Destroy(si);
      return;
    }
    kvConfig kc;
    kvConfig_Init(&kc);
    kc.Bucket = "bench";
    kc.History = 1;
    kc.StorageType = js_FileStorage;
    kvStore* kv = nullptr;
    check(js_CreateKeyValue(&kv, c.js, &kc), "create bucket bench");
    kvStore_Destroy(kv);
  }

  void writer(int index, Recorder& recorder, const Phases& phases) override {
    Connection c(spec_.port, &recorder, spec_.window);
    Keys keys(spec_.key_space, 7919u * static_cast<unsigned>(index + 1));
    std::string value = make_value(spec_);
    while (phases.sending(now_ns())) {
      std::int64_t t = now_ns();
      std::memcpy(value.data(), &t, sizeof t);
      std::string subject = log_ ? std::string("log") : "$KV.bench." + keys.next();
      check(js_PublishAsync(c.js, subject.c_str(), value.data(), static_cast<int>(value.size()), nullptr), "publish");
    }
    jsPubOptions po;
    jsPubOptions_Init(&po);
    po.MaxWait = 30000;
    check(js_PublishAsyncComplete(c.js, &po), "waiting for the acks");
  }

  void watcher(Watch& watch) override {
    if (log_) {
      watch.ready.store(true);
      return;
    }
    Connection c(spec_.port, nullptr, 1);
    kvStore* kv = nullptr;
    check(js_KeyValue(&kv, c.js, "bench"), "bucket bench");
    kvWatcher* w = nullptr;
    check(kvStore_WatchAll(&w, kv, nullptr), "watch bench");
    watch.ready.store(true);
    while (!watch.stop.load()) {
      kvEntry* e = nullptr;
      natsStatus s = kvWatcher_Next(&e, w, 300);
      if (s == NATS_TIMEOUT) continue;
      check(s, "watcher");
      if (e == nullptr) continue;  // the end of the (empty) initial values
      watch.received.fetch_add(1);
      kvEntry_Destroy(e);
    }
    kvWatcher_Destroy(w);
    kvStore_Destroy(kv);
  }

  std::uint64_t kept(const Watch& watch) override {
    if (!log_) return watch.received.load();
    Connection c(spec_.port, nullptr, 1);
    jsStreamInfo* si = nullptr;
    jsErrCode err;
    check(js_GetStreamInfo(&si, c.js, "log", nullptr, &err), "stream info");
    std::uint64_t n = si->State.Msgs;
    jsStreamInfo_Destroy(si);
    return n;
  }

  std::string durability() const override { return "not fsynced before the ack (nats-server 2.9: background sync)"; }

 private:
  Spec spec_;
  bool log_;
};

}  // namespace

std::unique_ptr<Workload> make_nats(const Spec& spec) { return std::make_unique<Nats>(spec); }

}  // namespace zstore::peer_load
