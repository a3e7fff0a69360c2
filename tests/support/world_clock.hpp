#pragma once
// The wall clock of the timing tests' simulated worlds: it reads the time the world's fake runs and fake timer
// advance, so no test waits on real time and every budget (max_time, warmup_ms) is spent exactly.
#include "ridgeline/backend_api/timing.hpp"

namespace ridgeline::test {

/// A wall clock reading `World::now_ns` (simulated nanoseconds) as seconds.
template <class World>
class world_clock final : public backend_api::wall_clock {
public:
    explicit world_clock(World& w) : w_(w) {}
    double now_s() override { return w_.now_ns * 1e-9; }

private:
    World& w_;
};

}  // namespace ridgeline::test
