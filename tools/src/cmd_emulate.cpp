// `eitstream emulate`: plays a recording or the synthetic phantom out as a device would, over
// TCP (listening or connecting), UDP or a pseudo-terminal serial port, in eitstream's ingest
// framing or OpenEIT's text lines, at a set rate. Every live input path can so be tested end to
// end without hardware. Prints its endpoint ("endpoint: …") and the URI a receiver should open
// ("receiver: …") on stdout, one line each, so scripts and tests can read an ephemeral port back.
// Ctrl-C or SIGTERM stops it cleanly: the summary ("emulate: done…") is printed and it exits 0.
// Before closing the link it waits for the receiver to read what was sent (a pty's buffer,
// JetStream's acknowledgements): 5 s at the end, 0.5 s after a signal, and a signal during that
// wait ends it at once; the summary says how many frames, at least, were not received.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "command_registry.hpp"
#include "eit/acquisition/device_link.hpp"
#include "eit/acquisition/ingest_frame.hpp"
#include "eit/acquisition/openeit_line_writer.hpp"
#include "eit/pipeline/clock.hpp"
#include "eit/recon/model_file.hpp"
#include "emulate_feed.hpp"
#include "emulate_receiver.hpp"
#include "existing_output.hpp"
#include "option_checks.hpp"
#include "phantom_source.hpp"
#include "recording_option_table.hpp"
#include "run_nats.hpp"
#include "stop_signals.hpp"

namespace eit::cli {
namespace {

struct EmulateArgs {
  std::string from, to = "tcp-listen://127.0.0.1:0", format = "ingest", sample_type = "f32";
  double fps = 0;
  bool unpaced = false, loop = false;
  uint64_t count = 0, seq_start = 0;
  size_t frames_per_datagram = 1;
  double scale = 0;  // --scale: integer samples carry value / scale (0: chosen from the data)
  double wait_s = 0;
  bool force = false;  // --to file://PATH may replace an existing file
  // The protocol the frames are sent in (the receiver's model).
  std::string model;
  int electrodes = 16, drive_distance = 0, measure_step = 1;
  std::string order = "std";
  bool measure_on_driven = false;
  acquisition::ReplayOptions replay;
  RecordingArgs recording;  // the shared recording options (recording_option_table.hpp)
  SyntheticFeedOptions synthetic;
};

void say(const std::string& line) {
  std::fputs(line.c_str(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

recon::Protocol protocol_for(const EmulateArgs& a) {
  if (!a.model.empty()) return recon::load_model(a.model).protocol;
  recon::ProtocolOptions p;
  p.n_electrodes = a.electrodes;
  // OpenEIT devices drive opposite electrodes; the ingest default is adjacent drive.
  p.drive_distance =
      a.drive_distance > 0 ? a.drive_distance : (a.format == "openeit" ? a.electrodes / 2 : 1);
  p.measure_step = a.measure_step;
  p.order = recon::parse_measurement_order(a.order);
  p.measure_on_driven = a.measure_on_driven;
  return recon::make_protocol(p);
}

using Clock = std::chrono::steady_clock;
constexpr double kDefaultFps = 20;  // when neither --fps nor the recording gives a rate
// The wait for the receiver before the link closes: at the end of what there was to send, and
// after a stop signal, when the user asked for a prompt exit.
constexpr std::chrono::milliseconds kEndDrainWait{5000};
constexpr std::chrono::milliseconds kStopDrainWait{500};

// How the start line states the pace: the rate and where it came from, or unpaced.
std::string pace_text(const EmulateArgs& a, double recorded_hz, double rate) {
  if (a.unpaced) return "unpaced (as fast as the link takes them)";
  const std::string from = a.fps > 0         ? "--fps"
                           : recorded_hz > 0 ? fmt::format("the recording's {:.6g} Hz", recorded_hz)
                                             : fmt::format("the default {:g}", kDefaultFps);
  const std::string times =
      a.recording.speed != 1 ? fmt::format(" × --speed {:g}", a.recording.speed) : "";
  return fmt::format("paced at {:.6g} frames/s ({}{})", rate, from, times);
}

// Sleeps until `when` in slices, so a stop signal ends even a slow pace within 100 ms. False
// when a stop signal came.
bool sleep_until_or_stopped(Clock::time_point when, const StopSignals& stop) {
  for (;;) {
    if (stop.count() > 0) return false;
    const auto now = Clock::now();
    if (now >= when) return true;
    std::this_thread::sleep_for(
        std::min<Clock::duration>(when - now, std::chrono::milliseconds(100)));
  }
}

// Waits for the receiver to read what was sent (kEndDrainWait, or kStopDrainWait once a signal
// came; a signal during the wait ends it). The summary's note on what it had not received when
// the wait ended, a lower bound (DeviceLink::messages_unread()); empty when it had everything.
// One frame per message: datagram links, the only ones with several, hold nothing back.
std::string drain_link(acquisition::DeviceLink& link, const StopSignals& stop) {
  const int signals_before = stop.count();
  const auto t0 = Clock::now();
  if (link.drain(signals_before > 0 ? kStopDrainWait : kEndDrainWait,
                 [&] { return stop.count() > signals_before; }))
    return {};
  const double waited = std::chrono::duration<double>(Clock::now() - t0).count();
  return fmt::format(
      " (at least {} frames not received when emulate stopped waiting{}, after {:.2f} s)",
      link.messages_unread(), stop.count() > signals_before ? " at a signal" : "", waited);
}

// Frames handed to the link and frames it dropped (no receiver, a failed write): one message
// carries several frames over UDP (--frames-per-datagram), and they count as such.
struct SendCounts {
  uint64_t sent = 0, dropped = 0;
  void add(bool delivered, uint64_t frames) noexcept { (delivered ? sent : dropped) += frames; }
};

void run_emulate(EmulateArgs a) {
  if (a.format != "ingest" && a.format != "openeit") {
    throw CommandError(fmt::format("--format {}: expected ingest or openeit", a.format));
  }
  if (!(a.fps >= 0) || !std::isfinite(a.fps)) {
    throw CommandError(fmt::format("--fps {}: expected a finite rate >= 0", a.fps));
  }
  a.replay.recording = to_recording_options(a.recording);
  if (a.frames_per_datagram == 0) throw CommandError("--frames-per-datagram 0: expected >= 1");
  const auto sample_type = acquisition::parse_ingest_sample_type(a.sample_type);
  if (is_nats_uri(a.to) && a.format != "ingest")
    throw CommandError(
        fmt::format("--format {} --to {}: NATS carries raw frames in ingest framing "
                    "only; expected --format ingest",
                    a.format, a.to));
  if (a.format != "ingest" && a.scale != 0)
    throw CommandError(
        fmt::format("--scale {}: only ingest integer samples are scaled; expected "
                    "--format ingest --sample-type i16 or i32",
                    a.scale));
  // Before the protocol and the feed, which take seconds for a model file or a phantom: a
  // mistyped --to is reported at once.
  if (is_nats_uri(a.to))
    check_nats_link_uri(a.to);
  else
    acquisition::check_device_link_uri(a.to, "nats://");
  // A capture file is kept like a recording: --from and --to swapped must not destroy one.
  if (a.to.starts_with("file://")) {
    const std::string path = a.to.substr(7);
    refuse_output_is_input(path, a.from, "--to " + a.to, "the --from recording");
    refuse_existing_output(path, a.force, "--to " + a.to);
  }
  a.replay.loop = a.loop;
  a.replay.fps = a.fps;
  const recon::Protocol protocol = protocol_for(a);

  // The phantoms have no rate of their own: they play at --fps or the default, and their orbit
  // or breath is timed for that rate.
  const double phantom_rate = (a.fps > 0 ? a.fps : kDefaultFps) * a.recording.speed;
  auto feed = open_frame_feed(a.from, a.replay, a.synthetic, protocol, phantom_rate);
  const double base_rate =
      a.fps > 0 ? a.fps : (feed->rate_hz() > 0 ? feed->rate_hz() : kDefaultFps);
  const double rate = base_rate * a.recording.speed;
  const size_t n = feed->n_values();
  const uint64_t total = a.count;  // 0: until the recording ends (never when looping)
  say(fmt::format("emulate: {}: {} values per frame, protocol {} electrodes drive {} step {} {}",
                  feed->describe(), n, protocol.n_electrodes, protocol.options.drive_distance,
                  protocol.options.measure_step, recon::to_string(protocol.options.order)));

  // The first frame is read now: an integer sample type's scale may come from it.
  std::vector<float> values(n);
  const bool have_first = feed->next(values);
  const auto scale = a.format == "ingest"
                         ? choose_integer_scale(sample_type, a.scale,
                                                have_first ? values : std::span<const float>{})
                         : std::nullopt;
  const double integer_scale = scale ? scale->value : 1.0;

  const size_t frame_bytes = a.format == "ingest" ? acquisition::ingest_frame_size(sample_type, n)
                                                  : acquisition::openeit_line_capacity(n);
  // A NATS gateway states on each frame the rate (workers put it in the bed's series message):
  // the rate the feed is timed for, also when --unpaced sends the frames faster; and for integer
  // samples their scale (the worker and the readers multiply them by it).
  report_nats_server_waits(a.wait_s);  // a NATS gateway waits for its server as for a receiver
  auto link = is_nats_uri(a.to)
                  ? open_nats_link(a.to, frame_bytes, rate, scale ? scale->value : 0.0)
                  : acquisition::open_device_link(a.to);
  say(fmt::format("endpoint: {}", link->endpoint()));
  say(fmt::format("receiver: {}", emulate_receiver_uri(link->receiver_uri(), a.format, scale)));
  if (scale) {
    say(
        fmt::format("emulate: {} samples carry value / {} ({}); the receiver multiplies by "
                    "scale={}",
                    a.sample_type, scale->text,
                    scale->chosen ? fmt::format("chosen so that the first frame's largest "
                                                "|value|, {:.6g}, is half the range; --scale "
                                                "overrides",
                                                scale->first_peak)
                                  : std::string("--scale"),
                    scale->text));
  }
  if (link->endpoint().starts_with("0.0.0.0:") || link->endpoint().starts_with("[::]:")) {
    say(
        fmt::format("emulate: listening on every interface ({}); the receiver line uses this "
                    "machine's loopback, a receiver elsewhere uses this host's address",
                    link->endpoint()));
  }
  const bool endless = a.loop || is_phantom_source(a.from);
  say(fmt::format("emulate: {} over {}, {}, {} frames{}", a.format, link->describe(),
                  pace_text(a, feed->rate_hz(), rate),
                  total == 0 ? std::string(endless ? "endless" : "all") : std::to_string(total),
                  a.loop ? " (looping)" : ""));

  // From here Ctrl-C and SIGTERM stop the sending and lead to the summary (as for `run`).
  const StopSignals stop;
  const auto wait_step = std::chrono::milliseconds(200);
  const auto wait_until =
      Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(a.wait_s * 1000));
  bool told = false;
  while (stop.count() == 0 && !link->wait_for_receiver(wait_step)) {
    if (!told) say(fmt::format("emulate: waiting for a receiver on {}", link->describe()));
    told = true;
    if (a.wait_s > 0 && Clock::now() >= wait_until) {
      throw CommandError(fmt::format("{}: no receiver within {} s", link->describe(), a.wait_s));
    }
  }
  if (stop.count() == 0) say("emulate: sending");

  const bool datagrams = a.to.rfind("udp://", 0) == 0;
  const size_t per_message = datagrams ? a.frames_per_datagram : 1;
  std::vector<uint8_t> message(frame_bytes * per_message);
  size_t message_len = 0, in_message = 0;
  SendCounts counts;
  uint64_t clipped = 0;  // integer samples saturated: out of the type's range at the scale
  const auto send_message = [&] {
    counts.add(link->send({message.data(), message_len}), in_message);
    message_len = in_message = 0;
  };
  const double ns_per_frame = 1e9 / rate;
  const auto t0 = Clock::now();
  auto last_report = t0, last_send = t0;
  for (uint64_t i = 0; stop.count() == 0 && (total == 0 || i < total); ++i) {
    if (i == 0 ? !have_first : !feed->next(values)) break;
    const auto due =
        t0 + std::chrono::nanoseconds(std::llround(ns_per_frame * static_cast<double>(i)));
    if (!a.unpaced && !sleep_until_or_stopped(due, stop)) break;
    const uint64_t seq = a.seq_start + i;
    std::span<uint8_t> out(message.data() + message_len, frame_bytes);
    size_t len = 0;
    if (a.format == "ingest") {
      if (scale) {
        const size_t over =
            acquisition::ingest_integer_overflows(sample_type, values, scale->value);
        if (over > 0 && clipped == 0)
          std::fprintf(stderr,
                       "emulate: warning: frame seq %llu: %zu values out of the %s range at "
                       "scale=%s, clipped (more are counted in the summary); a larger --scale "
                       "avoids it\n",
                       static_cast<unsigned long long>(seq), over, a.sample_type.c_str(),
                       scale->text.c_str());
        clipped += over;
      }
      len = acquisition::encode_ingest_frame(out, sample_type, seq, pipeline::now_ns(), values,
                                             integer_scale);
    } else {
      len = acquisition::format_openeit_line(values,
                                             {reinterpret_cast<char*>(out.data()), out.size()});
    }
    message_len += len;
    if (++in_message == per_message) send_message();
    const auto now = Clock::now();
    last_send = now;
    if (now - last_report >= std::chrono::seconds(5)) {
      last_report = now;
      std::fprintf(stderr, "emulate: %llu frames sent, %llu dropped\n",
                   static_cast<unsigned long long>(counts.sent),
                   static_cast<unsigned long long>(counts.dropped));
    }
  }
  if (in_message > 0) send_message();
  // The rate between the first send and the last, over the frames sent after the first.
  const double send_s = std::chrono::duration<double>(last_send - t0).count();
  const std::string unreceived = drain_link(*link, stop);
  const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  say(fmt::format(
      "emulate: done: {} frames sent, {} dropped (no receiver or a failed write), {} "
      "disconnects, {} unreadable frames, {:.3f} s, {:.1f} frames/s{}{}{}{}",
      counts.sent, counts.dropped, link->disconnects(), feed->bad_frames(), secs,
      counts.sent > 1 && send_s > 0 ? static_cast<double>(counts.sent - 1) / send_s : 0.0,
      nats_link_summary(*link),
      clipped > 0 ? fmt::format(", {} values clipped (out of the {} range at scale={})", clipped,
                                a.sample_type, scale->text)
                  : std::string(),
      unreceived, stop.count() > 0 ? " (stopped by a signal)" : ""));
}

const RegisterCommand kEmulate{
    70, [](CLI::App& app) {
      auto args = std::make_shared<EmulateArgs>();
      auto* cmd = app.add_subcommand("emulate",
                                     "Play a recording or the synthetic phantom out as a device: "
                                     "over TCP, UDP or a pty serial "
                                     "port, in ingest framing or OpenEIT lines");
      cmd->add_option("--from", args->from,
                      std::string("Recording file, 'synthetic' for the FEM phantom (an orbiting "
                                  "anomaly), or ") +
                          kBreathingSourceHelp)
          ->required();
      cmd->add_option(
             "--to", args->to,
             "tcp-listen://HOST:PORT (port 0: ephemeral), tcp://HOST:PORT, udp://HOST:PORT, "
             "pty, file://PATH, nats://HOST:PORT?site=S&bed=B (JetStream, eit.S.B.raw); over TLS: "
             "tls-listen://HOST:PORT?cert=F&key=F[&ca=F: demand client certificates] or "
             "tls-connect://HOST:PORT?ca=F&cert=F&key=F[&name=N] (docs/security.md)")
          ->capture_default_str();
      cmd->add_flag("--force", args->force, "--to file://PATH: replace an existing file");
      cmd->add_option("--format", args->format, "ingest | openeit")->capture_default_str();
      cmd->add_option("--sample-type", args->sample_type,
                      "Ingest samples: f32 f64 i16 i32 complex64 (i16, i32: value / --scale; the "
                      "receiver line carries the matching scale=)")
          ->capture_default_str();
      cmd->add_option("--scale", args->scale,
                      "i16/i32: integers carry value / SCALE (default: chosen from the first "
                      "frame, its largest value at half the integer range); values beyond the "
                      "range are clipped and counted");
      cmd->add_option("--fps", args->fps, "Frames per second (0: the recording's rate, else 20)");
      cmd->add_flag("--unpaced", args->unpaced, "As fast as the link takes them");
      cmd->add_option("--count", args->count, "Frames to send (0: the recording once, or endless)");
      cmd->add_flag("--loop", args->loop, "Start the recording over at its end");
      cmd->add_option("--seq-start", args->seq_start, "First ingest sequence number");
      cmd->add_option("--frames-per-datagram", args->frames_per_datagram,
                      "UDP: frames per datagram")
          ->capture_default_str();
      cmd->add_option("--wait-s", args->wait_s, "Give up when no receiver comes (0: wait forever)")
          ->check(non_negative());
      cmd->add_option("--model", args->model, "Model file whose protocol fixes the frame order");
      cmd->add_option("--electrodes", args->electrodes, "Protocol: electrodes")
          ->capture_default_str();
      cmd->add_option("--drive-distance", args->drive_distance,
                      "Protocol: drive distance (default 1; n/2 with --format openeit)");
      cmd->add_option("--measure-step", args->measure_step, "Protocol: measurement step")
          ->capture_default_str();
      cmd->add_option("--order", args->order, "Protocol: std | rotate_meas")->capture_default_str();
      cmd->add_flag("--measure-on-driven", args->measure_on_driven,
                    "Protocol: keep pairs touching a driven electrode");
      add_recording_options(cmd, args->recording, true);
      cmd->add_option("--h0", args->synthetic.h0, "Synthetic: mesh size")->capture_default_str();
      cmd->add_option("--snr", args->synthetic.snr_db, "Synthetic: SNR in dB")
          ->capture_default_str();
      cmd->add_option("--seed", args->synthetic.seed, "Synthetic: noise seed")
          ->capture_default_str();
      cmd->footer(
          "Ctrl-C or SIGTERM stops the sending; the summary follows. Before it closes the link, "
          "emulate waits for the receiver to read what was sent (a pty's buffer, JetStream's "
          "acknowledgements): up to 5 s at the end, 0.5 s after a signal, and a signal during "
          "that wait ends it at once (nats://: JetStream's wait is not cut short). The summary "
          "then says how many frames, at least, were not received.\n"
          "Exit status: 0 once it has sent what it was asked to (the end of --count or of the "
          "recording) or after SIGINT/SIGTERM, with its summary, which counts the frames dropped "
          "or not received; 1 a wrong set-up (an option value, a --to that cannot be opened) or "
          "no receiver within --wait-s; 2 a command line that does not parse. A signal before it "
          "waits for a receiver (while it builds the phantom, reads the recording or opens --to), "
          "and SIGKILL at any time, end it with 128 + the signal (130 SIGINT, 143 SIGTERM, 137 "
          "SIGKILL) and no summary.");
      cmd->callback([args] { run_emulate(*args); });
    }};

}  // namespace
}  // namespace eit::cli
