#pragma once
/// A small software rasterizer for `clockwork render` (docs/viewer.md): a pinhole
/// camera, triangles with per-vertex colours (Gouraud), a z-buffer, near-plane
/// clipping, and PNG output through stb_image_write (Debian libstb-dev). Our own
/// rather than OSMesa: ~200 lines, deterministic to the bit on every machine, no GL
/// stack to install or to crash headless, and testable pixel by pixel.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/types.hpp"

namespace clockwork {

using Rgb = std::array<std::uint8_t, 3>;

/// An RGB image, rows from the top, 3 bytes per pixel.
struct Image {
  int width = 0, height = 0;
  std::vector<std::uint8_t> rgb;

  Image() = default;
  Image(int w, int h, Rgb fill);
  Rgb pixel(int x, int y) const {
    const std::size_t i = 3 * (std::size_t(y) * std::size_t(width) + std::size_t(x));
    return {rgb[i], rgb[i + 1], rgb[i + 2]};
  }
  void set(int x, int y, Rgb c) {
    const std::size_t i = 3 * (std::size_t(y) * std::size_t(width) + std::size_t(x));
    rgb[i] = c[0];
    rgb[i + 1] = c[1];
    rgb[i + 2] = c[2];
  }
};

/// Pinhole camera looking from `eye` at `target`; `up` need not be orthogonal to the
/// view direction (not parallel to it); `fov_y` is the vertical field of view in degrees.
struct Camera {
  Vec3 eye = Vec3(0, -3, 1);
  Vec3 target = Vec3::Zero();
  Vec3 up = Vec3::UnitZ();
  double fov_y = 40.0;
  double near = 1e-3;  ///< m: geometry closer than this to the eye plane is clipped
};

class Rasterizer {
 public:
  Rasterizer(int width, int height, const Camera& camera, Rgb background);

  /// Draws a triangle with per-vertex colours (linear in screen space) behind
  /// anything nearer already drawn. A pixel is covered when its centre is inside.
  void draw_triangle(const std::array<Vec3, 3>& x, const std::array<Vec3, 3>& colour);
  /// Point in view space: camera at the origin, x right, y up, z the depth along the
  /// view direction (positive in front).
  Vec3 to_view(const Vec3& world) const;
  const Vec3& view_direction() const { return forward_; }
  const Camera& camera() const { return camera_; }

  const Image& image() const { return image_; }

 private:
  /// A triangle already clipped to the near plane, in view space.
  void raster_view_triangle(const std::array<Vec3, 3>& v, const std::array<Vec3, 3>& colour);

  Camera camera_;
  Vec3 right_, true_up_, forward_;
  double focal_ = 1.0;  ///< pixels per unit of x/z at unit depth
  Image image_;
  std::vector<float> depth_;  ///< 1/z of the nearest fragment (0: empty)
};

/// Writes `image` as a PNG; throws std::runtime_error naming the path on failure.
void write_png(const std::string& path, const Image& image);

/// Lambert shading of a surface colour with the view-space normal `n` (unit, facing
/// the camera): ambient + a headlight + a key light from the upper left of the view.
Vec3 shade(const Vec3& colour, const Vec3& n_view);

}  // namespace clockwork
