#include "client/uuid.h"

#include <uuid/uuid.h>

namespace zstore::client {

std::string random_uuid() {
  uuid_t bytes;
  uuid_generate_random(bytes);
  return std::string(reinterpret_cast<const char*>(bytes), sizeof bytes);
}

}  // namespace zstore::client
