#include "tools/torture_src/torture_options.h"

#include <charconv>
#include <cmath>
#include <optional>
#include <string>
#include <string_view>

namespace zstore::torture {

const char* usage() {
  return "usage: zstore-torture [--minutes N] [--ha [--ha-fault F] [--wait-synced]] [--fault kill|power]\n"
         "                      [--sync P] [--seed S] [--min-up-ms MS] [--max-up-ms MS]\n"
         "                      [--hostile N [--hostile-kinds K,..] [--hostile-connections M]] [--counters N]\n"
         "  SIGKILLs zstored (with --ha: either member of a Binary Star pair) at random moments\n"
         "  under CHP and Dafka load, restarts it and checks nothing published or ACKed was lost.\n"
         "  --minutes N     run time (default 1; fractions allowed)\n"
         "  --ha-fault F    with --ha, what each cycle does: one (kill one member; default), both (kill\n"
         "                  both, restart in a random order), staggered (kill one, the survivor serves,\n"
         "                  kill it, restart both in a random order), partition (cut the HA link while\n"
         "                  both serve, then heal it)\n"
         "  --wait-synced   with --ha: start the load, and resume it after a restart, only once the\n"
         "                  passive logged a completed sync (leaves out joins under load)\n"
         "  --fault power   every kill is also a power cut: the servers' files keep only what was\n"
         "                  synced (zstored --test-power-cut); default kill (SIGKILL alone)\n"
         "  --sync P        the servers' --sync policy (always, batch or none; default: zstored's)\n"
         "  --seed S        random seed (default: from the clock; printed)\n"
         "  --min-up-ms MS  shortest time between a restart and the next kill (default 300)\n"
         "  --max-up-ms MS  longest (default 3000)\n"
         "  --hostile N     N hostile clients (0-64, default 0; not with --ha) misbehave against the server's\n"
         "                  CHP and HTTP ports during the run, while a good client checks that a write's\n"
         "                  publish round trip and /healthz each answer within 2 s\n"
         "  --hostile-kinds K,..  what they do, in turn (default all): idle, slowsub, snapshot, ha,\n"
         "                  malformed, http (docs/torture.md)\n"
         "  --hostile-connections M  the most connections one hostile client holds (1-4096, default 16)\n"
         "  --counters N    N clients increment one counter with conditional writes (0-16); at the end\n"
         "                  its value must be the number of increments reported applied. Default 2 under\n"
         "                  --sync always, except --ha-fault staggered (0); not with partition\n"
         "  exit: 0 no violation, 1 violations or a server failed, 2 usage error\n";
}

namespace {

template <typename T>
bool parse_number(std::string_view text, T* out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size();
}

// "idle,http" -> the kinds; an error message on an unknown or repeated one.
std::variant<std::vector<HostileKind>, std::string> parse_kinds(std::string_view text) {
  std::vector<HostileKind> kinds;
  while (!text.empty()) {
    auto comma = text.find(',');
    auto name = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    bool found = false;
    for (int k = 0; k < kHostileKinds && !found; ++k) {
      auto kind = static_cast<HostileKind>(k);
      if (name != hostile_kind_name(kind)) continue;
      for (auto seen : kinds) {
        if (seen == kind) return "--hostile-kinds names '" + std::string(name) + "' twice";
      }
      kinds.push_back(kind);
      found = true;
    }
    if (!found) {
      return "bad value '" + std::string(name) + "' for --hostile-kinds (idle, slowsub, snapshot, ha, malformed, http)";
    }
  }
  if (kinds.empty()) return std::string("--hostile-kinds needs at least one kind");
  return kinds;
}

}  // namespace

const char* hostile_kind_name(HostileKind kind) {
  switch (kind) {
    case HostileKind::kIdle:
      return "idle";
    case HostileKind::kSlowSub:
      return "slowsub";
    case HostileKind::kSnapshot:
      return "snapshot";
    case HostileKind::kHa:
      return "ha";
    case HostileKind::kMalformed:
      return "malformed";
    case HostileKind::kHttp:
      return "http";
  }
  return "?";
}

namespace {

// --ha-fault, --fault or --sync (flag) set from text.
std::optional<std::string> set_choice(TortureOptions& o, std::string_view flag, std::string_view text) {
  if (flag == "--ha-fault") {
    if (text == "one")
      o.ha_fault = HaFault::kOne;
    else if (text == "both")
      o.ha_fault = HaFault::kBoth;
    else if (text == "staggered")
      o.ha_fault = HaFault::kStaggered;
    else if (text == "partition")
      o.ha_fault = HaFault::kPartition;
    else
      return "bad value '" + std::string(text) + "' for --ha-fault (one, both, staggered or partition)";
  } else if (flag == "--fault") {
    if (text != "kill" && text != "power") return "bad value '" + std::string(text) + "' for --fault (kill or power)";
    o.power_cut = text == "power";
  } else {
    if (text != "always" && text != "batch" && text != "none") {
      return "bad value '" + std::string(text) + "' for --sync (always, batch or none)";
    }
    o.sync = std::string(text);
  }
  return std::nullopt;
}

// --minutes: a positive number of minutes, at most a day (fractions allowed).
bool parse_minutes(std::string_view text, double* out) {
  try {
    std::size_t used = 0;
    *out = std::stod(std::string(text), &used);
    return used == text.size() && std::isfinite(*out) && *out > 0 && *out <= 24 * 60;
  } catch (const std::exception&) {
    return false;
  }
}

// A numeric flag set from text; false when text is no number in its range.
bool set_number(TortureOptions& o, std::string_view flag, std::string_view text) {
  if (flag == "--minutes") return parse_minutes(text, &o.minutes);
  if (flag == "--seed") return parse_number(text, &o.seed);
  if (flag == "--hostile") return parse_number(text, &o.hostile) && o.hostile >= 0 && o.hostile <= 64;
  if (flag == "--counters") return parse_number(text, &o.counters) && o.counters >= 0 && o.counters <= 16;
  if (flag == "--hostile-connections") {
    return parse_number(text, &o.hostile_connections) && o.hostile_connections >= 1 && o.hostile_connections <= 4096;
  }
  int* target = flag == "--min-up-ms" ? &o.min_up_ms : &o.max_up_ms;
  return parse_number(text, target) && *target >= 0 && *target <= 600000;
}

bool takes_value(std::string_view flag) {
  for (std::string_view f : {"--ha-fault", "--fault", "--sync", "--hostile-kinds", "--hostile", "--hostile-connections",
                             "--counters", "--minutes", "--seed", "--min-up-ms", "--max-up-ms"}) {
    if (flag == f) return true;
  }
  return false;
}

// The flag's value set from text, or why not.
std::optional<std::string> set_value(TortureOptions& o, std::string_view flag, std::string_view text) {
  if (flag == "--ha-fault" || flag == "--fault" || flag == "--sync") return set_choice(o, flag, text);
  if (flag == "--hostile-kinds") {
    auto kinds = parse_kinds(text);
    if (auto* err = std::get_if<std::string>(&kinds)) return *err;
    o.hostile_kinds = std::get<std::vector<HostileKind>>(kinds);
    return std::nullopt;
  }
  if (!set_number(o, flag, text)) return "bad value '" + std::string(text) + "' for " + std::string(flag);
  return std::nullopt;
}

}  // namespace

std::variant<TortureOptions, std::string> parse_options(int argc, char** argv) {
  TortureOptions o;
  bool fault_given = false;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a == "--help" || a == "-h") {
      o.help = true;
    } else if (a == "--ha") {
      o.ha = true;
    } else if (a == "--wait-synced") {
      o.wait_synced = true;
    } else if (!takes_value(a)) {
      return "unknown argument '" + std::string(a) + "'";
    } else if (i + 1 >= argc) {
      return std::string(a) + " needs a value";
    } else if (auto err = set_value(o, a, argv[++i])) {
      return *err;
    } else if (a == "--ha-fault") {
      fault_given = true;
    }
  }
  if (o.wait_synced && !o.ha) return std::string("--wait-synced needs --ha");
  if (fault_given && !o.ha) return std::string("--ha-fault needs --ha");
  if (o.hostile > 0 && o.ha) return std::string("--hostile needs a single server (not --ha)");
  if (o.min_up_ms > o.max_up_ms) return std::string("--min-up-ms must not exceed --max-up-ms");
  const bool partitions = o.ha && o.ha_fault == HaFault::kPartition;
  if (o.counters > 0 && partitions) {
    return std::string("--counters needs a pair that is never partitioned (both members may apply an increment)");
  }
  // On by default where every answer must stay true through the faults:
  // under --sync always, one server, or a pair with one member killed or
  // both together (docs/torture.md; staggered kills may lose answers).
  const bool faults_keep_answers = !o.ha || o.ha_fault == HaFault::kOne || o.ha_fault == HaFault::kBoth;
  const bool guaranteed = faults_keep_answers && (o.sync.empty() || o.sync == "always");
  if (o.counters < 0) o.counters = guaranteed ? 2 : 0;
  return o;
}

}  // namespace zstore::torture
