#pragma once
// Phantom-body scenes shared by the phantom tests.
#include <string>

#include <nlohmann/json.hpp>

#include "engine/types.hpp"
#include "tests/support/advanced.hpp"

namespace clockwork::test {

inline nlohmann::json phantom_cloth(const std::string& name, int res, double size, const Vec3& center,
                     double young, const nlohmann::json& phantom) {
  return {{"name", name},
          {"shape", {{"type", "grid"}, {"size", {size, size}}, {"resolution", {res, res}},
                     {"center", {center.x(), center.y(), center.z()}}}},
          {"material", {{"area_density", 0.1}, {"young", young}, {"poisson", 0.3}, {"bending", 1e-4}}},
          {"integrator", "phantom"},
          {"phantom", with_advanced("phantom", phantom)}};
}

inline nlohmann::json hanging_cloth(double young, int res, const std::string& solver) {
  nlohmann::json body = phantom_cloth("c", res, 0.5, Vec3(0, 0, 1), young,
                              {{"h_imp", 1e-3}, {"solver", solver}, {"tolerance", 1e-6}});
  body["shape"]["axes"] = {{1, 0, 0}, {0, 0, 1}};
  body["pins"] = {"u0v1", "u1v1"};
  return {{"name", "hang"}, {"end_time", 10.0}, {"frame_rate", 30}, {"gravity", {0, 0, -9.81}}, {"bodies", {body}}};
}

}  // namespace clockwork::test
