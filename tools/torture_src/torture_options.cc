#include "tools/torture_src/torture_options.h"

#include <charconv>
#include <cmath>
#include <string_view>

namespace zstore::torture {

const char* usage() {
  return "usage: zstore-torture [--minutes N] [--ha [--ha-fault F] [--wait-synced]] [--fault kill|power]\n"
         "                      [--sync P] [--seed S] [--min-up-ms MS] [--max-up-ms MS]\n"
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
         "  exit: 0 no violation, 1 violations or a server failed, 2 usage error\n";
}

namespace {

template <typename T>
bool parse_number(std::string_view text, T* out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size();
}

}  // namespace

std::variant<TortureOptions, std::string> parse_options(int argc, char** argv) {
  TortureOptions o;
  bool fault_given = false;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    auto value = [&](std::string_view flag) -> std::variant<std::string_view, std::string> {
      if (i + 1 >= argc) return std::string(flag) + " needs a value";
      return std::string_view(argv[++i]);
    };
    if (a == "--help" || a == "-h") {
      o.help = true;
    } else if (a == "--ha") {
      o.ha = true;
    } else if (a == "--wait-synced") {
      o.wait_synced = true;
    } else if (a == "--ha-fault") {
      auto v = value(a);
      if (auto* err = std::get_if<std::string>(&v)) return *err;
      auto text = std::get<std::string_view>(v);
      if (text == "one") o.ha_fault = HaFault::kOne;
      else if (text == "both") o.ha_fault = HaFault::kBoth;
      else if (text == "staggered") o.ha_fault = HaFault::kStaggered;
      else if (text == "partition") o.ha_fault = HaFault::kPartition;
      else return "bad value '" + std::string(text) + "' for --ha-fault (one, both, staggered or partition)";
      fault_given = true;
    } else if (a == "--fault" || a == "--sync") {
      auto v = value(a);
      if (auto* err = std::get_if<std::string>(&v)) return *err;
      auto text = std::string(std::get<std::string_view>(v));
      if (a == "--fault") {
        if (text != "kill" && text != "power") return "bad value '" + text + "' for --fault (kill or power)";
        o.power_cut = text == "power";
      } else {
        if (text != "always" && text != "batch" && text != "none") {
          return "bad value '" + text + "' for --sync (always, batch or none)";
        }
        o.sync = text;
      }
    } else if (a == "--minutes" || a == "--seed" || a == "--min-up-ms" || a == "--max-up-ms") {
      auto v = value(a);
      if (auto* err = std::get_if<std::string>(&v)) return *err;
      auto text = std::get<std::string_view>(v);
      bool ok = false;
      if (a == "--minutes") {
        try {
          std::size_t used = 0;
          o.minutes = std::stod(std::string(text), &used);
          ok = used == text.size() && std::isfinite(o.minutes) && o.minutes > 0 && o.minutes <= 24 * 60;
        } catch (const std::exception&) {
          ok = false;
        }
      } else if (a == "--seed") {
        ok = parse_number(text, &o.seed);
      } else {
        int* target = a == "--min-up-ms" ? &o.min_up_ms : &o.max_up_ms;
        ok = parse_number(text, target) && *target >= 0 && *target <= 600000;
      }
      if (!ok) return "bad value '" + std::string(text) + "' for " + std::string(a);
    } else {
      return "unknown argument '" + std::string(a) + "'";
    }
  }
  if (o.wait_synced && !o.ha) return std::string("--wait-synced needs --ha");
  if (fault_given && !o.ha) return std::string("--ha-fault needs --ha");
  if (o.min_up_ms > o.max_up_ms) return std::string("--min-up-ms must not exceed --max-up-ms");
  return o;
}

}  // namespace zstore::torture
