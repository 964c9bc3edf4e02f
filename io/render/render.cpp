#include "io/render/render.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wshadow"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#pragma GCC diagnostic ignored "-Wsign-compare"
#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STB_IMAGE_WRITE_STATIC
#include <stb/stb_image_write.h>
#pragma GCC diagnostic pop

namespace clockwork {

Image::Image(int w, int h, Rgb fill)
    : width(w), height(h), rgb(3 * std::size_t(w) * std::size_t(h)) {
  for (std::size_t i = 0; i < rgb.size(); i += 3) {
    rgb[i] = fill[0];
    rgb[i + 1] = fill[1];
    rgb[i + 2] = fill[2];
  }
}

Rasterizer::Rasterizer(int width, int height, const Camera& camera, Rgb background)
    : camera_(camera),
      image_(width, height, background),
      depth_(std::size_t(width) * std::size_t(height), 0.0f) {
  forward_ = (camera.target - camera.eye).normalized();
  right_ = forward_.cross(camera.up).normalized();
  true_up_ = right_.cross(forward_);
  constexpr double kPi = 3.14159265358979323846;
  focal_ = 0.5 * height / std::tan(0.5 * camera.fov_y * kPi / 180.0);
}

Vec3 Rasterizer::to_view(const Vec3& world) const {
  const Vec3 d = world - camera_.eye;
  return {d.dot(right_), d.dot(true_up_), d.dot(forward_)};
}

void Rasterizer::draw_triangle(const std::array<Vec3, 3>& x, const std::array<Vec3, 3>& colour) {
  // Sutherland–Hodgman against the plane z = near: a triangle becomes a polygon of at
  // most four vertices, drawn as a fan.
  std::array<Vec3, 3> v;
  for (int i = 0; i < 3; ++i) v[i] = to_view(x[i]);
  const double n = camera_.near;
  if (v[0].z() >= n && v[1].z() >= n && v[2].z() >= n) return raster_view_triangle(v, colour);
  std::array<Vec3, 4> pv, pc;
  int count = 0;
  for (int i = 0; i < 3; ++i) {
    const int j = (i + 1) % 3;
    const bool in_i = v[i].z() >= n, in_j = v[j].z() >= n;
    if (in_i) {
      pv[count] = v[i];
      pc[count++] = colour[i];
    }
    if (in_i != in_j) {
      const double s = (n - v[i].z()) / (v[j].z() - v[i].z());
      pv[count] = v[i] + s * (v[j] - v[i]);
      pc[count++] = colour[i] + s * (colour[j] - colour[i]);
    }
  }
  for (int k = 1; k + 1 < count; ++k)
    raster_view_triangle({pv[0], pv[k], pv[k + 1]}, {pc[0], pc[k], pc[k + 1]});
}

void Rasterizer::raster_view_triangle(const std::array<Vec3, 3>& v,
                                      const std::array<Vec3, 3>& colour) {
  // Screen position of a view-space point: (W/2 + f x/z, H/2 − f y/z). 1/z is affine
  // in screen space, so interpolating it with screen barycentrics is exact.
  double sx[3], sy[3], inv_z[3];
  for (int i = 0; i < 3; ++i) {
    inv_z[i] = 1.0 / v[i].z();
    sx[i] = 0.5 * image_.width + focal_ * v[i].x() * inv_z[i];
    sy[i] = 0.5 * image_.height - focal_ * v[i].y() * inv_z[i];
  }
  const double area = (sx[1] - sx[0]) * (sy[2] - sy[0]) - (sx[2] - sx[0]) * (sy[1] - sy[0]);
  if (!(std::abs(area) > 0.0)) return;  // degenerate, or NaN
  const auto clamp_x = [&](double s) {
    return std::clamp(int(std::floor(s)), 0, image_.width - 1);
  };
  const auto clamp_y = [&](double s) {
    return std::clamp(int(std::floor(s)), 0, image_.height - 1);
  };
  const int x0 = clamp_x(std::min({sx[0], sx[1], sx[2]})),
            x1 = clamp_x(std::max({sx[0], sx[1], sx[2]}));
  const int y0 = clamp_y(std::min({sy[0], sy[1], sy[2]})),
            y1 = clamp_y(std::max({sy[0], sy[1], sy[2]}));
  const double inv_area = 1.0 / area;
  for (int py = y0; py <= y1; ++py) {
    const double cy = py + 0.5;
    for (int px = x0; px <= x1; ++px) {
      const double cx = px + 0.5;
      // Barycentric weights from the edge functions, normalised by the signed area:
      // all non-negative inside for either winding (cloth is two-sided).
      const double w0 = ((sx[1] - cx) * (sy[2] - cy) - (sx[2] - cx) * (sy[1] - cy)) * inv_area;
      const double w1 = ((sx[2] - cx) * (sy[0] - cy) - (sx[0] - cx) * (sy[2] - cy)) * inv_area;
      const double w2 = 1.0 - w0 - w1;
      if (w0 < 0.0 || w1 < 0.0 || w2 < 0.0) continue;
      const float depth = static_cast<float>(w0 * inv_z[0] + w1 * inv_z[1] + w2 * inv_z[2]);
      float& stored = depth_[std::size_t(py) * std::size_t(image_.width) + std::size_t(px)];
      if (depth <= stored) continue;
      stored = depth;
      const Vec3 c = w0 * colour[0] + w1 * colour[1] + w2 * colour[2];
      const auto byte = [](double u) {
        return static_cast<std::uint8_t>(std::lround(255.0 * std::clamp(u, 0.0, 1.0)));
      };
      image_.set(px, py, {byte(c.x()), byte(c.y()), byte(c.z())});
    }
  }
}

Vec3 shade(const Vec3& colour, const Vec3& n_view) {
  // Headlight along the view direction (view-space −z towards the camera) and a key
  // light from the upper left, behind the camera.
  const Vec3 key = Vec3(-0.5, 0.7, -0.5).normalized();
  const double head = std::max(0.0, -n_view.z());
  const double side = std::max(0.0, n_view.dot(key));
  return (0.25 + 0.45 * head + 0.45 * side) * colour;
}

void write_png(const std::string& path, const Image& image) {
  if (!stbi_write_png(path.c_str(), image.width, image.height, 3, image.rgb.data(),
                      3 * image.width))
    throw std::runtime_error(fmt::format("cannot write the PNG '{}'", path));
}

}  // namespace clockwork
