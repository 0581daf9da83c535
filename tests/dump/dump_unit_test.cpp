// zstore-dump pieces: byte encodings of the output, the command line, and
// the progress line (with a fake clock).
#include <boost/test/unit_test.hpp>

#include <sstream>

#include "tools/dump/bytes_format.h"
#include "tools/dump/dump_options.h"
#include "tools/dump/progress.h"

using namespace zstore::dump;
using namespace std::chrono_literals;

BOOST_AUTO_TEST_SUITE(bytes_format)

BOOST_AUTO_TEST_CASE(base64_matches_rfc4648_vectors) {
  BOOST_TEST(base64("") == "");
  BOOST_TEST(base64("f") == "Zg==");
  BOOST_TEST(base64("fo") == "Zm8=");
  BOOST_TEST(base64("foo") == "Zm9v");
  BOOST_TEST(base64("foob") == "Zm9vYg==");
  BOOST_TEST(base64("fooba") == "Zm9vYmE=");
  BOOST_TEST(base64("foobar") == "Zm9vYmFy");
  BOOST_TEST(base64(std::string("\xff\xfe\x00", 3)) == "//4A");
}

BOOST_AUTO_TEST_CASE(utf8_validity_follows_rfc3629) {
  BOOST_TEST(is_valid_utf8("plain ascii\n\t\x01"));
  BOOST_TEST(is_valid_utf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));
  BOOST_TEST(!is_valid_utf8("\xff"));
  BOOST_TEST(!is_valid_utf8("\xc3"));              // truncated
  BOOST_TEST(!is_valid_utf8("\xc0\xaf"));          // overlong
  BOOST_TEST(!is_valid_utf8("\xed\xa0\x80"));      // surrogate
  BOOST_TEST(!is_valid_utf8("\xf4\x90\x80\x80"));  // above U+10FFFF
}

BOOST_AUTO_TEST_CASE(put_bytes_marks_base64_only_when_needed) {
  nlohmann::ordered_json j;
  put_bytes(j, "value", "caf\xc3\xa9");
  put_bytes(j, "key", std::string("a\0\xff", 3));
  BOOST_TEST(j["value"] == "caf\xc3\xa9");
  BOOST_TEST(!j.contains("value_encoding"));
  BOOST_TEST(j["key"] == "YQD/");
  BOOST_TEST(j["key_encoding"] == "base64");
  BOOST_CHECK_NO_THROW(j.dump());
}

BOOST_AUTO_TEST_CASE(text_escapes_only_non_printable_bytes) {
  BOOST_TEST(text("blue sky") == "blue sky");
  BOOST_TEST(text(std::string("a\0\xff\n", 4)) == "a\\x00\\xff\\n");
  BOOST_TEST(hex(std::string("\x01\xab", 2)) == "01ab");
  BOOST_TEST(iso8601_ms(1795420187088) == "2026-11-23T07:49:47.088Z");
  BOOST_TEST(iso8601_ms(5) == "1970-01-01T00:00:00.005Z");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(options)

ParseOutcome parse(std::vector<std::string> args, DumpOptions* o, std::string* error) {
  return parse_dump_options(args, nullptr, o, error);
}

BOOST_AUTO_TEST_CASE(commands_and_their_options_parse) {
  DumpOptions o;
  std::string error;
  BOOST_REQUIRE(parse({"--data-dir", "d", "dafka", "--topic", "t", "--partition", "P", "--from", "5", "--count", "2",
                       "--format", "json"},
                      &o, &error) == ParseOutcome::kRun);
  BOOST_TEST(o.data_dir == "d");
  BOOST_TEST((o.command == Command::kDafka));
  BOOST_TEST((o.format == Format::kJson));
  BOOST_TEST(*o.topic == "t");
  BOOST_TEST(*o.partition == "P");
  BOOST_TEST(o.from == 5u);
  BOOST_TEST(*o.count == 2u);
  DumpOptions c;
  BOOST_REQUIRE(parse({"chp", "--prefix", "/a/", "--data-dir", "x"}, &c, &error) == ParseOutcome::kRun);
  BOOST_TEST((c.command == Command::kChp));
  BOOST_TEST((c.format == Format::kText));
  BOOST_TEST(c.prefix == "/a/");
  BOOST_TEST((parse({"--help"}, &c, &error) == ParseOutcome::kHelp));
}

BOOST_AUTO_TEST_CASE(bad_command_lines_are_refused_with_a_reason) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--data-dir", "d"}, "missing command"},
      {{"chp"}, "--data-dir"},
      {{"--data-dir", "d", "dump"}, "unknown command"},
      {{"--data-dir", "d", "chp", "extra"}, "too many"},
      {{"--data-dir", "d", "--format", "xml", "chp"}, "--format"},
      {{"--data-dir", "d", "chp", "--topic", "t"}, "--topic does not apply"},
      {{"--data-dir", "d", "dafka", "--prefix", "p"}, "--prefix does not apply"},
      {{"--data-dir", "d", "stats", "--count", "1"}, "--count does not apply"},
      {{"--data-dir", "d", "dafka", "--from", "-1"}, "--from"},
      {{"--data-dir", "d", "dafka", "--count", "12x"}, "--count"},
      {{"--data-dir", "d", "dafka", "--count", "99999999999999999999"}, "--count"},
      {{"--data-dir", "d", "chp", "--bogus"}, "bogus"},
      {{"--data-dir", "d", "--data-dir", "e", "chp"}, "data-dir"},
  };
  for (const auto& [args, expected] : cases) {
    DumpOptions o;
    std::string error;
    BOOST_TEST_CONTEXT(args.back()) {
      BOOST_TEST((parse(args, &o, &error) == ParseOutcome::kError));
      BOOST_TEST(error.find(expected) != std::string::npos, error);
    }
  }
}

BOOST_AUTO_TEST_CASE(progress_delay_comes_from_the_environment) {
  DumpOptions o;
  std::string error;
  BOOST_TEST((parse_dump_options({"--data-dir", "d", "chp"}, nullptr, &o, &error) == ParseOutcome::kRun));
  BOOST_TEST(o.progress_after.count() == 2000);
  BOOST_TEST((parse_dump_options({"--data-dir", "d", "chp"}, "0", &o, &error) == ParseOutcome::kRun));
  BOOST_TEST(o.progress_after.count() == 0);
  BOOST_TEST((parse_dump_options({"--data-dir", "d", "chp"}, "soon", &o, &error) == ParseOutcome::kError));
  BOOST_TEST(error.find("ZSTORE_DUMP_PROGRESS_AFTER_MS") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(progress)

struct FakeClock {
  Progress::Clock::time_point now{};
  std::function<Progress::Clock::time_point()> fn() {
    return [this] { return now; };
  }
};

void tick(Progress& p, int n) {
  for (int i = 0; i < n; ++i) p.tick();
}

BOOST_AUTO_TEST_CASE(silent_for_the_first_two_seconds_then_a_rate_line) {
  FakeClock clock;
  std::ostringstream out;
  Progress p(out, true, "keys", 2s, clock.fn());  // reads the clock every 256 items
  tick(p, 10240);
  clock.now += 1900ms;
  tick(p, 10240);
  BOOST_TEST(out.str().empty());
  clock.now += 200ms;  // 2.1 s
  tick(p, 256);
  BOOST_TEST(out.str().find("20736 keys, 9874/s") != std::string::npos, out.str());
  BOOST_TEST(out.str().front() == '\r');
  std::string before = out.str();
  clock.now += 100ms;  // too soon for another line
  tick(p, 256);
  BOOST_TEST(out.str() == before);
  clock.now += 500ms;
  tick(p, 256);
  BOOST_TEST(out.str().find("21248 keys") != std::string::npos, out.str());
  tick(p, 10);
  p.finish();
  BOOST_TEST(out.str().find("21258 keys") != std::string::npos, out.str());
  BOOST_TEST(out.str().back() == '\n');
}

BOOST_AUTO_TEST_CASE(disabled_or_quick_dumps_print_nothing) {
  FakeClock clock;
  std::ostringstream off, quick;
  {
    Progress p(off, false, "keys", 2s, clock.fn());
    Progress q(quick, true, "keys", 2s, clock.fn());
    tick(p, 5000);
    tick(q, 5000);
    clock.now += 10s;
    tick(p, 5000);
    q.finish();
  }
  BOOST_TEST(off.str().empty());
  BOOST_TEST(quick.str().empty());
}

BOOST_AUTO_TEST_SUITE_END()
