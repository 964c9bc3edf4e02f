#include "engine/trace.hpp"

#include "engine/event_source.hpp"

#include <fmt/format.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <stdexcept>

namespace clockwork {

namespace {
std::string unique_logger_name() {
  static std::atomic<int> counter{0};
  return fmt::format("clockwork-trace-{}", counter++);
}
}  // namespace

Trace::Trace(const std::string& path, TraceFormat format) : format_(format) {
  try {
    auto sink = std::make_shared<spdlog::sinks::basic_file_sink_st>(path, /*truncate=*/true);
    logger_ = std::make_shared<spdlog::logger>(unique_logger_name(), std::move(sink));
  } catch (const spdlog::spdlog_ex& e) {
    throw std::runtime_error(fmt::format("--trace: cannot open '{}' for writing: {}", path, e.what()));
  }
  logger_->set_pattern("%v");
  logger_->set_level(spdlog::level::info);
  if (format_ == TraceFormat::kChrome) logger_->info("{}", R"({"displayTimeUnit":"ns","traceEvents":[)");
}

Trace::~Trace() {
  if (format_ == TraceFormat::kChrome) logger_->info("{}", "]}");
  logger_->flush();
}

void Trace::name_track(EventKind kind, std::string_view kind_name) {
  if (format_ != TraceFormat::kChrome) return;
  logger_->info("{}{{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":{},"
                "\"args\":{{\"name\":\"{}\"}}}}",
                count_ == 0 ? "" : ",", kind, kind_name);
  ++count_;
}

void Trace::record(const EventNode& e, std::string_view kind_name, int stencil_size,
                   const EventEffects& fx, double wall_seconds) {
  if (format_ == TraceFormat::kJsonLines) {
    logger_->info(
        "{{\"t\":{:.17g},\"seq\":{},\"kind\":\"{}\",\"slot\":{},\"stencil\":{},"
        "\"created\":{},\"rescheduled\":{},\"destroyed\":{},\"wall_us\":{:.3f}}}",
        e.time, e.seq, kind_name, e.slot, stencil_size, fx.created, fx.rescheduled,
        fx.destroyed, wall_seconds * 1e6);
  } else {
    // Simulated time on the timeline (1 simulated microsecond = 1 us of trace time);
    // one track (tid) per event kind; wall time of the handler in args.
    logger_->info(
        "{}{{\"name\":\"{}\",\"cat\":\"{}\",\"ph\":\"i\",\"s\":\"t\",\"ts\":{:.6f},\"pid\":1,"
        "\"tid\":{},\"args\":{{\"slot\":{},\"stencil\":{},\"created\":{},\"rescheduled\":{},"
        "\"destroyed\":{},\"wall_us\":{:.3f}}}}}",
        count_ == 0 ? "" : ",", kind_name, kind_name, e.time * 1e6, e.kind, e.slot,
        stencil_size, fx.created, fx.rescheduled, fx.destroyed, wall_seconds * 1e6);
  }
  ++count_;
}

void Trace::on_source_added(EventKind kind, const EventSource& source) { name_track(kind, source.name()); }

void Trace::before_event(const EventNode& /*event*/, const EventSource& /*source*/) {
  effects_ = {};
  wall_start_ = std::chrono::steady_clock::now();
}

void Trace::after_event(const EventNode& event, const EventSource& source) {
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start_).count();
  record(event, source.name(), source.stencil_size(event.slot), effects_, wall);
}

void Trace::on_queue_change(EventKind /*kind*/, EventSlot /*slot*/, QueueChange what) {
  switch (what) {
    case QueueChange::created: ++effects_.created; break;
    case QueueChange::rescheduled: ++effects_.rescheduled; break;
    case QueueChange::destroyed: ++effects_.destroyed; break;
  }
}

TraceFormat parse_trace_format(std::string_view name) {
  if (name == "json") return TraceFormat::kJsonLines;
  if (name == "chrome") return TraceFormat::kChrome;
  throw std::invalid_argument(
      fmt::format("--trace-format: unknown format '{}' (expected 'json' or 'chrome')", name));
}

}  // namespace clockwork
