// The harness shared by the tests and zstore-torture: reserved loopback
// ports, temporary directories, child processes (zstored) and
// deadline-bounded waits. Nothing here uses fixed ports or sleeps for a
// fixed time to wait. (Its namespace, zstore::testing, is older than the
// move out of tests/support.)
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace zstore::testing {

// Returns a base port P such that P .. P+count-1 are reserved for this
// process on 127.0.0.1 until it exits (CHP needs three consecutive ports).
// The kernel picks P (bind to port 0); P+1.. are claimed by exclusive binds,
// and the whole range is tried again when one is taken. Each port stays
// bound (not listening, SO_REUSEADDR) so no other test, bind(0) or outgoing
// connection gets it, while a server that sets SO_REUSEADDR (libzmq, our
// HTTP server) binds and listens on it as often as it restarts. Residual
// risk: a process that binds a fixed port with SO_REUSEADDR without asking
// here can still bind one of these while no server listens on it.
std::uint16_t free_port_range(int count = 1);
inline std::uint16_t free_port() { return free_port_range(1); }

// A directory under $TMPDIR removed (recursively) on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::string str() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

// How many times slower than a plain build this build runs: 4 with TSan
// (it runs code 5-15x slower, but waits are mostly for I/O), 2 with
// ASan/UBSan, 1 otherwise (tools/harness/CMakeLists.txt);
// $ZSTORE_TEST_TIME_SCALE overrides it. wait_until (and so Process::wait
// and Zstored::start) scales its deadline by it; a test's own deadlines
// (socket polls) use scaled(). Nothing checked changes, only how long.
int time_scale();
inline std::chrono::milliseconds scaled(std::chrono::milliseconds timeout) { return timeout * time_scale(); }

// Polls cond every few milliseconds until it holds or scaled(timeout)
// passes. Returns whether it held.
bool wait_until(const std::function<bool()>& cond, std::chrono::milliseconds timeout = std::chrono::seconds(10));

// Path of an executable in build/bin ($ZSTORE_BIN_DIR, else the build's own).
std::string bin_path(const std::string& name);

// A child process started with argv; stdout+stderr go to a log file. It is
// SIGKILLed by the kernel if the thread that started it ends (so a test
// killed by a time-out leaves no zstored behind): start it from a thread
// that outlives it.
// The destructor SIGKILLs it if it still runs, and ends the test process
// with status 66 (after printing it) if the log holds a sanitizer report: a
// race in a child fails the test even when the child is killed, not exited.
// With run_as, the child drops every group and takes that uid and gid
// before exec (the parent must be root); it exits 126 if that fails.
struct Credentials {
  uid_t uid = 0;
  gid_t gid = 0;
};

class Process {
 public:
  Process(const std::string& program, std::vector<std::string> args, const std::filesystem::path& log_file,
          std::optional<Credentials> run_as = std::nullopt);
  ~Process();
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  pid_t pid() const { return pid_; }
  bool running();
  void kill(int signal);
  // Waits for exit up to timeout; returns the exit code, 128+signal when
  // killed by a signal, or -1 on time-out.
  int wait(std::chrono::milliseconds timeout = std::chrono::seconds(10));
  std::string log() const;  // the log file's contents

 private:
  pid_t pid_ = -1;
  int status_ = -1;
  bool exited_ = false;
  std::filesystem::path log_file_;
};

}  // namespace zstore::testing
