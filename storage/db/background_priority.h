// BackgroundPriority: the CPU priority of RocksDB's flush and compaction
// threads, set by each thread itself when it starts its first job (a
// RocksDB EventListener, added to every Database's options).
//
// zstored's reactors share their cores with these threads. At the nice
// values below, a flush or compaction no longer preempts a reactor in the
// middle of a batch, yet a flush still gets about a quarter of a contended
// core (at nice 19 it fell behind and RocksDB stopped writes for 150-200
// ms). A saturating load of random CHP keys still outruns it now and then
// (a few stalls in 13 s); at nice +2 none, but 7% fewer updates/s and the
// same p999, so a flush keeps up without taking the reactor's turn.
#pragma once

#include <memory>

#include <rocksdb/listener.h>

namespace zstore::storage {

// Added to the process's nice value, so a zstored started with `nice` keeps
// its order; capped at 19 (the lowest priority).
inline constexpr int kFlushNiceIncrement = 5;
inline constexpr int kCompactionNiceIncrement = 19;

// The listener that lowers the priority of the thread running a flush or a
// compaction, once per thread. A thread that cannot be changed (no such
// permission) keeps its priority: this never fails a job.
std::shared_ptr<rocksdb::EventListener> make_background_priority();

// The nice value a thread of base nice gets for an increment.
int lowered_nice(int base, int increment);

}  // namespace zstore::storage
