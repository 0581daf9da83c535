// zstored flags added for bounded operation: values reach ServerOptions and
// bad values exit 2 with a message naming the flag.
#include <boost/test/unit_test.hpp>
#include <string>
#include <vector>

#include "server/options.h"

using zstore::server::parse_options;
using zstore::server::ParseOutcome;

namespace {

ParseOutcome parse(std::vector<std::string> args) {
  args.insert(args.begin(), "zstored");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  const char* const none[] = {nullptr};
  return parse_options(static_cast<int>(argv.size()), argv.data(), none);
}

void expect_refused(std::vector<std::string> args, const std::string& flag) {
  auto out = parse(args);
  BOOST_TEST(!out.options.has_value());
  BOOST_TEST(out.exit_code == 2);
  BOOST_TEST(out.message.find(flag) != std::string::npos, out.message);
}

}  // namespace

BOOST_AUTO_TEST_CASE(dafka_fetch_retry_flags) {
  auto d = parse({});
  BOOST_REQUIRE(d.options);
  BOOST_TEST(d.options->dafka_fetch_retry_ms == 1000u);
  BOOST_TEST(d.options->dafka_fetch_retries == 10u);
  auto o = parse({"--dafka-fetch-retry-ms", "50", "--dafka-fetch-retries", "3"});
  BOOST_REQUIRE(o.options);
  BOOST_TEST(o.options->dafka_fetch_retry_ms == 50u);
  BOOST_TEST(o.options->dafka_fetch_retries == 3u);
  expect_refused({"--dafka-fetch-retry-ms", "0"}, "--dafka-fetch-retry-ms");
  expect_refused({"--dafka-fetch-retries", "0"}, "--dafka-fetch-retries");
  expect_refused({"--dafka-fetch-retries", "x"}, "dafka-fetch-retries");
}

BOOST_AUTO_TEST_CASE(min_free_bytes_flag) {
  auto d = parse({});
  BOOST_REQUIRE(d.options);
  BOOST_TEST(d.options->min_free_bytes == (1ull << 30));
  auto o = parse({"--min-free-bytes", "0"});
  BOOST_REQUIRE(o.options);
  BOOST_TEST(o.options->min_free_bytes == 0u);
  expect_refused({"--min-free-bytes", "lots"}, "min-free-bytes");
}
