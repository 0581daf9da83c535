#include "tests/ops/ops_support.h"

#include <httplib.h>
#include <rocksdb/db.h>

#include <boost/test/unit_test.hpp>

#include <fstream>
#include <memory>
#include <regex>
#include <set>
#include <sstream>

#include "storage/db/database.h"

namespace zstore::testing {

HttpReply http_request(std::uint16_t port, const std::string& method, const std::string& path,
                       const std::string& form_body, const std::string& bearer) {
  httplib::Client c("127.0.0.1", port);
  if (!bearer.empty()) c.set_bearer_token_auth(bearer);
  c.set_connection_timeout(5, 0);
  c.set_read_timeout(10, 0);
  httplib::Result r = method == "GET"      ? c.Get(path)
                      : method == "POST"   ? c.Post(path, form_body, "application/x-www-form-urlencoded")
                      : method == "PUT"    ? c.Put(path, form_body, "text/plain")
                      : method == "DELETE" ? c.Delete(path)
                                           : c.Options(path);
  if (!r) return {};
  return {r->status, r->body, r->get_header_value("Allow")};
}

std::map<std::string, double> parse_prometheus(const std::string& text) {
  // Names as Prometheus allows them, less upper case and colons.
  static const std::regex sample(
      R"(^([a-z_][a-z0-9_]*)(\{[a-z_][a-z0-9_]*="[^"]*"(,[a-z_][a-z0-9_]*="[^"]*")*\})? ([0-9.eE+-]+)$)");
  static const std::regex help(R"(^# (HELP|TYPE) ([a-z_][a-z0-9_]*) (.+)$)");
  std::map<std::string, double> out;
  std::set<std::string> helped, typed;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_match(line, m, help)) {
      (m[1] == "HELP" ? helped : typed).insert(m[2]);
      if (m[1] == "TYPE") BOOST_TEST((m[3] == "counter" || m[3] == "gauge"), line);
      continue;
    }
    BOOST_REQUIRE_MESSAGE(std::regex_match(line, m, sample), "not a Prometheus sample line: '" + line + "'");
    BOOST_TEST(m[1].str().rfind("zstore_", 0) == 0u, line);
    BOOST_TEST((helped.count(m[1]) && typed.count(m[1])), "no HELP/TYPE before " + line);
    out[m[1].str() + m[2].str()] = std::stod(m[4]);
  }
  return out;
}

double metric(const std::map<std::string, double>& m, const std::string& sample) {
  auto it = m.find(sample);
  BOOST_REQUIRE_MESSAGE(it != m.end(), "metric " + sample + " missing");
  return it->second;
}

HttpZstored::HttpZstored(std::vector<std::string> extra)
    : http_port(free_port()), server([&] {
        extra.insert(extra.end(), {"--http-port", std::to_string(http_port)});
        return extra;
      }()) {}

std::map<std::string, double> scrape_metrics(std::uint16_t port) {
  HttpReply r = http_request(port, "GET", "/metrics");
  BOOST_REQUIRE_EQUAL(r.status, 200);
  return parse_prometheus(r.body);
}

std::map<std::string, double> HttpZstored::metrics() { return scrape_metrics(http_port); }

std::map<std::string, std::map<std::string, std::string>> dump_columns(const std::string& dir) {
  storage::DatabaseOptions o;
  o.read_only = true;
  std::unique_ptr<storage::Database> db;
  auto s = storage::Database::Open(dir, o, &db);
  BOOST_REQUIRE_MESSAGE(s.ok(), s.message());
  std::map<std::string, std::map<std::string, std::string>> out;
  for (std::size_t i = 0; i < storage::kColumnCount; ++i) {
    auto column = static_cast<storage::Column>(i);
    std::unique_ptr<rocksdb::Iterator> it(db->db()->NewIterator(rocksdb::ReadOptions(), db->handle(column)));
    auto& rows = out[std::string(storage::column_name(column))];
    for (it->SeekToFirst(); it->Valid(); it->Next()) rows[it->key().ToString()] = it->value().ToString();
    BOOST_REQUIRE(it->status().ok());
  }
  return out;
}

std::uint64_t status_kib(int pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::stoull(line.substr(field.size() + 1));
  }
  return 0;
}

bool reset_peak_rss(int pid) {
  std::ofstream out("/proc/" + std::to_string(pid) + "/clear_refs");
  out << "5";
  out.flush();
  return static_cast<bool>(out);
}

int run_command(const std::vector<std::string>& argv, std::string* output) {
  TempDir logs;
  Process p(argv[0], std::vector<std::string>(argv.begin() + 1, argv.end()), logs.path() / "out.log");
  int rc = p.wait(std::chrono::seconds(30));
  *output += p.log();
  return rc;
}

}  // namespace zstore::testing
