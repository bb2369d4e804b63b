#pragma once
// NatsImageReader: what `eitstream listen nats://HOST:PORT?site=S&bed=B[&since=…]` reads, one
// bed's images from the EIT_IMAGES stream (eit.<site>.<bed>.img; a consumer's filter must lie
// within one of the stream's subjects, so the series messages are not included),
// through an ordered JetStream consumer (in stream order, no acknowledgements, gone when the
// reader goes). since=new (default: only what arrives from now on), since=all (the whole
// retained history), or since=<seconds since the epoch> (replay from that time).
//
// Threads: one. next() waits at most timeout_ms; allocation per message (a listener's path).
#include <memory>
#include <string>
#include <string_view>

namespace eit::nats {

struct ImageStreamMessage {
  std::string kind;  // "img" (the subject's last token)
  std::string data;  // img: 112-byte header then float32 payload; series: the JSON
};

class NatsImageReader {
 public:
  explicit NatsImageReader(std::string_view uri);  // throws naming the URI and the server
  ~NatsImageReader();
  NatsImageReader(const NatsImageReader&) = delete;
  NatsImageReader& operator=(const NatsImageReader&) = delete;

  // False when nothing came within timeout_ms.
  bool next(ImageStreamMessage& out, int timeout_ms);
  const std::string& subject_filter() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace eit::nats
