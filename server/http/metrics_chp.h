// The CHP families of /metrics (render_metrics(), metrics_text.h): the
// CHP reactor's counters (requests, its loop, resumes and hand-overs, what
// was dropped or refused) and, with a store, the map's size and key index.
#pragma once

#include "server/chp/chp_metrics.h"
#include "server/http/metrics_text.h"
#include "storage/chp/chp_store.h"

namespace zstore::server {

// store may be null (no CHP map): its gauges are left out.
void chp_metrics(PromWriter& w, const ChpMetrics& m, const storage::ChpStore* store);

}  // namespace zstore::server
