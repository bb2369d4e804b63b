#pragma once
// `eitstream run`'s settings onto the pipeline's options: policy, queues, batches, reference,
// normalisation, and how the stages wait (--latency-mode), are laid out (--stages) and pinned
// (--cpus). Set-up only; throws CommandError naming the option, the value and what is expected.
#include "eit/pipeline/pipeline.hpp"
#include "reference_choice.hpp"
#include "run_config.hpp"

namespace eit::cli {

pipeline::PipelineOptions run_pipeline_options(const RunConfig& c, const ReferenceChoice& ref);

}  // namespace eit::cli
