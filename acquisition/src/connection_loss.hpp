#pragma once
// ConnectionLoss: a connection-oriented transport (TCP client, TCP listen, TLS, serial) notes a
// lost connection when it sees it and says so on the next read it returns, whatever that read
// returns (TransportRead::connection_lost): the StreamSource then counts a frame the loss broke
// off, also when the device never comes back. Private to eit_acquisition.
#include <utility>

#include "eit/acquisition/byte_transport.hpp"

namespace eit::acquisition::detail {

class ConnectionLoss {
 public:
  void lost() noexcept { pending_ = true; }
  // `r` with connection_lost set once after a loss.
  TransportRead told(TransportRead r) noexcept {
    r.connection_lost = std::exchange(pending_, false);
    return r;
  }

 private:
  bool pending_ = false;
};

}  // namespace eit::acquisition::detail
