#pragma once
// A test backend that passes every call to the CPU backend, for tests that change one thing of it (decline an op,
// slow a layer, script the disturbance meter): override what the test changes.
#include <memory>
#include <string>

#include "ridgeline/backend_api/backend.hpp"
#include "ridgeline/profiler/registry.hpp"

namespace ridgeline::test {

class delegating_backend : public backend_api::backend {
public:
    explicit delegating_backend(int threads) : inner_(profiler::select_backend("cpu", threads).chosen) {}
    [[nodiscard]] std::string name() const override { return inner_->name(); }
    [[nodiscard]] backend_api::device_info device() const override { return inner_->device(); }
    [[nodiscard]] backend_api::support supports(const core::layer_analysis& l, core::dtype dt) const override {
        return inner_->supports(l, dt);
    }
    std::unique_ptr<backend_api::prepared> prepare(const core::model_analysis& g, const backend_api::graph_data& d) override {
        return inner_->prepare(g, d);
    }
    void synchronize() override { inner_->synchronize(); }
    backend_api::device_timer& timer() override { return inner_->timer(); }
    void flush_cache() override { inner_->flush_cache(); }
    [[nodiscard]] std::int64_t free_memory_bytes() const override { return inner_->free_memory_bytes(); }

protected:
    backend_api::backend& inner() { return *inner_; }
    [[nodiscard]] const backend_api::backend& inner() const { return *inner_; }

private:
    std::unique_ptr<backend_api::backend> inner_;
};

}  // namespace ridgeline::test
