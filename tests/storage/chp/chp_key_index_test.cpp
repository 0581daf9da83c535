// ChpKeyIndex (storage/chp/chp_key_index.h): the bounded open-addressing table
// fingerprint -> expiry that spares ChpStore the read of a key's previous
// entry. Checked against std::unordered_map under random operations, with
// fingerprints chosen to share home slots (runs, wrap-around at the end of
// the table, backward-shift deletion), at its memory bound, and for its
// keyed fingerprints.
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "storage/chp/chp_key_index.h"

using zstore::storage::ChpKeyIndex;

namespace {

constexpr std::size_t kSlotBytes = 24;                  // one slot: fingerprint, expiry and sequence
constexpr std::size_t kSmallBytes = 1024 * kSlotBytes;  // the smallest index: 1024 slots
constexpr std::size_t kSmallSlots = 1024;
constexpr std::size_t kSmallKeys = kSmallSlots * 3 / 4;  // its most keys (3/4 load)

// fp 0 is stored as 1 (ChpKeyIndex::nonzero, 0 marks an empty slot): 0 and
// 1 are one and the same key for the index. fingerprint() never returns 0.
std::uint64_t same_key(std::uint64_t fp) { return fp == 0 ? 1 : fp; }

// Whether index holds fp with expiry want (or does not hold it: want null).
void check_one(const ChpKeyIndex& index, std::uint64_t fp, const std::uint64_t* want, const char* when) {
  std::uint64_t got = 0xdeadbeef;
  bool found = index.find(fp, &got);
  if (want == nullptr) {
    BOOST_REQUIRE_MESSAGE(!found, when << ": fp " << fp << " found (expiry " << got << "), expected absent");
  } else {
    BOOST_REQUIRE_MESSAGE(found, when << ": fp " << fp << " not found, expected expiry " << *want);
    BOOST_REQUIRE_MESSAGE(got == *want, when << ": fp " << fp << " expiry " << got << ", expected " << *want);
  }
}

using Model = std::unordered_map<std::uint64_t, std::uint64_t>;

void check_model(const ChpKeyIndex& index, const Model& model, const std::vector<std::uint64_t>& fps,
                 const char* when) {
  for (std::uint64_t fp : fps) {
    auto it = model.find(same_key(fp));
    check_one(index, fp, it == model.end() ? nullptr : &it->second, when);
  }
  BOOST_REQUIRE_EQUAL(index.size(), model.size());
}

// Fingerprints that share home slots at every table size up to 2^20 slots:
// multiples of 1 << 20 (home 0, with fp 0 and 1 among them), and ones with
// the low 20 bits set (home: the last slot, so their runs wrap to slot 0),
// plus random ones.
std::vector<std::uint64_t> mixed_fingerprints(std::mt19937_64& rng, std::size_t n) {
  std::unordered_set<std::uint64_t> seen;
  std::vector<std::uint64_t> fps;
  auto add = [&](std::uint64_t fp) {
    if (seen.insert(fp).second) fps.push_back(fp);
  };
  add(0);
  add(1);
  for (std::uint64_t k = 1; k <= 300; ++k) add(k << 20);             // home 0
  for (std::uint64_t k = 0; k < 300; ++k) add((k << 20) | 0xfffff);  // home: the last slot
  for (std::uint64_t k = 0; k < 100; ++k) add((k << 20) | 0xffffe);  // the one before it
  for (std::uint64_t k = 0; k < 100; ++k) add((k << 20) | 1);        // home 1 (0 and 1's run)
  while (fps.size() < n) add(rng() | 2);                             // never 0 or 1 by chance
  std::shuffle(fps.begin(), fps.end(), rng);
  return fps;
}

std::uint64_t random_expiry(std::mt19937_64& rng) {
  switch (rng() % 4) {
    case 0:
      return 0;  // no expiry
    case 1:
      return 1 + rng() % 1000;
    default:
      return rng();
  }
}

}  // namespace

BOOST_AUTO_TEST_CASE(random_operations_match_an_unordered_map) {
  std::mt19937_64 rng(20240611);
  const auto fps = mixed_fingerprints(rng, 5000);
  ChpKeyIndex index;  // the default bound: 5,000 keys always fit
  index.clear(true);  // as the store does for an empty map
  Model model;
  for (int op = 1; op <= 200'000; ++op) {
    std::uint64_t fp = fps[rng() % fps.size()];
    unsigned kind = rng() % 10;
    if (kind < 5) {
      std::uint64_t at = random_expiry(rng);
      index.put(fp, at);
      model[same_key(fp)] = at;
    } else if (kind < 8) {
      index.erase(fp);
      model.erase(same_key(fp));
    } else {
      // find only: checked below like the others
    }
    auto it = model.find(same_key(fp));
    check_one(index, fp, it == model.end() ? nullptr : &it->second, "after the op");
    BOOST_REQUIRE_EQUAL(index.size(), model.size());
    if (op % 1000 == 0) check_model(index, model, fps, "full check");
  }
  BOOST_CHECK(index.complete());  // nothing was dropped for room
  BOOST_CHECK_LE(index.bytes(), ChpKeyIndex::kDefaultMaxBytes);
  BOOST_CHECK_GT(model.size(), 1000u);  // the table held a fair load, not just a handful
}

// The same on the smallest table (1024 slots, never grows) with more keys
// than fit: a put of a new key is accepted exactly while fewer than 768 keys
// are held; a refused one stays unknown and makes the index incomplete.
BOOST_AUTO_TEST_CASE(random_operations_on_a_full_table_drop_only_new_keys) {
  std::mt19937_64 rng(77);
  const auto fps = mixed_fingerprints(rng, 2000);
  ChpKeyIndex index(kSmallBytes);
  index.clear(true);
  Model held;  // what the index must hold
  bool dropped = false;
  for (int op = 1; op <= 100'000; ++op) {
    std::uint64_t fp = fps[rng() % fps.size()];
    if (rng() % 3 != 0) {
      std::uint64_t at = random_expiry(rng);
      std::uint64_t k = same_key(fp);
      if (held.count(k) || held.size() < kSmallKeys) {
        held[k] = at;
      } else {
        dropped = true;
      }
      index.put(fp, at);
    } else {
      index.erase(fp);
      held.erase(same_key(fp));
    }
    auto it = held.find(same_key(fp));
    check_one(index, fp, it == held.end() ? nullptr : &it->second, "after the op");
    BOOST_REQUIRE_EQUAL(index.size(), held.size());
    BOOST_REQUIRE_EQUAL(index.complete(), !dropped);
    BOOST_REQUIRE_LE(index.bytes(), kSmallBytes);
    if (op % 1000 == 0) check_model(index, held, fps, "full check");
  }
  BOOST_CHECK(dropped);
}

BOOST_AUTO_TEST_CASE(fingerprints_zero_and_one_are_one_key) {
  ChpKeyIndex index;
  std::uint64_t at = 0;
  BOOST_CHECK(!index.find(0, &at));
  BOOST_CHECK(!index.find(1, &at));
  index.put(0, 42);
  BOOST_CHECK(index.find(0, &at) && at == 42);
  BOOST_CHECK(index.find(1, &at) && at == 42);
  index.put(1, 43);  // the same key: updated, not added
  BOOST_CHECK_EQUAL(index.size(), 1u);
  BOOST_CHECK(index.find(0, &at) && at == 43);
  index.put(1 << 20, 7);  // same home slot as both, a different key
  BOOST_CHECK_EQUAL(index.size(), 2u);
  index.erase(0);
  BOOST_CHECK(!index.find(1, &at));
  BOOST_CHECK(index.find(1 << 20, &at) && at == 7);
  BOOST_CHECK_EQUAL(index.size(), 1u);
  index.erase(1 << 20);
  BOOST_CHECK_EQUAL(index.size(), 0u);
  index.erase(1);  // absent: nothing happens
  BOOST_CHECK_EQUAL(index.size(), 0u);
}

// Backward-shift deletion: erasing any entry of a run keeps the entries after
// it reachable from their homes. On the fixed 1024-slot table, runs that
// start in the last slots wrap around to slot 0 and meet entries homed at
// the start of the table.
BOOST_AUTO_TEST_CASE(erasing_inside_a_run_keeps_later_entries_findable) {
  std::vector<std::uint64_t> cluster;
  for (std::uint64_t home : {1021u, 1022u, 1023u, 0u, 1u, 2u, 5u}) {
    for (std::uint64_t k = 1; k <= 4; ++k) cluster.push_back((k << 20) | home);
  }
  cluster.push_back(1);  // fp 1 (and 0): home 1
  std::mt19937_64 rng(5);
  auto expiry_of = [](std::uint64_t fp) { return fp * 3 + 1; };
  for (int round = 0; round < 300; ++round) {
    std::vector<std::uint64_t> order = cluster;
    std::shuffle(order.begin(), order.end(), rng);  // insertion order decides the layout
    ChpKeyIndex index(kSmallBytes);
    Model model;
    for (std::uint64_t fp : order) {
      index.put(fp, expiry_of(fp));
      model[fp] = expiry_of(fp);
    }
    check_model(index, model, cluster, "filled");
    if (round < static_cast<int>(cluster.size())) {
      // Each entry erased on its own (one round per entry).
      std::uint64_t gone = cluster[round];
      index.erase(gone);
      model.erase(gone);
      check_model(index, model, cluster, "one erased");
      index.put(gone, 99);  // comes back
      model[gone] = 99;
      check_model(index, model, cluster, "put back");
    } else {
      // All erased in a random order, checking everything at each step,
      // with re-insertions on the way.
      std::shuffle(order.begin(), order.end(), rng);
      for (std::size_t i = 0; i < order.size(); ++i) {
        index.erase(order[i]);
        model.erase(order[i]);
        check_model(index, model, cluster, "erasing");
        if (i % 5 == 4) {
          std::uint64_t back = order[i / 2];
          index.put(back, 5);
          model[back] = 5;
          check_model(index, model, cluster, "re-put");
          index.erase(back);
          model.erase(back);
        }
      }
      BOOST_CHECK_EQUAL(index.size(), 0u);
    }
  }
}

// Growth keeps every entry (the table starts at 1024 slots and doubles),
// including the colliding ones whose homes move as the mask widens.
BOOST_AUTO_TEST_CASE(growth_keeps_every_entry) {
  std::mt19937_64 rng(9);
  auto fps = mixed_fingerprints(rng, 20'000);
  ChpKeyIndex index;
  Model model;
  for (std::size_t i = 0; i < fps.size(); ++i) {
    index.put(fps[i], i);
    model[same_key(fps[i])] = i;
    if (i % 2500 == 0) check_model(index, model, fps, "growing");
  }
  check_model(index, model, fps, "grown");
  BOOST_CHECK_EQUAL(index.bytes(), std::size_t{32768} * kSlotBytes);  // 20,000 keys: 32768 slots at 3/4 load
}

// A growth moves the previous table's entries a few per change
// (kMovesPerChange), not in one pass: right after the put that grows the
// table most entries are still in the previous one. Writes and erases of
// not yet moved keys, and finds, stay exact throughout.
BOOST_AUTO_TEST_CASE(growth_moves_entries_a_few_per_change) {
  std::mt19937_64 rng(31);
  auto fps = mixed_fingerprints(rng, 40'000);
  ChpKeyIndex index;
  index.clear(true);
  Model model;
  std::size_t next = 0;
  auto put_new = [&] {
    index.put(fps[next], next);
    model[same_key(fps[next])] = next;
    ++next;
  };
  while (next < 24'577) put_new();  // 3/4 of 32768 slots, then one more: the growth to 65536
  BOOST_REQUIRE(index.growing());
  BOOST_CHECK_EQUAL(index.bytes(), std::size_t{32768 + 65536} * kSlotBytes);
  check_model(index, model, fps, "just grown");
  // Changes of keys still in the previous table: rewrite some, erase some.
  std::size_t changes = 0;
  for (std::size_t i = 0; index.growing(); i += 7, ++changes) {
    std::uint64_t fp = fps[i % next];
    if (i % 3 == 0) {
      index.erase(fp);
      model.erase(same_key(fp));
    } else {
      index.put(fp, 1'000'000 + i);
      model[same_key(fp)] = 1'000'000 + i;
    }
    auto it = model.find(same_key(fp));
    check_one(index, fp, it == model.end() ? nullptr : &it->second, "while growing");
    BOOST_REQUIRE_EQUAL(index.size(), model.size());
  }
  BOOST_CHECK_EQUAL(changes, 32768 / ChpKeyIndex::kMovesPerChange);   // each change moved its share, no more
  BOOST_CHECK_EQUAL(index.bytes(), std::size_t{65536} * kSlotBytes);  // the previous table is freed
  check_model(index, model, fps, "grown");
  while (next < fps.size()) put_new();
  check_model(index, model, fps, "after more keys");
}

// Mappings of this process advised for transparent huge pages (VmFlags "hg"
// in /proc/self/smaps).
int huge_page_mappings() {
  std::ifstream smaps("/proc/self/smaps");
  int n = 0;
  for (std::string line; std::getline(smaps, line);) {
    if (line.rfind("VmFlags:", 0) == 0 && (line + " ").find(" hg ") != std::string::npos) ++n;
  }
  return n;
}

// A table of 2 MiB or more is a mapping of its own that asks for huge
// pages (a growth faults it in at random: 4 KiB faults stalled the reactor);
// smaller ones come from malloc. The mapping goes with the table.
// On a kernel without them the case is skipped; Boost still exits 0, so it
// runs as a ctest test of its own (label huge_pages) that the line below
// marks as skipped (tests/storage/chp/CMakeLists.txt).
bool has_transparent_huge_pages(boost::unit_test::test_unit_id) {
  if (std::filesystem::exists("/sys/kernel/mm/transparent_hugepage/enabled")) return true;
  std::cout << "skipped: no transparent huge pages (/sys/kernel/mm/transparent_hugepage)" << std::endl;
  return false;
}

BOOST_AUTO_TEST_CASE(a_table_of_2_mib_asks_for_huge_pages,
                     *boost::unit_test::label("huge_pages") *
                         boost::unit_test::precondition(has_transparent_huge_pages)) {
  std::mt19937_64 rng(47);
  auto fps = mixed_fingerprints(rng, 70'000);  // grown to 3 MiB and done moving
  int before = huge_page_mappings();
  {
    ChpKeyIndex index;
    std::size_t i = 0;
    for (; i < 40'000; ++i) index.put(fps[i], i);
    BOOST_CHECK_EQUAL(index.bytes(), std::size_t{65536} * kSlotBytes);  // 1.5 MiB
    BOOST_CHECK_EQUAL(huge_page_mappings(), before);
    for (; i < fps.size(); ++i) index.put(fps[i], i);
    BOOST_CHECK_EQUAL(index.bytes(), std::size_t{131072} * kSlotBytes);  // 3 MiB
    BOOST_CHECK_EQUAL(huge_page_mappings(), before + 1);
    for (std::size_t j = 0; j < fps.size(); j += 997) {
      std::uint64_t at = 0;
      BOOST_REQUIRE(index.find(fps[j], &at));
      BOOST_CHECK_EQUAL(at, j);
    }
    index.clear(true);
    BOOST_CHECK_EQUAL(huge_page_mappings(), before);
    for (i = 0; i < fps.size(); ++i) index.put(fps[i], i);
    BOOST_CHECK_EQUAL(huge_page_mappings(), before + 1);
  }
  BOOST_CHECK_EQUAL(huge_page_mappings(), before);
}

BOOST_AUTO_TEST_CASE(a_full_table_refuses_new_keys_and_keeps_the_rest) {
  for (std::size_t max_bytes : {kSmallBytes, kSmallBytes + 100, 5 * kSmallBytes / 2}) {
    BOOST_TEST_CONTEXT("max_bytes " << max_bytes) {
      // 16 KiB (and a little more): 1024 slots; 40 KiB: 2048 slots.
      std::size_t slots = max_bytes >= 2 * kSmallBytes ? 2 * kSmallSlots : kSmallSlots;
      std::size_t most = slots * 3 / 4;
      ChpKeyIndex index(max_bytes);
      index.clear(true);
      std::mt19937_64 rng(max_bytes);
      std::vector<std::uint64_t> fps;
      for (std::size_t i = 0; i < slots; ++i) fps.push_back(i % 4 == 0 ? (i << 20) : (rng() | 2));
      for (std::size_t i = 0; i < fps.size(); ++i) {
        index.put(fps[i], 1000 + i);
        BOOST_REQUIRE_EQUAL(index.complete(), i < most);
      }
      BOOST_CHECK(!index.complete());
      BOOST_CHECK_EQUAL(index.size(), most);
      BOOST_CHECK_LE(index.bytes(), max_bytes);
      BOOST_CHECK_EQUAL(index.bytes(), slots * kSlotBytes);
      for (std::size_t i = 0; i < fps.size(); ++i) {
        std::uint64_t want = 1000 + i;
        check_one(index, fps[i], i < most ? &want : nullptr, "full");
      }
      // An accepted key can still be updated; a refused one still refused.
      const std::uint64_t five = 5;
      const std::uint64_t six = 6;
      index.put(fps[0], five);
      check_one(index, fps[0], &five, "updated");
      index.put(fps[most], 5);
      check_one(index, fps[most], nullptr, "refused again");
      // Room made by an erase takes a new key (the index stays incomplete).
      index.erase(fps[1]);
      index.put(fps[most], six);
      check_one(index, fps[most], &six, "after an erase");
      BOOST_CHECK_EQUAL(index.size(), most);
      BOOST_CHECK(!index.complete());
    }
  }
}

BOOST_AUTO_TEST_CASE(too_small_a_bound_accepts_nothing) {
  for (std::size_t max_bytes : {std::size_t{0}, std::size_t{1000}, kSmallBytes - 1}) {
    BOOST_TEST_CONTEXT("max_bytes " << max_bytes) {
      ChpKeyIndex index(max_bytes);
      index.clear(true);
      BOOST_CHECK(index.complete());
      std::uint64_t at = 0;
      index.erase(5);  // on no table at all
      BOOST_CHECK(!index.find(5, &at));
      index.put(5, 1);
      index.put(0, 1);
      BOOST_CHECK(!index.find(5, &at));
      BOOST_CHECK(!index.find(0, &at));
      BOOST_CHECK_EQUAL(index.size(), 0u);
      BOOST_CHECK_EQUAL(index.bytes(), 0u);
      BOOST_CHECK(!index.complete());  // the put was dropped
    }
  }
}

BOOST_AUTO_TEST_CASE(clear_empties_and_sets_complete) {
  ChpKeyIndex index;
  BOOST_CHECK(!index.complete());  // fresh: it has seen no key of a map it does not know
  BOOST_CHECK_EQUAL(index.size(), 0u);
  BOOST_CHECK_EQUAL(index.bytes(), 0u);  // no table before the first put
  for (std::uint64_t fp = 2; fp < 2000; ++fp) index.put(fp, fp);
  BOOST_CHECK(!index.complete());  // puts do not make it complete
  BOOST_CHECK_EQUAL(index.size(), 1998u);
  BOOST_CHECK_GT(index.bytes(), 0u);
  index.clear(true);
  BOOST_CHECK(index.complete());
  BOOST_CHECK_EQUAL(index.size(), 0u);
  BOOST_CHECK_EQUAL(index.bytes(), 0u);
  std::uint64_t at = 0;
  for (std::uint64_t fp = 2; fp < 2000; ++fp) BOOST_REQUIRE(!index.find(fp, &at));
  index.put(7, 70);
  BOOST_CHECK(index.complete());
  BOOST_CHECK(index.find(7, &at) && at == 70);
  index.clear(false);
  BOOST_CHECK(!index.complete());
  BOOST_CHECK_EQUAL(index.size(), 0u);
  BOOST_CHECK(!index.find(7, &at));
  index.clear(true);
  BOOST_CHECK(index.complete());
}

BOOST_AUTO_TEST_CASE(fingerprints_are_stable_keyed_and_never_zero) {
  ChpKeyIndex a;
  ChpKeyIndex b;
  std::unordered_set<std::uint64_t> seen;
  for (int i = 0; i < 50'000; ++i) {
    std::string key = "key" + std::to_string(i);
    std::uint64_t fp = a.fingerprint(key);
    BOOST_REQUIRE_NE(fp, 0u);
    BOOST_REQUIRE_EQUAL(fp, a.fingerprint(key));
    BOOST_REQUIRE(seen.insert(fp).second);  // no collision among 50k keys (chance ~2^-38)
  }
  BOOST_CHECK_NE(a.fingerprint(""), 0u);
  BOOST_CHECK_EQUAL(a.fingerprint(""), a.fingerprint(std::string()));
  BOOST_CHECK_EQUAL(a.fingerprint(std::string("a\0b", 3)), a.fingerprint(std::string("a\0b", 3)));
  BOOST_CHECK_NE(a.fingerprint(std::string("a\0b", 3)), a.fingerprint(std::string("a\0c", 3)));
  // Another index draws another hash key: the same keys hash differently.
  for (const char* key : {"", "a", "key0", "key1", "user:1234", "\xff\xff", "a somewhat longer key than the others"}) {
    BOOST_CHECK_NE(a.fingerprint(key), b.fingerprint(key));
  }
  BOOST_CHECK_EQUAL(b.fingerprint("key0"), b.fingerprint("key0"));
}

// The sequence put with a key comes back from find(), also for an entry
// not yet moved from a growing table, and after the key is put again.
BOOST_AUTO_TEST_CASE(a_keys_sequence_is_kept_through_a_growth) {
  ChpKeyIndex index;
  std::vector<std::uint64_t> fps;
  for (std::uint64_t i = 0; i < 800; ++i) fps.push_back(index.fingerprint("k" + std::to_string(i)));
  for (std::uint64_t i = 0; i < fps.size(); ++i) index.put(fps[i], 0, 1000 + i);
  BOOST_REQUIRE(index.growing());  // 800 keys outgrew the first 1024 slots
  for (std::uint64_t i = 0; i < fps.size(); ++i) {
    std::uint64_t at = 1;
    std::uint64_t sequence = 0;
    BOOST_REQUIRE(index.find(fps[i], &at, &sequence));
    BOOST_TEST(sequence == 1000 + i);
    BOOST_TEST(at == 0u);
  }
  index.put(fps[0], 5, 7);
  std::uint64_t at = 0;
  std::uint64_t sequence = 0;
  BOOST_REQUIRE(index.find(fps[0], &at, &sequence));
  BOOST_TEST(sequence == 7u);
  BOOST_TEST(at == 5u);
  index.put(fps[1], 0);  // without a sequence: not known
  BOOST_REQUIRE(index.find(fps[1], &at, &sequence));
  BOOST_TEST(sequence == 0u);
}
