// Tests of Status (storage/db/status.h) and of the one conversion from
// rocksdb::Status (storage/db/rocks_status.h): callers branch on the code.
#include "storage/db/status.h"

#include <rocksdb/status.h>

#include <boost/test/unit_test.hpp>
#include <string>

#include "storage/db/rocks_status.h"

namespace zstore::storage {
namespace {

using Code = Status::Code;

// Exactly one predicate holds for a failure: its code's.
void check_only(const Status& s, Code code) {
  BOOST_CHECK(s.code() == code);
  BOOST_TEST(!s.ok());
  BOOST_TEST(s.IsIoError() == (code == Code::kIoError));
  BOOST_TEST(s.IsNoSpace() == (code == Code::kNoSpace));
  BOOST_TEST(s.IsCorruption() == (code == Code::kCorruption));
  BOOST_TEST(s.IsRefused() == (code == Code::kRefused));
  BOOST_TEST(s.IsInvalidArgument() == (code == Code::kInvalidArgument));
}

BOOST_AUTO_TEST_CASE(ok_has_no_code_and_no_message) {
  Status s = Status::Ok();
  BOOST_TEST(s.ok());
  BOOST_CHECK(s.code() == Code::kOk);
  BOOST_TEST(!s.IsIoError());
  BOOST_TEST(!s.IsRefused());
  BOOST_TEST(s.message().empty());
  BOOST_TEST(s.ToString() == "OK");
}

BOOST_AUTO_TEST_CASE(each_factory_gives_its_code_and_keeps_the_message) {
  check_only(Status::IoError("a"), Code::kIoError);
  check_only(Status::NoSpace("a"), Code::kNoSpace);
  check_only(Status::Corruption("a"), Code::kCorruption);
  check_only(Status::Refused("a"), Code::kRefused);
  check_only(Status::InvalidArgument("a"), Code::kInvalidArgument);
  BOOST_TEST(Status::Corruption("corrupt CHP entry").message() == "corrupt CHP entry");
}

BOOST_AUTO_TEST_CASE(to_string_prefixes_the_code_name) {
  BOOST_TEST(Status::IoError("write failed").ToString() == "IO error: write failed");
  BOOST_TEST(Status::NoSpace("disk").ToString() == "No space: disk");
  BOOST_TEST(Status::Corruption("bad run").ToString() == "Corruption: bad run");
  BOOST_TEST(Status::Refused("read-only").ToString() == "Refused: read-only");
  BOOST_TEST(Status::InvalidArgument("seq").ToString() == "Invalid argument: seq");
}

BOOST_AUTO_TEST_CASE(a_status_made_from_a_code_keeps_it) {
  Status cause = Status::NoSpace("write failed");
  Status s(cause.code(), "writes suspended: " + cause.message());
  check_only(s, Code::kNoSpace);
  BOOST_TEST(s.message() == "writes suspended: write failed");
  Status ok(Code::kOk, "ignored");
  BOOST_TEST(ok.ok());
  BOOST_TEST(ok.message().empty());
}

BOOST_AUTO_TEST_CASE(rocksdb_codes_convert) {
  BOOST_TEST(from_rocks(rocksdb::Status::OK(), "read").ok());
  check_only(from_rocks(rocksdb::Status::IOError("eio"), "read"), Code::kIoError);
  check_only(from_rocks(rocksdb::Status::Corruption("bad block"), "read"), Code::kCorruption);
  check_only(from_rocks(rocksdb::Status::InvalidArgument("no db"), "open"), Code::kInvalidArgument);
}

BOOST_AUTO_TEST_CASE(rocksdb_no_space_is_no_space_not_an_io_error) {
  rocksdb::Status enospc = rocksdb::Status::NoSpace("write");
  BOOST_REQUIRE(enospc.IsIOError());  // what makes the order of the checks matter
  check_only(from_rocks(enospc, "write failed"), Code::kNoSpace);
  check_only(from_rocks(rocksdb::Status::IOError(rocksdb::Status::kNoSpace), "write failed"), Code::kNoSpace);
}

BOOST_AUTO_TEST_CASE(other_rocksdb_failures_are_io_errors) {
  check_only(from_rocks(rocksdb::Status::Busy("b"), "write"), Code::kIoError);
  check_only(from_rocks(rocksdb::Status::TimedOut("t"), "write"), Code::kIoError);
  check_only(from_rocks(rocksdb::Status::NotSupported("n"), "write"), Code::kIoError);
  check_only(from_rocks(rocksdb::Status::NotFound("f"), "read"), Code::kIoError);
}

BOOST_AUTO_TEST_CASE(the_message_names_the_operation_then_rocksdbs_text) {
  rocksdb::Status rs = rocksdb::Status::Corruption("block checksum mismatch");
  Status s = from_rocks(rs, "record read");
  BOOST_TEST(s.message() == "record read: " + rs.ToString());
  BOOST_TEST(s.ToString() == "Corruption: record read: " + rs.ToString());
}

}  // namespace
}  // namespace zstore::storage
