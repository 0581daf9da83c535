// Frames: the codecs' view of a ZeroMQ multipart message, free of any socket
// type. Decoders read borrowed views; encoders return owned frames.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace zstore::protocol {

// One received multipart message, borrowed from the caller for the call.
using FrameViews = std::span<const std::string_view>;

// One multipart message to send; frame i is element i.
using Frames = std::vector<std::string>;

}  // namespace zstore::protocol
