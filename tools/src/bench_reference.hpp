#pragma once
// --zmq-reference of `eitstream bench`: which run set-ups get a bare-ZeroMQ reference
// (eit/bench/zmq_reference.hpp) and running each once, right after the first run of its set-up
// (so the two are measured under the same conditions, minutes apart at most). auto runs them when
// together they add at most kAutoBudgetSeconds; on and off force it. Main thread only.
#include <string>
#include <vector>

#include "bench_plan.hpp"
#include "eit/bench/bench_report.hpp"

namespace eit::cli {

inline constexpr double kAutoBudgetSeconds = 5.0;

class ReferencePlan {
 public:
  // `choice`: on, off or auto (else CommandError naming the option). Sets
  // report.zmq_reference_skipped when nothing will run, saying why.
  ReferencePlan(const std::string& choice, const std::vector<Planned>& plan,
                eit::bench::BenchReport& report);
  // After a run with config `run`: measures its set-up's reference unless one exists.
  void after_run(const eit::bench::RunConfig& run, const std::string& executable, bool quiet,
                 eit::bench::BenchReport& report) const;

 private:
  bool enabled_ = false;
};

}  // namespace eit::cli
