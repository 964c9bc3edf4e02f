#pragma once
/// The body integrator of an explicit AVI body (a shell, cloth or chain; DESIGN §1):
/// a thin adapter, since its stencils live in the World's force sources, shared by
/// every explicit body (one event kind per term, not per body) and started by the
/// World before any body integrator. It names the body's vertices and the ranges of
/// stencils that are the body's, whose potential it reports.
#include <functional>
#include <string>
#include <vector>

#include "integrators/body_integrator.hpp"
#include "integrators/avi/force_source.hpp"

namespace clockwork {

class ExplicitShell final : public BodyIntegrator {
 public:
  ExplicitShell(std::string body, std::vector<Index> vertices)
      : body_(std::move(body)), vertices_(std::move(vertices)) {}

  /// The stencils [begin, end) of `source` are this body's.
  template <typename Term>
  void add_stencils(const ForceSource<Term>& source, EventSlot begin, EventSlot end) {
    if (begin < end)
      potentials_.push_back([&source, begin, end](const VertexState& state, double t) {
        return source.potential_energy(state, t, begin, end);
      });
  }

  std::string_view kind() const override { return "explicit"; }
  const std::string& body() const override { return body_; }
  std::span<const Index> body_vertices() const override { return vertices_; }
  /// Its stencils start with their shared sources.
  void start(Kernel&, EventKind, StartFrom) override {}
  double owned_potential(const VertexState& state, double t) const override {
    double sum = 0.0;
    for (const auto& potential : potentials_) sum += potential(state, t);
    return sum;
  }

 private:
  std::string body_;
  std::vector<Index> vertices_;
  std::vector<std::function<double(const VertexState&, double)>> potentials_;
};

}  // namespace clockwork
