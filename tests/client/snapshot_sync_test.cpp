#include "client/snapshot_sync.h"

#include <boost/test/unit_test.hpp>

namespace chp = zstore::protocol::chp;
using zstore::client::SnapshotSync;

BOOST_AUTO_TEST_CASE(collects_entries_in_the_subtree_and_buffered_updates) {
  SnapshotSync sync("/a/", 10);
  sync.add_entry({"/a/1", 3, "", "", "x"});
  sync.add_entry({"/b/1", 3, "", "", "outside"});
  BOOST_CHECK(sync.buffer_update({"/a/2", 4, "", "", "y"}));
  auto done = sync.finish(3);
  BOOST_CHECK_EQUAL(done.sequence, 3u);
  BOOST_CHECK_EQUAL(done.entries.size(), 1u);
  BOOST_CHECK(done.entries.contains("/a/1"));
  BOOST_REQUIRE_EQUAL(done.updates.size(), 1u);
  BOOST_CHECK_EQUAL(done.updates[0].key, "/a/2");
}

BOOST_AUTO_TEST_CASE(a_new_request_forgets_entries_but_keeps_updates) {
  SnapshotSync sync("", 10);
  sync.add_entry({"from-first-request", 1, "", "", "x"});
  BOOST_CHECK(sync.buffer_update({"k", 2, "", "", "y"}));
  sync.restart_request();
  sync.add_entry({"from-second-request", 1, "", "", "x"});
  auto done = sync.finish(1);
  BOOST_CHECK_EQUAL(done.entries.size(), 1u);
  BOOST_CHECK(done.entries.contains("from-second-request"));
  BOOST_CHECK_EQUAL(done.updates.size(), 1u);
}

BOOST_AUTO_TEST_CASE(a_full_buffer_refuses_updates) {
  SnapshotSync sync("", 2);
  BOOST_CHECK(sync.buffer_update({"a", 1, "", "", "1"}));
  BOOST_CHECK(sync.buffer_update({"b", 2, "", "", "2"}));
  BOOST_CHECK(!sync.buffer_update({"c", 3, "", "", "3"}));
}

BOOST_AUTO_TEST_CASE(a_later_entry_for_the_same_key_wins) {
  SnapshotSync sync("", 2);
  sync.add_entry({"k", 1, "", "", "old"});
  sync.add_entry({"k", 2, "", "", "new"});
  BOOST_CHECK_EQUAL(sync.finish(2).entries.at("k").body, "new");
}

BOOST_AUTO_TEST_CASE(kthxbai_properties_say_whether_the_server_resumes) {
  using zstore::client::read_kthxbai;
  BOOST_CHECK(!read_kthxbai("").offers_resume);  // a reference server
  BOOST_CHECK(read_kthxbai("epochs=0:5\nhistory-from=3\n").offers_resume);
  BOOST_CHECK(!read_kthxbai("history-from=3\n").resumed);
  BOOST_CHECK(read_kthxbai("history-from=3\nresumed=1\n").resumed);
  BOOST_CHECK(!read_kthxbai("resumed=0\n").resumed);
  BOOST_CHECK(!read_kthxbai("not a property").offers_resume);  // malformed: nothing
}
