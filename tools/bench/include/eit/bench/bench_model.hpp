#pragma once
// What a benchmark run reconstructs with and feeds in: a model (from a Model file, or random H of
// a requested size with a protocol that yields that many measurements), and the table of frames
// the source replays (the same frames for every run and for the pyEIT comparison).
// Set-up only: allocates, throws std::invalid_argument naming the value and what was expected.
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "eit/acquisition/synthetic_phantom.hpp"
#include "eit/recon/model.hpp"

namespace eit::bench {

// "1024x208" → {1024, 208}.
std::pair<size_t, size_t> parse_matrix_size(const std::string& text);

// H ~ N(0, 1/n_meas) float32 (seeded), v_ref positive, a protocol with n_meas measurements
// (n electrodes adjacent: n·(n−3), e.g. 208 for 16, 928 for 32; or all pairs n·n, e.g. 256), and
// a square grid geometry when n_out is a square (else per-value output). algorithm "random".
recon::Model make_random_model(size_t n_out, size_t n_meas, uint64_t seed = 1);

// K frames around the model's v_ref (or around 1 when it has none), each value perturbed by up to
// ±1 %: what the bench's source replays (interpolated between rows, no noise, so a frame's
// values are a pure function of its seq: SyntheticPhantomSource::noiseless).
acquisition::PhantomTable make_frame_table(const recon::Model& model, int rows = 64,
                                           uint64_t seed = 2);

}  // namespace eit::bench
