#include "server/zstored/zstored_signals.h"

#include <signal.h>

#include <spdlog/spdlog.h>

namespace zstore::server {
namespace {

sigset_t handled_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  return set;
}

void reload_acl(ChpAclFile& acl) {
  if (auto err = acl.reload(); !err.empty()) {
    spdlog::error("SIGHUP: --acl: {}; keeping the previous access rules", err);
  } else {
    spdlog::info("SIGHUP: CHP access rules: {} rule(s) from {}", acl.current()->rules(), acl.path());
  }
}

}  // namespace

void block_handled_signals() {
  sigset_t set = handled_signals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

int wait_for_signal(ZapHandler* zap, ChpAclFile* acl) {
  sigset_t set = handled_signals();
  int sig = 0;
  while (sigwait(&set, &sig) == 0 && sig == SIGHUP) {
    if (!zap) {
      spdlog::info("SIGHUP: nothing to reload (no --curve-allow)");
    } else if (auto err = zap->reload(); !err.empty()) {
      spdlog::error("SIGHUP: {}; keeping the previous allow list", err);
    }
    if (acl) reload_acl(*acl);
  }
  return sig;
}

}  // namespace zstore::server
