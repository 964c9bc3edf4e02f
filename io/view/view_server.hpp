#pragma once
/// `clockwork view OUTDIR`: a small static HTTP/1.0 server on 127.0.0.1 for the
/// browser viewer (docs/viewer.md). GET and HEAD only, one connection at a time,
/// no directory listings; request paths with `..` segments are refused.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace clockwork {

/// URL prefix → folder: "/run/" serves OUTDIR, "/" the viewer.
struct ViewMount {
  std::string prefix;  ///< starts and ends with '/'
  std::string dir;
};

/// The file a request target maps to (query string dropped, %XX decoded, "dir/"
/// → "dir/index.html"), or nullopt with `status` 403 (a `..` segment, NUL, backslash,
/// bad escape) or 404 (no mount, no such file).
std::optional<std::string> resolve_request(const std::vector<ViewMount>& mounts,
                                           std::string_view target, int* status);

class ViewServer {
 public:
  /// Listens on 127.0.0.1:port (0: a free port). Throws std::runtime_error naming the
  /// port if it cannot bind.
  ViewServer(std::vector<ViewMount> mounts, int port);
  ~ViewServer();
  ViewServer(const ViewServer&) = delete;
  ViewServer& operator=(const ViewServer&) = delete;

  int port() const { return port_; }
  /// Accepts one connection and answers its request.
  void serve_one();
  void serve_forever() {
    for (;;) serve_one();
  }

 private:
  std::vector<ViewMount> mounts_;
  int fd_ = -1;
  int port_ = 0;
};

}  // namespace clockwork
