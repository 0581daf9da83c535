// ChpStore: the durable CHP hashmap on a Database. It owns the sequence
// counter: apply() gives each write the next sequence and persists entries,
// their expiry index and the new last sequence in one atomic batch, so a
// sequence is never reused after a restart. Not thread-safe: one owner
// thread (the CHP reactor) calls everything; snapshot cursors may be read
// from that same thread while writes continue.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include <rocksdb/write_batch.h>

#include "storage/chp/chp_entry.h"
#include "storage/chp/chp_epochs.h"
#include "storage/chp/chp_key_index.h"
#include "storage/chp/chp_key_scan.h"
#include "storage/chp/chp_outcomes.h"
#include "storage/chp/chp_versions.h"
#include "storage/chp/chp_write.h"
#include "storage/db/database.h"
#include "storage/db/kept_iterator.h"
#include "storage/db/status.h"

namespace zstore::storage {

inline constexpr std::string_view kMetaChpLastSequence = "chp_last_sequence";
inline constexpr std::string_view kMetaChpSynced = "chp_synced";
inline constexpr std::string_view kMetaChpEpochs = "chp_epochs";
inline constexpr std::string_view kMetaChpHistoryFrom = "chp_history_from";
inline constexpr std::string_view kMetaChpHistoryCount = "chp_history_count";
inline constexpr std::string_view kMetaChpKeys = "chp_keys";
inline constexpr std::string_view kMetaChpVersionsFrom = "chp_versions_from";

// Sequences of databases written before epochs were hybrid clocks were
// (epoch << kEpochShift) | counter; their epoch list starts there.
inline constexpr unsigned kEpochShift = 40;
inline constexpr std::uint64_t kDefaultHistoryEntries = 1'000'000;

// A key's current version, what a conditional write is judged against
// (ChpStore::current_versions): its sequence, expiry and uuid.
struct ChpKeyVersion {
  static constexpr std::size_t kMaxUuid = 16;
  bool found = false;
  std::uint64_t sequence = 0;
  std::uint64_t expires_at_ms = 0;
  // The entry's uuid when it is at most kMaxUuid bytes (a longer one equals
  // no request's: uuid_is() is false).
  bool uuid_is(std::string_view uuid) const {
    return uuid_size == uuid.size() && std::string_view(uuid_.data(), uuid_size) == uuid;
  }
  void set_uuid(std::string_view uuid);

 private:
  std::array<char, kMaxUuid> uuid_{};
  std::size_t uuid_size = kMaxUuid + 1;  // none
};

// A key and its entry, as read from a snapshot.
struct ChpRecord {
  std::string key;
  ChpEntry entry;
  std::uint64_t written_ms = 0;  // from the history only (ChpWrite::written_ms)
  // From a history cursor that leaves values in chp_map (HistoryValues::
  // kOmitted): a set whose properties, expiry and value were not read.
  bool value_omitted = false;
  // From a history cursor that reads values (HistoryValues::kResolved): a
  // client's set whose key was deleted or expired since, given as a delete
  // without UUID (its value is gone); written_ms is the set's.
  bool superseded = false;
};

// A record whose strings point into the cursor's memory.
struct ChpRecordView {
  std::string_view key;
  ChpEntryView entry;
  std::uint64_t written_ms = 0;
  bool superseded = false;  // as ChpRecord::superseded
};

// Iterates a consistent point-in-time view of the keys under a prefix, in
// key order, reading from disk (memory does not grow with the map).
class ChpSnapshotCursor {
 public:
  virtual ~ChpSnapshotCursor() = default;
  // The last sequence applied when the view was taken.
  virtual std::uint64_t sequence() const = 0;
  // Fills *out with the next record; false at the end, on error, or when
  // paused.
  virtual bool next(ChpRecord* out) = 0;
  // The same as views, valid until the next call of next() or next_view():
  // the map's cursor points into RocksDB's blocks (no copy); others copy
  // through next().
  virtual bool next_view(ChpRecordView* out);
  // After next() returned false: it only yielded (a long run of records it
  // skipped); call next() again later.
  virtual bool paused() const { return false; }
  // Ok unless iteration stopped on a read error or a corrupt entry.
  virtual Status status() const = 0;
  // Whether the records are the updates after a sequence (a history
  // cursor: a resume, a catch-up) rather than the keys of the map.
  virtual bool updates() const { return false; }

 private:
  ChpRecord copied_;  // next_view()'s record for cursors that only copy
};

class ChpStore {
 public:
  // Loads the last sequence, epochs and history bounds from db. db must
  // outlive the store. history_entries: how many updates chp_history keeps;
  // key_index_bytes: the memory of the key index (key_index_bytes()).
  // key_history: keep each update's version in chp_versions (key_history(),
  // zstored --chp-key-history); it writes every set's value a second time.
  // Off (the default), apply() writes nothing there and a writable open
  // drops whatever an earlier "on" left, so that a later "on" never serves
  // versions with a gap: it starts them at the last sequence
  // (versions_from()), as for a database written before chp_versions.
  static Status Open(Database* db, std::unique_ptr<ChpStore>* out,
                     std::uint64_t history_entries = kDefaultHistoryEntries,
                     std::size_t key_index_bytes = ChpKeyIndex::kDefaultMaxBytes, bool key_history = false);

  std::uint64_t last_sequence() const { return last_sequence_; }

  // Keys in the map: kept by apply(), load() and clear() and persisted in
  // the same batch as each change, so it is exact after a restart or a
  // crash (a database written before it existed is counted once at Open).
  // Any thread may read it.
  std::uint64_t live_keys() const { return live_keys_.load(std::memory_order_relaxed); }

  // The memory of the key index, which spares a write of a key it knows
  // the read of its previous entry (at most the key_index_bytes of Open).
  // Any thread may read it.
  std::size_t key_index_bytes() const { return key_index_bytes_.load(std::memory_order_relaxed); }
  // The buffer apply() keeps for its next batch: what the largest recent
  // batch needed, and nothing after one of more than 1 MiB. Reactor only.
  std::size_t kept_batch_capacity() const { return apply_batch_.Data().capacity(); }
  // How many keys apply() and load() have read from RocksDB because the
  // key index did not know them (the owner thread only).
  std::uint64_t prior_reads() const { return prior_reads_; }
  // For a map that was not empty at Open: scans it on a thread of its own
  // (chp_key_scan.h) and, at the first apply() or load() after the scan
  // caught up, adopts the index it built, so that no write reads a key the
  // map held either. Does nothing when the index already knows every key.
  void build_key_index_in_background();
  // Whether the key index knows every key of the map (no write reads). Any
  // thread may read it.
  bool key_index_complete() const { return key_index_complete_.load(std::memory_order_relaxed); }

  // Applies writes in order as one atomic batch, each also recorded in the
  // history. Writes with sequence 0 get last_sequence()+1, +2, ...; explicit
  // sequences (a follower copying its leader) must be above last_sequence()
  // and increasing. On failure nothing is applied, the counter is unchanged
  // and every write has the sequence it came with. With kByCaller the batch
  // is not fsynced here: the caller syncs the log before announcing it.
  Status apply(std::span<ChpWrite> writes, WriteSync sync = WriteSync::kByPolicy);

  // The outcomes remembered by earlier runs (ChpWrite::remember_outcome),
  // oldest first, read at Open: once, they are moved out.
  std::vector<ChpOutcomes::Outcome> take_remembered_outcomes() { return outcomes_.take_loaded(); }
  // Whether apply() remembers the outcome of every write with a uuid (an
  // HA passive storing its active's updates, any of which a client may
  // retry here after a failover), not only those that ask.
  void remember_every_outcome(bool every) { remember_every_outcome_ = every; }
  // Remembers the outcomes of updates whose effect is already in the map
  // (a passive's KVPUBs that a snapshot or catch-up it loaded covered),
  // in a batch of their own: a retry of one after a failover is answered
  // applied. Writes without a 16-byte uuid or a sequence are skipped.
  Status remember_outcomes(std::span<const ChpWrite> writes);

  // The current version of each key, read together (one MultiGet, values
  // pinned, not copied); *out is resized to keys.size(). An entry that does
  // not decode is a Corruption. A key the key index holds at sequence
  // expected[i] (a conditional write's if-seq; 0: none) is not read: its
  // version is the index's, without a uuid (uuid_is() is false; a write
  // judged against that sequence is not the one that wrote it).
  Status current_versions(std::span<const std::string_view> keys, std::span<const std::uint64_t> expected,
                          std::vector<ChpKeyVersion>* out);

  // Reads one key; *found tells whether it exists.
  Status get(std::string_view key, ChpEntry* entry, bool* found);

  std::unique_ptr<ChpSnapshotCursor> snapshot(std::string_view prefix);
  // About how many bytes of chp_map the keys under prefix take, from the
  // tables' indexes and the memtables' entry counts (RocksDB's
  // GetApproximateSizes): no scan, so a flood of requests can afford it. A
  // prefix within one table block counts up to that block. The empty
  // prefix (the whole map) counts as unbounded.
  std::uint64_t approximate_bytes(std::string_view prefix);

  // Keys whose expiry is <= now_ms, oldest first, at most limit of them,
  // each with the expiry found in the index. apply() removes a key's old
  // index entry when it rewrites or deletes the key; stale entries an older
  // zstore left behind are removed on the way. The scan starts at the
  // lowest expiry that can still be live (remembered from the last sweep,
  // lowered by writes), so it costs O(keys due), not O(entries deleted).
  struct Due {
    std::string key;
    std::uint64_t expires_at_ms;
  };
  Status due_expiries(std::uint64_t now_ms, std::size_t limit, std::vector<Due>* out);

  // Deletes every key and the history, keeping the sequence counter: a
  // follower replacing its map with its leader's snapshot. Costs O(1): one
  // range delete per column family; compaction reclaims the space later.
  Status clear();

  // Stores records as they are (their own sequence and expiry), without
  // touching the counter: a follower loading its leader's snapshot.
  Status load(std::span<const ChpRecord> records);

  // Adopts sequence as the last one and epochs as the history that led to
  // it (a follower that loaded its leader's snapshot); the history holds
  // what is applied after it. epochs must end at sequence; if they do not
  // (a leader that sent none), the history before sequence is unknown.
  Status adopt(std::uint64_t sequence, ChpEpochs epochs);
  Status reset_sequence(std::uint64_t sequence) { return adopt(sequence, {}); }
  // A read replica that resumed from an upstream whose last sequence is
  // above its own with no update in between (a failover's new epoch):
  // takes sequence as the last one and the upstream's epochs (ours plus a
  // new one ending at sequence when they do not end there), keeping the
  // history. sequence must be above last_sequence().
  Status advance_to(std::uint64_t sequence, ChpEpochs epochs);

  // Starts a new epoch (chp_epochs.h): its base is the largest of the last
  // sequence, floor (the peer's last sequence, if known) and the clock.
  Status begin_epoch(std::uint64_t floor, std::uint64_t now_ms, std::uint64_t salt);
  // A standalone server's start. A new map begins its first epoch at the
  // clock, so its sequences are its own (a client resuming from another
  // server's sequence is never taken for one of ours). A map whose database
  // did not stop cleanly (a kill, a power cut, a restore from a checkpoint)
  // may have lost published updates that were not synced: it begins a new
  // clock epoch above every sequence it could have published, so none is
  // handed out again for another update (this assumes the wall clock did
  // not step back by more than the downtime). *began: whether it did.
  Status start_standalone(bool stopped_cleanly, std::uint64_t now_ms, std::uint64_t salt, bool* began);
  // The epochs that led to last_sequence(), oldest first.
  const ChpEpochs& epochs() const { return epochs_; }

  // The history holds every update after history_from() (see
  // history_after); UINT64_MAX while a follower reloads.
  std::uint64_t history_from() const { return history_from_; }
  bool keeps_history() const;
  // The updates after `after` in sequence order (deletes with an empty
  // value), resolved against the map (HistoryValues::kResolved in
  // chp_history.h: a set overwritten since is left out), or null when the
  // history does not reach back to it.
  std::unique_ptr<ChpSnapshotCursor> history_after(std::uint64_t after);
  // Every update after `after`, sets without their values
  // (ChpRecord::value_omitted), or null as for history_after.
  std::unique_ptr<ChpSnapshotCursor> history_updates_after(std::uint64_t after);
  // For a client that applied this map's history up to `after`: the updates
  // after it with a key in prefix, resolved as by history_after. Null
  // unless `after` is a point of our epochs (chp_epochs.h
  // contains_sequence), at or below our last sequence, and the history
  // reaches back to it; the client then needs a snapshot.
  std::unique_ptr<ChpSnapshotCursor> resume_after(std::uint64_t after, std::string_view prefix);
  // Key's versions still in the history, newest first, at most limit of
  // them, each with its value (chp_versions.h): sets, deletes and expiries
  // (empty values). One seek and then a step per version, whatever the
  // size of the map or the history. The updates at or below
  // versions_from() (written by a zstore before chp_versions) are not
  // found. *out is cleared first. Without keeps_key_history(): an error
  // (the store keeps no per-key history), *out empty.
  Status key_history(std::string_view key, std::size_t limit, std::vector<ChpVersion>* out);
  // Whether key_history() answers: opened with key_history, keeping a
  // history (history_entries > 0) and with the chp_versions family.
  bool keeps_key_history() const { return keeps_versions(); }
  // The sequence after which every update of the history has its version.
  std::uint64_t versions_from() const { return versions_from_; }
  // Drops the oldest history entries written before cutoff_ms (a time bound
  // beside the entry bound; entries of unknown time count as old), at most
  // 4096 updates and about 1 MiB per call: call it again while it makes
  // progress.
  Status trim_history_older_than(std::uint64_t cutoff_ms);
  // Drops the iterator the history trims keep (for kTrimReaderAge at most)
  // once it is that old, so an idle store pins no memtable or table file
  // for long. The reactor calls it every turn.
  void release_idle_trim_reader();

  // Whether this map is a complete copy (false while a follower reloads).
  Status set_synced(bool synced);
  bool synced() const { return synced_; }

 private:
  // How long the history trims reuse one iterator (kept_iterator.h): a new
  // one per trim cost 4.7% of zstored's CPU at 290k updates/s.
  static constexpr std::chrono::milliseconds kTrimReaderAge{250};
  struct HistoryWalk;
  static constexpr std::size_t kMaxKeptBatchBytes = std::size_t{1} << 20;

  ChpStore(Database* db, std::size_t key_index_bytes)
      : db_(db), key_index_(key_index_bytes), trim_reader_(db->db(), db->handle(Column::kChpHistory), kTrimReaderAge) {}
  Status load_meta();
  void put_meta(rocksdb::WriteBatch& batch, std::uint64_t last, const ChpEpochs& epochs, std::uint64_t history_from,
                std::uint64_t history_count);
  Status trim_history();
  void trim_history_after_write(std::size_t written_bytes);
  std::uint64_t history_slack() const;
  Status drop_oldest_history(std::uint64_t limit, std::uint64_t cutoff_ms);
  Status walk_oldest_history(rocksdb::Iterator* it, std::uint64_t limit, std::uint64_t cutoff_ms,
                             HistoryWalk* walk) const;
  Status count_keys_once();
  Status load_versions_from();
  Status drop_versions();
  bool keeps_versions() const;
  void put_version(rocksdb::WriteBatch& batch, const ChpWrite& write);
  Status delete_versions(rocksdb::Iterator* it, std::uint64_t last_dropped, rocksdb::WriteBatch& batch) const;
  Status start_key_index();
  bool all_new_after_clear(std::span<const ChpRecord> records) const;
  void put_keys(rocksdb::WriteBatch& batch, std::uint64_t keys);
  void put_apply_meta(rocksdb::WriteBatch& batch, std::uint64_t last, std::uint64_t history_count, std::uint64_t keys);
  void remember(std::span<const std::uint64_t> fps, std::span<const ChpWrite> writes);
  void remember(std::span<const std::uint64_t> fps, std::span<const ChpRecord> records);
  void remember_changes(std::span<const ChpKeyIndex::Change> changes);
  void adopt_scanned_index();
  void publish_key_index_state();

  Database* db_;
  std::uint64_t last_sequence_ = 0;
  bool synced_ = true;
  ChpEpochs epochs_;
  std::uint64_t history_from_ = 0;
  std::uint64_t history_count_ = 0;
  std::uint64_t history_max_ = kDefaultHistoryEntries;
  std::uint64_t versions_from_ = 0;   // kMetaChpVersionsFrom
  bool key_history_ = false;          // Open's key_history
  std::string version_key_;           // apply()'s, kept
  std::uint64_t sweep_floor_ms_ = 0;  // no live index entry below it
  std::atomic<std::uint64_t> live_keys_{0};
  ChpKeyIndex key_index_;
  std::atomic<std::size_t> key_index_bytes_{0};
  std::atomic<bool> key_index_complete_{false};
  std::uint64_t prior_reads_ = 0;
  KeptIterator trim_reader_;  // the history trims' walks (drop_oldest_history)
  ChpOutcomes outcomes_;
  bool remember_every_outcome_ = false;
  // apply()'s batch, cleared and reused: a new one grew its buffer by
  // doubling, a reallocation and a copy each time, in every apply. Dropped
  // after a batch over kMaxKeptBatchBytes, so one large batch does not
  // stay allocated.
  rocksdb::WriteBatch apply_batch_;
  std::string history_block_;                   // apply()'s HistoryWriter's buffer, kept (at most a block)
  std::vector<std::uint64_t> given_sequences_;  // apply()'s writes' sequences as given, kept
  std::unique_ptr<ChpKeyScan> key_scan_;        // last: stopped before the rest goes
  // Since clear(), only load()s in ascending key order: the map holds no key
  // above last_loaded_ (none at all while !loaded_any_).
  bool ascending_since_clear_ = false;
  bool loaded_any_ = false;
  std::string last_loaded_;
};

}  // namespace zstore::storage
