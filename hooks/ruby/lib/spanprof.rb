# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# spanprof for Ruby: tells the spanprof agent which OpenTelemetry span is active on the calling
# thread, so its CPU samples carry that span's id. Most apps use SpanProf::Otel::SpanProcessor
# (require "spanprof/otel"); this is the hook underneath. libspanprof.so is loaded on require.
require "logger"
require "spanprof/version"
require "spanprof/ids"
require "spanprof/native"
require "spanprof/fibers"

module SpanProf
  class << self
    # A logger of your own; nil (the default) follows OpenTelemetry.logger.
    attr_writer :logger

    # The logger set with SpanProf.logger=, else OpenTelemetry's logger as it is now (looked up
    # at every call, so `c.logger = ...` in OpenTelemetry::SDK.configure is followed even
    # though this file was required before), else a Logger on $stderr.
    def logger
      return @logger if @logger
      return ::OpenTelemetry.logger if defined?(::OpenTelemetry) && ::OpenTelemetry.respond_to?(:logger)

      @stderr_logger ||= Logger.new($stderr)
    end

    # The hook (SpanProf::Native::Hook) every call goes through; tests may swap it.
    attr_accessor :hook

    # Marks the span as active on the calling thread, until the next set_span or clear_span.
    # trace_id (16 bytes) and span_id (8 bytes) are each a binary String (as OpenTelemetry
    # keeps them: span.context.trace_id), a hex String ("4bf92f3577b34da6a3ce929d0e0e4736") or
    # an Integer, and not zero. root_span_id is the id of the span's local root in the same
    # spellings; nil / 0 / "" mean the span is its own local root. name is the local root
    # span's name, cut to 255 bytes. Returns true when an attached agent got the span, false
    # when nobody listens (no agent, no library) or the ids were malformed (logged once).
    # Never raises.
    def set_span(trace_id:, span_id:, root_span_id: nil, name: "")
      return false unless hook.active? # nobody listens: do not even build the struct

      raw = Native.pack_span(Ids.id_bytes(trace_id, 16, "trace_id"), Ids.id_bytes(span_id, 8, "span_id"),
                             Ids.id_bytes(root_span_id, 8, "root_span_id", allow_zero: true), Ids.name_bytes(name))
      hook.set(raw)
      Fibers.remember(raw) # the running fiber's span (SpanProf::Fibers)
      true
    rescue ArgumentError, TypeError => e
      unless @bad_input_logged
        @bad_input_logged = true
        logger.warn("spanprof: span ignored: #{e.message} (further malformed ids are not logged)")
      end
      false
    end

    # No span is active on the calling thread any more. Returns true if an agent listened.
    def clear_span
      return false unless hook.active?

      hook.clear
      Fibers.remember(nil)
      true
    end

    # true while a spanprof agent has the hook attached in this process.
    def active?
      hook.active?
    end

    # true when libspanprof.so was loaded.
    def available?
      hook.loaded?
    end

    # The path libspanprof.so was loaded from, or nil.
    def library_path
      hook.path
    end
  end

  self.hook = Native.load
end
