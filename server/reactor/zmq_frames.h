// The server's names for the shared multipart send and receive
// (transport/zmq_frames.h): one mechanism for server and clients.
#pragma once

#include "transport/zmq_frames.h"

namespace zstore::server {

using ReceivedMessage = transport::Message;
using transport::SendOutcome;
using transport::try_recv;
using transport::try_send;
using transport::try_send_parts;

}  // namespace zstore::server
