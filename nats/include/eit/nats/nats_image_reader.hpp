#pragma once
// NatsImageReader: what `eitstream listen nats://HOST:PORT?site=S&bed=B[&since=…]` reads, one
// bed's images (eit.<site>.<bed>.img) and series messages (….series) from the EIT_IMAGES stream,
// through two ordered JetStream consumers (nats-server 2.9 takes one subject filter per consumer),
// merged back into stream order (no acknowledgements, gone when the reader goes).
// since=new (default: from now on), since=all (the whole retained history), or
// since=<seconds since the epoch> (replay from that time).
//
// A replay starts with the series message in effect at its start: for since=new the bed's last
// series message, for since=T the last one stored before T (looked for in the `series_lookback_s`
// before T; the sink repeats it every 2 s), unless that was a series-end. Then images and series
// messages come in the order the stream stored them.
//
// Threads: one. next() waits at most timeout_ms; allocation per message (a listener's path).
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace eit::nats {

struct ImageStreamMessage {
  std::string kind;  // "img" or "series" (the subject's last token)
  std::string data;  // img: 112-byte header then float32 payload; series: the JSON
};

// The reader's connection as a status display shows it (libnats reconnects by itself).
struct NatsReaderLink {
  bool connected = false;
  uint64_t disconnects = 0, reconnects = 0;
  std::string last_error;
};

class NatsImageReader {
 public:
  // Throws naming the URI and the server.
  explicit NatsImageReader(std::string_view uri, double series_lookback_s = 10.0);
  ~NatsImageReader();
  NatsImageReader(const NatsImageReader&) = delete;
  NatsImageReader& operator=(const NatsImageReader&) = delete;

  // False when nothing came within timeout_ms.
  bool next(ImageStreamMessage& out, int timeout_ms);
  const std::string& subject_filter() const noexcept;
  NatsReaderLink link_state() const;  // any thread

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace eit::nats
