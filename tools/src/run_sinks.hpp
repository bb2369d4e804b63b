#pragma once
// Where `eitstream run` sends its images: the ZeroMQ publisher (PUB or PUSH, CURVE when keys are
// given), and optionally a live PUB monitor, NATS JetStream or a shared-memory ring (--publish),
// the indices publisher, the live view and the HDF5 recorders. Set-up only (binds, opens files; throws CommandError or
// std::runtime_error naming the option and the address or file). Declared in the order they must
// be torn down in reverse: the view's indices feed goes before the indices publisher it reads.
#include <memory>
#include <string>
#include <vector>

#include "eit/pipeline/cpu_keeper.hpp"
#include "eit/pipeline/image_sink.hpp"
#include "eit/pipeline/pipeline.hpp"
#include "eit/pipeline/source.hpp"
#include "eit/recon/model.hpp"
#include "eit/sinks/zmq_publisher.hpp"
#include "reference_choice.hpp"
#include "run_config.hpp"
#include "run_indices.hpp"
#include "run_recorders.hpp"
#include "run_security.hpp"
#include "run_view.hpp"

namespace eit::cli {

struct RunSinks {
  // --zmq-io-cpu N: keeps CPU N, where the publishers' I/O threads run, out of idle; null else.
  // First member: it outlives the publishers whose I/O threads it serves.
  std::unique_ptr<pipeline::CpuKeeper> io_keeper;
  sinks::ZmqPublisherOptions publisher_options;
  std::unique_ptr<sinks::ZmqPublisher> publisher;
  RunView view;
  std::unique_ptr<sinks::ZmqPublisher> monitor;  // --monitor; null without
  std::unique_ptr<pipeline::ImageSink> nats;     // --publish nats://…; null without
  std::unique_ptr<pipeline::ImageSink> shm;      // --publish shm://NAME; null without
  std::unique_ptr<pipeline::ImageSink> indices;  // --indices; null without
  Recorders recorders;
  std::vector<pipeline::ImageSink*> all;  // the pipeline's sinks, in order
  // Where the recorders' counters are in PipelineStats::sinks (same order as `all`).
  size_t images_at = 0, frames_at = 0;
};

// `o`: the run's pipeline options (run_pipeline_options()): its policy, whether images are
// dv/|v_ref| (the series message says so), its latency mode and CPUs; `layout`: the stages the
// pipeline will run (pipeline::resolve_layout), whose producing thread an inline publisher uses.
RunSinks open_run_sinks(const RunConfig& c, const RunIndices& indices, const RunSecurity& security,
                        const recon::Model& model, const pipeline::Source& source,
                        const ReferenceChoice& ref, const pipeline::PipelineOptions& o,
                        pipeline::StageLayout layout);

}  // namespace eit::cli
