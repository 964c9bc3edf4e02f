/// Seeded mutation fuzzer of the input readers (issue 42): scenes (load_scene, loaded
/// and built, never run), OBJ meshes, TetGen and Gmsh tet files, PLY frames.
///
///   fuzz_readers --seconds S --seed N --corpus DIR... [--runs N] [--findings DIR]
///                [--keep-going] [--minimize]
///   fuzz_readers --replay FILE...
///
/// Seeds: the *.json, *.obj, *.node+*.ele, *.msh and *.ply files under the corpus
/// folders (at most 128 KB each), and meshes, scenes and PLY frames made here. Each
/// mutant is written to a file and read by its reader in a forked child, so that a
/// crash, a sanitizer report, a runaway allocation or a hang (> 10 s) is seen and
/// named instead of ending the campaign silently. A call that returns or throws
/// clockwork::SceneError is fine; anything else is a finding: saved under the findings
/// folder with the child's log, printed, and the exit status is 1. The mutants depend
/// only on the seed (--runs makes a campaign exactly repeatable).
#include <cxxabi.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "io/frames/frame_io.hpp"
#include "io/mesh/mesh.hpp"
#include "io/scene/scene.hpp"
#include "io/scene_error.hpp"
#include "io/mesh/tet_mesh.hpp"
#include "tests/fuzz/mutate.hpp"

#if defined(__SANITIZE_ADDRESS__)
// A mutant asking for gigabytes is a finding, not a reason to swap the CI machine:
// ASan reports allocations above 2 GB and processes above 3 GB resident.
extern "C" const char* __asan_default_options() {
  return "max_allocation_size_mb=2048:hard_rss_limit_mb=3072:detect_leaks=0";
}
#endif

namespace fs = std::filesystem;
using namespace clockwork::fuzz;

namespace {

// A reader call taking longer is a hang (issue 42's 10 s, in Release). Under ASan the
// same code runs 5-10 times slower: a legitimate 25k-triangle cloth with contact loads
// in 6 s in Release and 41 s under the sanitizers, twice that when the campaign shares
// a core with another test (CTest runs it beside the others there: tests/CMakeLists.txt).
#if defined(__SANITIZE_ADDRESS__)
constexpr int kCallSeconds = 150;
#else
constexpr int kCallSeconds = 10;
#endif

enum class Kind { Scene, Obj, TetgenNode, TetgenEle, Gmsh, Ply };
const char* kind_name(Kind k) {
  switch (k) {
    case Kind::Scene: return "scene";
    case Kind::Obj: return "obj";
    case Kind::TetgenNode: return "tetgen-node";
    case Kind::TetgenEle: return "tetgen-ele";
    case Kind::Gmsh: return "gmsh";
    case Kind::Ply: return "ply";
  }
  return "?";
}
const char* extension(Kind k) {
  switch (k) {
    case Kind::Scene: return ".json";
    case Kind::Obj: return ".obj";
    case Kind::TetgenNode: return ".node";
    case Kind::TetgenEle: return ".ele";
    case Kind::Gmsh: return ".msh";
    case Kind::Ply: return ".ply";
  }
  return "";
}

struct Seed {
  Kind kind;
  std::string origin;     // file or generator, for the report
  std::string bytes;      // the file that is mutated
  std::string companion;  // TetGen: the other file of the pair, kept intact
  nlohmann::json doc;     // scenes that parse: for structured mutations
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}
void spit(const fs::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << bytes;
}

// --- calling a reader in a child ------------------------------------------------------

enum ChildExit { kReturned = 0, kSceneError = 11, kOtherException = 12, kUnknownException = 13 };

struct Outcome {
  bool ok = true;
  std::string what;  // for findings: the class and the details
  std::string key;   // what two mutants with the same bug share (bucket)
  double seconds = 0.0;
};

/// The reader of `kind` on `path` (for TetGen, the base name without extension).
/// Prints "VERTICES n" for a scene that loads (the seeds' size, below).
void call_reader(Kind kind, const std::string& path) {
  switch (kind) {
    case Kind::Scene: {
      const clockwork::Scene scene = clockwork::load_scene(path);
      std::size_t n = 0;
      for (const auto& b : scene.bodies) n += b.vertex_count;
      std::printf("VERTICES %zu\n", n);
      break;
    }
    case Kind::Obj: (void)clockwork::read_obj(path); break;
    case Kind::TetgenNode:
    case Kind::TetgenEle: (void)clockwork::read_tetgen(path); break;
    case Kind::Gmsh: (void)clockwork::read_gmsh(path); break;
    case Kind::Ply: (void)clockwork::read_ply(path); break;
  }
}

std::string demangle(const char* name) {
  int status = 0;
  char* d = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  std::string s = status == 0 && d ? d : name;
  std::free(d);
  return s;
}

/// Digits and quoted values replaced, the file name dropped: one bucket per message shape.
std::string normalise(const std::string& what, const std::string& path) {
  std::string s = what;
  for (auto at = s.find(path); !path.empty() && at != std::string::npos; at = s.find(path))
    s.replace(at, path.size(), "FILE");
  std::string out;
  bool quoted = false;  // 'values' in messages: one bucket whatever they hold
  for (std::size_t i = 0; i < s.size() && out.size() < 80; ++i) {
    if (s[i] == '\'') {
      quoted = !quoted;
      out += quoted ? "'...'" : "";
    } else if (quoted) {
      continue;
    } else if (std::isdigit(static_cast<unsigned char>(s[i]))) {
      if (out.empty() || out.back() != '#') out += '#';
    } else {
      out += s[i];
    }
  }
  return out;
}

/// The first line of `log` that names the sanitizer's verdict, if any.
std::string sanitizer_summary(const std::string& log) {
  const auto at = log.find("SUMMARY: ");
  if (at != std::string::npos) {
    // "AddressSanitizer: stack-overflow (binary+0x...) in FRAME": the tool and the bug
    // type make the bucket; the top frame varies along one deep recursion.
    std::string line = log.substr(at + 9, log.find('\n', at) - at - 9);
    const auto colon = line.find(": ");
    const auto end = colon == std::string::npos ? std::string::npos : line.find(' ', colon + 2);
    return end == std::string::npos ? line : line.substr(0, end);
  }
  const auto rt = log.find("runtime error: ");
  if (rt != std::string::npos) return log.substr(rt, log.find('\n', rt) - rt);
  return {};
}

Outcome run_child(Kind kind, const std::string& path, const fs::path& log) {
  const auto start = std::chrono::steady_clock::now();
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) {
    std::perror("fuzz_readers: fork");
    std::exit(2);
  }
  if (pid == 0) {
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      ::close(fd);
    }
#if !defined(__SANITIZE_ADDRESS__)
    // 3 GB of address space (ASan, which reserves terabytes, has its own limits above).
    const rlimit mem{rlim_t(3) << 30, rlim_t(3) << 30};
    ::setrlimit(RLIMIT_AS, &mem);
#endif
    ::alarm(kCallSeconds);
    try {
      call_reader(kind, path);
    } catch (const clockwork::SceneError&) {
      std::_Exit(kSceneError);
    } catch (const std::exception& e) {
      const auto* type = abi::__cxa_current_exception_type();
      std::fprintf(stderr, "EXCEPTION %s: %s\n", type ? demangle(type->name()).c_str() : "?",
                   e.what());
      std::fflush(stderr);
      std::_Exit(kOtherException);
    } catch (...) {
      const auto* type = abi::__cxa_current_exception_type();
      std::fprintf(stderr, "EXCEPTION %s (not a std::exception)\n",
                   type ? demangle(type->name()).c_str() : "?");
      std::fflush(stderr);
      std::_Exit(kUnknownException);
    }
    std::fflush(nullptr);
    std::_Exit(kReturned);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  Outcome o;
  o.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::string k = std::string(kind_name(kind)) + ": ";
  if (WIFEXITED(status) && (WEXITSTATUS(status) == kReturned || WEXITSTATUS(status) == kSceneError))
    return o;
  o.ok = false;
  const std::string text = slurp(log);
  if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) {
    o.what = "hang: the reader ran past " + std::to_string(kCallSeconds) + " s";
    o.key = k + "hang";
  } else if (WIFSIGNALED(status)) {
    o.what = std::string("crash: signal ") + strsignal(WTERMSIG(status));
    o.key = k + o.what;
  } else if (WEXITSTATUS(status) == kOtherException || WEXITSTATUS(status) == kUnknownException) {
    const auto at = text.rfind("EXCEPTION ");
    const std::string line = at == std::string::npos ? "EXCEPTION ?" : text.substr(at, text.find('\n', at) - at);
    o.what = "exception other than SceneError: " + line.substr(10);
    const auto colon = line.find(": ");
    o.key = k + line.substr(10, colon == std::string::npos ? std::string::npos : colon - 10) + " " +
            (colon == std::string::npos ? "" : normalise(line.substr(colon + 2), path));
  } else {
    const std::string summary = sanitizer_summary(text);
    o.what = summary.empty() ? "exit status " + std::to_string(WEXITSTATUS(status)) : summary;
    o.key = k + normalise(o.what, path);
  }
  return o;
}

// --- seeds ------------------------------------------------------------------------------

/// Meshes, scenes and frames made here, so that every reader has seeds whatever the
/// corpus holds (demos/ has no OBJ or PLY files).
void add_generated_seeds(std::vector<Seed>& seeds, const fs::path& work) {
  using clockwork::Vec3;
  const auto add = [&](Kind kind, std::string origin, std::string bytes) {
    seeds.push_back({kind, std::move(origin), std::move(bytes), {}, {}});
  };
  const Vec3 o(0, 0, 0), ex(1, 0, 0), ey(0, 1, 0);
  const auto obj = [&](const char* name, const clockwork::TriangleMesh& m) {
    const fs::path p = work / name;
    clockwork::write_obj(p.string(), m.vertices, m.triangles, m.edges);
    add(Kind::Obj, std::string("generated ") + name, slurp(p));
  };
  obj("grid.obj", clockwork::make_grid(1.0, 1.0, 3, 2, o, ex, ey));
  obj("disk.obj", clockwork::make_disk(0.5, 2, o, ex, ey));
  obj("hat.obj", clockwork::make_hat(o, ex, ey, 0.1, 0.1, 0.2, 6));
  obj("chain.obj", clockwork::make_chain(o, Vec3(1, 0, 0), 4));
  add(Kind::Obj, "handwritten polygons",
      "# quads, texture and normal indices, negative indices\nmtllib x.mtl\no thing\n"
      "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv 0.5 0.5 1\nvt 0 0\nvn 0 0 1\n"
      "f 1/1/1 2/1/1 3/1/1 4/1/1\nf -1 -4 -3\ns off\nusemtl m\nf 2//1 3//1 5//1\n");
  // The scene that reads grid.obj, seeding scene mutations that reach the OBJ reader.
  add(Kind::Scene, "generated obj scene",
      R"({"name": "obj", "end_time": 0.1, "frame_rate": 10, "gravity": [0, 0, -9.81],
 "bodies": [{"name": "sheet", "shape": {"type": "obj", "file": "grid.obj", "scale": 1.0,
  "translate": [0, 0, 1]}, "material": {"area_density": 0.1, "young": 500.0, "poisson": 0.3,
  "bending": 1e-4}, "pins": [0, "u0v0"]}]})");
  add(Kind::Scene, "generated chain scene",
      R"({"name": "chain", "end_time": 1, "frame_rate": 30, "seed": 3,
 "bodies": [{"name": "c", "shape": {"type": "chain", "start": [0, 0, 0], "end": [1, 0, 0],
  "segments": 8}, "material": {"node_mass": 0.1, "stiffness": [100, 1], "quartic": 2,
  "rest_length": 0.1}, "pins": ["first"], "velocity": {"random": 0.1, "linear": [0, 1, 0]},
  "periods": {"spring": "auto", "safety": 0.5}}]})");
  add(Kind::Scene, "generated tetgen scene",
      R"({"name": "cube", "end_time": 0.1, "frame_rate": 10, "gravity": [0, 0, -9.81],
 "bodies": [{"name": "cube", "shape": {"type": "tetgen", "file": "cube5", "scale": 0.1},
  "material": {"model": "corotational", "young": 1e5, "poisson": 0.3, "density": 1000,
   "regions": {"region_2": {"young": 2e5}}},
  "integrator": "backward_euler", "backward_euler": {"h": 0.01}}]})");
  add(Kind::Scene, "generated gmsh scene",
      R"({"name": "cube", "end_time": 0.1, "frame_rate": 10,
 "bodies": [{"name": "cube", "shape": {"type": "gmsh", "file": "cube5_v4.msh"},
  "material": {"model": "linear", "young": 1e5, "poisson": 0.3, "density": 1000},
  "pins": {"box": {"min": [-1, -1, -1], "max": [2, 2, 0.1]}},
  "integrator": "zhao", "zhao": {"h_L": 0.01, "regions": [{"m": 2, "regions": ["core"]}]}}]})");

  std::mt19937_64 rng(7);
  std::normal_distribution<double> n01;
  const auto grid = clockwork::make_grid(1.0, 1.0, 2, 2, o, ex, ey);
  for (int variant = 0; variant < 3; ++variant) {
    std::vector<clockwork::FrameVertex> vs;
    for (const auto& x : grid.vertices) {
      clockwork::FrameVertex v;
      v.x = x;
      v.v = Vec3(n01(rng), n01(rng), n01(rng));
      v.mass = vs.empty() ? std::numeric_limits<double>::infinity() : 0.01;
      v.events = vs.size() * 1000;
      v.has_phantom = variant == 2;
      v.phantom_x = x;
      vs.push_back(v);
    }
    const fs::path p = work / ("frame" + std::to_string(variant) + ".ply");
    clockwork::write_ply(p.string(), vs, grid.triangles, variant >= 1);
    add(Kind::Ply, "generated " + p.filename().string(), slurp(p));
  }
}

/// Corpus files by extension; other files (a scene's meshes) are copied into `work`
/// under their path relative to the corpus folder, for scenes that name them.
void load_corpus(const std::vector<std::string>& dirs, const fs::path& work, std::vector<Seed>& seeds) {
  constexpr std::uintmax_t kMaxBytes = 128 * 1024;  // bigger seeds slow every mutant
  for (const auto& dir : dirs) {
    if (!fs::is_directory(dir)) {
      std::fprintf(stderr, "fuzz_readers: --corpus %s: not a folder\n", dir.c_str());
      std::exit(2);
    }
    // In name order: a folder's listing order varies between file systems, the seeds'
    // order must not (the mutants depend on it).
    std::vector<fs::path> files;
    for (const auto& entry : fs::recursive_directory_iterator(dir))
      if (entry.is_regular_file() && entry.file_size() <= kMaxBytes) files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    for (const fs::path& p : files) {
      const std::string ext = p.extension().string();
      const fs::path rel = fs::relative(p, dir);
      if (ext == ".json") {
        Seed s{Kind::Scene, p.string(), slurp(p), {}, {}};
        s.doc = nlohmann::json::parse(s.bytes, nullptr, false);
        seeds.push_back(std::move(s));
        continue;
      }
      fs::create_directories((work / rel).parent_path());
      fs::copy_file(p, work / rel, fs::copy_options::overwrite_existing);
      fs::path other = p;
      if (ext == ".obj") seeds.push_back({Kind::Obj, p.string(), slurp(p), {}, {}});
      if (ext == ".msh") seeds.push_back({Kind::Gmsh, p.string(), slurp(p), {}, {}});
      if (ext == ".ply") seeds.push_back({Kind::Ply, p.string(), slurp(p), {}, {}});
      if (ext == ".node" && fs::exists(other.replace_extension(".ele")) &&
          fs::file_size(other) <= kMaxBytes) {
        seeds.push_back({Kind::TetgenNode, p.string(), slurp(p), slurp(other), {}});
        seeds.push_back({Kind::TetgenEle, other.string(), slurp(other), slurp(p), {}});
      }
    }
  }
}

// --- the campaign -----------------------------------------------------------------------

struct Options {
  double seconds = 10.0;
  std::uint64_t seed = 1;
  long long runs = -1;  // < 0: until --seconds
  std::vector<std::string> corpus;
  fs::path findings = "fuzz_findings";
  bool keep_going = false;  // collect every distinct finding instead of stopping
  bool minimize = false;    // shrink each finding's input while it keeps its bucket
  std::vector<std::string> replay;
};

/// Writes the mutant where its reader expects it; returns the path to give the reader.
std::string place(Kind kind, const fs::path& work, const std::string& bytes, const std::string& companion) {
  const fs::path base = work / "mutant";
  if (kind == Kind::TetgenNode || kind == Kind::TetgenEle) {
    spit(fs::path(base).replace_extension(extension(kind)), bytes);
    spit(fs::path(base).replace_extension(kind == Kind::TetgenNode ? ".ele" : ".node"), companion);
    return base.string();
  }
  const fs::path p = fs::path(base).replace_extension(extension(kind));
  spit(p, bytes);
  return p.string();
}

/// Greedy shrinking: drops JSON members and elements (scenes), then byte ranges, while
/// the reader still fails the same way. Bounded (each try is a reader call).
std::string minimize(Kind kind, std::string bytes, const std::string& companion, const std::string& key,
                     const fs::path& work) {
  const auto start = std::chrono::steady_clock::now();
  const auto budget_left = [&] {
    return std::chrono::steady_clock::now() - start < std::chrono::seconds(60);
  };
  const auto same = [&](const std::string& candidate) {
    // Its own log: the finding's (child.log) is kept for the findings folder.
    const Outcome o = run_child(kind, place(kind, work, candidate, companion), work / "minimize.log");
    return !o.ok && o.key == key;
  };
  for (std::size_t chunk = bytes.size() / 2; chunk >= 1 && budget_left(); chunk /= 2) {
    for (std::size_t at = 0; at + chunk <= bytes.size() && budget_left();) {
      std::string candidate = bytes;
      candidate.erase(at, chunk);
      if (same(candidate)) bytes = std::move(candidate);
      else at += chunk;
    }
  }
  return bytes;
}

std::string escaped_head(const std::string& bytes, std::size_t n) {
  std::string out;
  for (std::size_t i = 0; i < bytes.size() && i < n; ++i) {
    const unsigned char c = static_cast<unsigned char>(bytes[i]);
    if (c == '\n' || (c >= 32 && c < 127)) out += static_cast<char>(c);
    else out += "\\x" + std::string(1, "0123456789abcdef"[c >> 4]) + "0123456789abcdef"[c & 15];
  }
  if (bytes.size() > n) out += "\n... (" + std::to_string(bytes.size()) + " bytes in all)";
  return out;
}

int replay(const Options& opt) {
  int findings = 0;
  for (const std::string& file : opt.replay) {
    const std::string ext = fs::path(file).extension().string();
    Kind kind = Kind::Scene;
    std::string path = file;
    if (ext == ".obj") kind = Kind::Obj;
    else if (ext == ".msh") kind = Kind::Gmsh;
    else if (ext == ".ply") kind = Kind::Ply;
    else if (ext == ".node" || ext == ".ele") kind = Kind::TetgenNode, path = fs::path(file).replace_extension().string();
    const fs::path log = fs::temp_directory_path() / ("fuzz_readers_replay_" + std::to_string(getpid()) + ".log");
    const Outcome o = run_child(kind, path, log);
    std::printf("%s (%s): %s (%.3f s)\n", file.c_str(), kind_name(kind), o.ok ? "ok" : o.what.c_str(), o.seconds);
    if (!o.ok) {
      ++findings;
      std::printf("%s\n", slurp(log).c_str());
    }
    fs::remove(log);
  }
  return findings ? 1 : 0;
}

int campaign(const Options& opt) {
  const fs::path work = fs::temp_directory_path() / ("fuzz_readers_" + std::to_string(getpid()));
  fs::remove_all(work);
  fs::create_directories(work);
  fs::create_directories(opt.findings);
  std::vector<Seed> seeds;
  load_corpus(opt.corpus, work, seeds);
  add_generated_seeds(seeds, work);

  // Every seed as it is: a valid input that fails is a finding. Big scenes (the capes'
  // 5852 vertices load in 1-2 s) would spend the campaign's time in few calls: they are
  // left out by their size, not their load time, so that the seeds, and with them the
  // mutants, depend on the seed number alone.
  constexpr std::size_t kMaxSeedVertices = 4000;
  std::vector<Seed> used;
  std::map<Kind, std::vector<std::size_t>> by_kind;
  for (auto& s : seeds) {
    const Outcome o = run_child(s.kind, place(s.kind, work, s.bytes, s.companion), work / "child.log");
    if (!o.ok) {
      std::printf("FINDING on the unmutated seed %s: %s\n%s\n", s.origin.c_str(), o.what.c_str(),
                  slurp(work / "child.log").c_str());
      return 1;
    }
    const std::string log = slurp(work / "child.log");
    const auto at = log.find("VERTICES ");
    const std::size_t vertices = at == std::string::npos ? 0 : std::stoul(log.substr(at + 9));
    if (vertices > kMaxSeedVertices) {
      std::printf("seed %s: %zu vertices (%.2f s to load), left out\n", s.origin.c_str(), vertices, o.seconds);
      continue;
    }
    by_kind[s.kind].push_back(used.size());
    used.push_back(std::move(s));
  }
  std::printf("fuzz_readers: seed %llu, %zu seeds (", static_cast<unsigned long long>(opt.seed), used.size());
  for (const auto& [k, v] : by_kind) std::printf(" %s %zu", kind_name(k), v.size());
  std::printf(" ), %g s, findings to %s\n", opt.seconds, opt.findings.c_str());
  std::fflush(stdout);

  Rng rng(opt.seed);
  std::map<std::string, int> buckets;  // finding key -> number of mutants hitting it
  std::map<Kind, long long> calls;
  const auto start = std::chrono::steady_clock::now();
  long long iteration = 0;
  for (;; ++iteration) {
    if (opt.runs >= 0 ? iteration >= opt.runs
                      : std::chrono::steady_clock::now() - start >= std::chrono::duration<double>(opt.seconds))
      break;
    const Seed& s = used[pick(rng, used.size())];
    const auto& same_kind = by_kind[s.kind];
    std::string bytes;
    if (s.kind == Kind::Scene && !s.doc.is_discarded() && pick(rng, 3) != 0) {
      bytes = mutate_json(s.doc, rng);
      if (pick(rng, 4) == 0) mutate_bytes(bytes, used[pick_of(rng, same_kind)].bytes, rng);
    } else {
      bytes = s.bytes;
      for (std::size_t m = 1 + pick(rng, 4); m > 0; --m)
        mutate_bytes(bytes, used[pick_of(rng, same_kind)].bytes, rng);
    }
    const std::string path = place(s.kind, work, bytes, s.companion);
    const Outcome o = run_child(s.kind, path, work / "child.log");
    ++calls[s.kind];
    if (o.ok || buckets[o.key]++ > 0) continue;

    const std::string stem = "finding-" + std::to_string(buckets.size());
    fs::copy_file(work / "child.log", opt.findings / (stem + ".log"), fs::copy_options::overwrite_existing);
    std::string kept = opt.minimize ? minimize(s.kind, bytes, s.companion, o.key, work) : bytes;
    const fs::path saved = opt.findings / (stem + extension(s.kind));
    spit(saved, kept);
    if (s.kind == Kind::TetgenNode || s.kind == Kind::TetgenEle)
      spit(opt.findings / (stem + (s.kind == Kind::TetgenNode ? ".ele" : ".node")), s.companion);
    std::printf("FINDING %s (%s reader)\n  seed %llu iteration %lld, mutant of %s\n  saved as %s (%zu bytes)%s\n"
                "  key: %s\n--- input ---\n%s\n--- end ---\n",
                o.what.c_str(), kind_name(s.kind), static_cast<unsigned long long>(opt.seed), iteration,
                s.origin.c_str(), saved.c_str(), kept.size(), opt.minimize ? ", minimized" : "",
                o.key.c_str(), escaped_head(kept, 600).c_str());
    std::fflush(stdout);
    if (!opt.keep_going) break;
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("fuzz_readers: %lld mutants in %.1f s (", iteration, wall);
  for (const auto& [k, n] : calls) std::printf(" %s %lld", kind_name(k), n);
  std::printf(" ), %zu distinct findings\n", buckets.size());
  for (const auto& [key, n] : buckets) std::printf("  %5d x %s\n", n, key.c_str());
  fs::remove_all(work);
  return buckets.empty() ? 0 : 1;
}

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr,
               "fuzz_readers: %s\nusage: fuzz_readers --seconds S --seed N --corpus DIR... [--runs N] "
               "[--findings DIR] [--keep-going] [--minimize]\n       fuzz_readers --replay FILE...\n",
               why);
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  std::vector<std::string>* list = nullptr;  // --corpus and --replay take several values
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage((a + ": needs a value").c_str());
      return argv[++i];
    };
    try {
      if (a == "--seconds") opt.seconds = std::stod(value()), list = nullptr;
      else if (a == "--seed") opt.seed = std::stoull(value()), list = nullptr;
      else if (a == "--runs") opt.runs = std::stoll(value()), list = nullptr;
      else if (a == "--findings") opt.findings = value(), list = nullptr;
      else if (a == "--keep-going") opt.keep_going = true, list = nullptr;
      else if (a == "--minimize") opt.minimize = true, list = nullptr;
      else if (a == "--corpus") list = &opt.corpus;
      else if (a == "--replay") list = &opt.replay;
      else if (list && a.rfind("--", 0) != 0) list->push_back(a);
      else usage(("unknown argument " + a).c_str());
    } catch (const std::logic_error&) {  // stod, stoull: not a number
      usage((a + ": not a number").c_str());
    }
  }
  if (!opt.replay.empty()) return replay(opt);
  if (opt.corpus.empty()) usage("--corpus: give at least one folder (demos/)");
  if (!(opt.seconds > 0.0)) usage("--seconds: must be > 0");
  return campaign(opt);
}
