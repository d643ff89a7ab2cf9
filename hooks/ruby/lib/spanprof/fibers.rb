# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Per-fiber spans: fibers that take turns on one thread (a fiber scheduler such as async's or
# Falcon's) each get their own span in the profiles.
#
# The hook speaks for a native thread, and a fiber switch changes no thread. So the span the
# running code set (SpanProf.set_span, or the span processor) is kept fiber-locally, as
# OpenTelemetry keeps its context, and a :fiber_switch TracePoint (every CRuby the gem runs on) hands
# the hook the span of the fiber switched to, unless the thread's hook holds it already. A
# non-blocking fiber that set no span (a scheduled task before its first span) runs with none, and
# so does the fiber that set a fiber scheduler (the scheduler's own). A blocking fiber that never
# set a span (an Enumerator's, for #next and #peek; a thread's root fiber) leaves the hook alone:
# it runs in the span of the code that resumed it, at no hook call. SPANPROF_TASKS=off in the
# environment makes install do nothing.
module SpanProf
  module Fibers
    ENV_SWITCH = "SPANPROF_TASKS"
    SPAN_KEY = :__spanprof_span # fiber-local: the packed span the fiber's code set, false: none
    PUBLISHED_KEY = :__spanprof_published # thread variable: what the thread's hook holds
    NON_BLOCKING = Fiber.method_defined?(:blocking?) # Ruby 3.0+: non-blocking (scheduled) fibers

    class << self
      # Whether this Ruby has the :fiber_switch trace event (CRuby has had it since 2.4).
      def supported?
        return @supported unless @supported.nil?

        @supported = begin
          TracePoint.new(:fiber_switch) {}
          true
        rescue ArgumentError
          false
        end
      end

      # false when SPANPROF_TASKS is off, false, no or 0.
      def enabled?(env = ENV)
        !%w[0 off false no].include?(env.fetch(ENV_SWITCH, "").strip.downcase)
      end

      # Turns per-fiber spans on for every thread. Returns true when on.
      def install(hook = SpanProf.hook)
        unless enabled?
          SpanProf.logger.info("spanprof: per-fiber spans are off (#{ENV_SWITCH})")
          return false
        end
        unless supported?
          SpanProf.logger.info("spanprof: per-fiber spans need the :fiber_switch trace event, which this Ruby lacks")
          return false
        end
        @trace&.disable
        @trace = TracePoint.new(:fiber_switch) { switched(hook) }
        Fiber.singleton_class.prepend(SchedulerMark) if Fiber.respond_to?(:set_scheduler)
        @trace.enable
        true
      end

      # Turns per-fiber spans off: the hook is no longer called at fiber switches.
      def uninstall
        @trace&.disable
        @trace = nil
      end

      # Fiber.set_scheduler's caller runs the scheduler: it gets no span, not its resumer's.
      module SchedulerMark
        def set_scheduler(scheduler)
          t = Thread.current
          t[SPAN_KEY] = false if t[SPAN_KEY].nil?
          super
        end
      end

      def installed?
        !@trace.nil? && @trace.enabled?
      end

      # Records that the hook was just given raw (nil: cleared) by the running fiber.
      def remember(raw)
        t = Thread.current
        t[SPAN_KEY] = raw || false
        t.thread_variable_set(PUBLISHED_KEY, raw)
      end

      # In the fiber switched to: hands the hook its span. A fiber that never set one runs with
      # none, unless it is blocking (an Enumerator's, a root fiber): that one keeps the hook as is.
      def switched(hook)
        raw = Thread.current[SPAN_KEY]
        if raw.nil?
          return if !NON_BLOCKING || Fiber.current.blocking?
        elsif raw == false
          raw = nil
        end
        switch_to(hook, raw)
      end

      # What the calling thread's hook holds: the packed span, or nil.
      def published
        Thread.current.thread_variable_get(PUBLISHED_KEY)
      end

      # Gives the calling thread's hook raw (nil: no span) unless it holds that already.
      def switch_to(hook, raw)
        t = Thread.current
        return if raw.equal?(t.thread_variable_get(PUBLISHED_KEY))

        t.thread_variable_set(PUBLISHED_KEY, raw)
        raw ? hook.set(raw) : hook.clear
      end
    end
  end
end
