// Start times libnats writes exactly, and the gate after them (see start_time.hpp).
#include "start_time.hpp"

namespace eit::nats {

int64_t start_time_sent(int64_t since_ns) noexcept {
  constexpr int64_t kSecond = 1'000'000'000;
  const int64_t floored = since_ns - since_ns % kSecond;
  // 0 would mean "no start time" to libnats; nothing is stored within the epoch's first second.
  return floored > 0 ? floored : kSecond;
}

void deliver_from_time(jsConsumerConfig& config, int64_t since_ns) noexcept {
  config.DeliverPolicy = js_DeliverByStartTime;
  config.OptStartTime = start_time_sent(since_ns);
}

bool StartTimeGate::admits(natsMsg* msg) noexcept {
  if (open_) return true;
  jsMsgMetaData* meta = nullptr;
  if (natsMsg_GetMetaData(&meta, msg) != NATS_OK) return true;
  const int64_t stored_ns = meta->Timestamp;
  jsMsgMetaData_Destroy(meta);
  return admits(stored_ns);
}

}  // namespace eit::nats
