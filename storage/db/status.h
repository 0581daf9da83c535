// Status: the outcome of a storage operation. Disk and environment errors are
// returned, never thrown; callers must look at them, and branch on code()
// (the predicates), never on the message, which is for people. RocksDB's
// failures keep its own text in the message (storage/db/rocks_status.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

namespace zstore::storage {

class [[nodiscard]] Status {
 public:
  enum class Code : std::uint8_t {
    kOk,
    kIoError,          // the storage failed to read or write (retrying may work)
    kNoSpace,          // the file system is full
    kCorruption,       // the data read is damaged
    kRefused,          // refused on purpose: not a zstore database, an unknown layout, writes stopped or refused
    kInvalidArgument,  // the caller asked for something impossible (a sequence not above the last)
  };

  // A status with the code of another and a new message (more context);
  // a kOk code makes Ok() whatever the message.
  Status(Code code, std::string message) : code_(code), message_(code == Code::kOk ? "" : std::move(message)) {}

  static Status Ok() { return Status(); }
  static Status IoError(std::string message) { return Status(Code::kIoError, std::move(message)); }
  static Status NoSpace(std::string message) { return Status(Code::kNoSpace, std::move(message)); }
  static Status Corruption(std::string message) { return Status(Code::kCorruption, std::move(message)); }
  static Status Refused(std::string message) { return Status(Code::kRefused, std::move(message)); }
  static Status InvalidArgument(std::string message) { return Status(Code::kInvalidArgument, std::move(message)); }

  bool ok() const { return code_ == Code::kOk; }
  bool IsIoError() const { return code_ == Code::kIoError; }
  bool IsNoSpace() const { return code_ == Code::kNoSpace; }
  bool IsCorruption() const { return code_ == Code::kCorruption; }
  bool IsRefused() const { return code_ == Code::kRefused; }
  bool IsInvalidArgument() const { return code_ == Code::kInvalidArgument; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  // "OK", or the code's name and the message: "IO error: write failed: ...".
  std::string ToString() const;

 private:
  Status() = default;

  Code code_ = Code::kOk;
  std::string message_;
};

inline std::string_view code_name(Status::Code code) {
  switch (code) {
    case Status::Code::kOk:
      return "OK";
    case Status::Code::kIoError:
      return "IO error";
    case Status::Code::kNoSpace:
      return "No space";
    case Status::Code::kCorruption:
      return "Corruption";
    case Status::Code::kRefused:
      return "Refused";
    case Status::Code::kInvalidArgument:
      return "Invalid argument";
  }
  return "Unknown code";
}

inline std::string Status::ToString() const {
  if (ok()) return "OK";
  return std::string(code_name(code_)) + ": " + message_;
}

}  // namespace zstore::storage
