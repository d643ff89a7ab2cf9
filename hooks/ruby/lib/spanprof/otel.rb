# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# An OpenTelemetry SDK span processor that tells spanprof which span is active on each thread,
# following Pyroscope's span-profile conventions (local root span, pyroscope.profile.id).
require "uri"
require "spanprof"

module SpanProf
  module Otel
    PROFILE_ID_ATTRIBUTE = "pyroscope.profile.id"
    PROFILE_URL_ATTRIBUTE = "pyroscope.profile.url"
    CPU_PROFILE_TYPE = "process_cpu:cpu:nanoseconds:cpu:nanoseconds"
    INVALID_SPAN_ID = ("\0" * 8).b.freeze
    MAX_DEPTH = 64 # spans a thread may have open at once before the oldest is forgotten

    # One started span on a thread's stack. root is the entry of its local root (itself for a
    # root), which keeps the root span to follow renames; the packed struct is rebuilt when the
    # root's name changed since it was packed.
    class Entry
      attr_reader :span_id, :root, :span
      attr_accessor :ended, :name, :name_bytes

      def initialize(trace_id, span_id, root: nil, span: nil, name_bytes: "".b)
        @trace_id, @span_id = trace_id, span_id
        @root = root || self
        @span = span
        @name = span&.name
        @name_bytes = name_bytes
        @ended = false
      end

      def pack
        nb = @root.name_bytes
        return @pack if @pack && @packed_name.equal?(nb)

        @packed_name = nb
        @pack = Native.pack_span(@trace_id, @span_id, @root.equal?(self) ? INVALID_SPAN_ID : @root.span_id, nb)
      end
    end

    # Adds a SpanProcessor to the SDK's tracer provider after OpenTelemetry::SDK.configure has
    # run, publishes the provider's resource as process context, and returns the processor (nil, with a warning, when the provider is not the SDK's yet). Adding it
    # inside configure would stop the SDK from building the exporters named by
    # OTEL_TRACES_EXPORTER: it does that only when configure added no span processor.
    # per_fiber: (default true) also gives fibers that take turns on a thread their own spans
    # (SpanProf::Fibers.install, which SPANPROF_TASKS=off turns off).
    def self.install(tracer_provider = ::OpenTelemetry.tracer_provider, per_fiber: true, **options)
      unless tracer_provider.respond_to?(:add_span_processor)
        SpanProf.logger.warn("spanprof: SpanProf::Otel.install needs the SDK's tracer provider; " \
                             "call it after OpenTelemetry::SDK.configure")
        return nil
      end
      processor = SpanProcessor.new(**options)
      tracer_provider.add_span_processor(processor)
      processor.publish_resource(tracer_provider.resource) if tracer_provider.respond_to?(:resource)
      if per_fiber && processor.enabled?
        processor.owns_fibers = Fibers.install(options[:hook] || SpanProf.hook)
      end
      processor
    end

    # Calls spanprof's hook when a span starts (it becomes the thread's active span) and when
    # it finishes (the thread's previous span, normally its parent, is active again; or none).
    # Add it to the tracer provider after configure, so the exporters configure builds from
    # OTEL_TRACES_EXPORTER stay:
    #
    #   OpenTelemetry::SDK.configure { |c| c.service_name = "checkout" }
    #   SpanProf::Otel.install # = OpenTelemetry.tracer_provider.add_span_processor(SpanProcessor.new)
    #
    # Options:
    #   root_span_only: (true) Pyroscope's convention: only local root spans (no parent, or a
    #     remote parent) get pyroscope.profile.id, and samples taken in their child spans carry
    #     the root's id and name. false: every span gets it and labels its own samples.
    #   add_span_name: (true) pass the (root) span's name; the agent labels samples span_name.
    #   add_url: (true) also set pyroscope.profile.url, a link to the service's CPU profile in
    #     the Pyroscope UI around the span's start; only when pyroscope_url: is given.
    #   pyroscope_url: the Pyroscope UI's base URL, e.g. "http://pyroscope:4040".
    #   service_name: for that link; default as the agent derives it (OTEL_SERVICE_NAME,
    #     service.name in OTEL_RESOURCE_ATTRIBUTES, else the process name).
    #
    # Like Pyroscope's processor, every span the SDK hands over is considered: the SDK calls
    # processors for recording spans only, sampled or not. Never raises into the application: an
    # unexpected error is logged once and the span is skipped. Without libspanprof.so it does
    # nothing.
    class SpanProcessor
      def initialize(root_span_only: true, add_span_name: true, add_url: true, pyroscope_url: nil,
                     service_name: nil, hook: nil)
        @hook = hook || SpanProf.hook
        @root_span_only = root_span_only ? true : false
        @add_span_name = add_span_name ? true : false
        @url_base = add_url && pyroscope_url && !pyroscope_url.to_s.empty? ? pyroscope_url.to_s.chomp("/") : nil
        @service_name = service_name || default_service_name if @url_base
        @enabled = @hook.loaded?
        @stack_key = :"__spanprof_stack_#{object_id}"
        @live = {} # span_id -> [entry, the owning thread's stack]
        @live_lock = Mutex.new
        @error_logged = false
        @names = {} # span name -> its bounded bytes; names are few, encode once
        @published = false # the SDK's resource went out as process context
      end

      # false once shut down, or without the library.
      def enabled?
        @enabled
      end

      # Set by Otel.install when it turned per-fiber spans on: shutdown turns them off again.
      attr_writer :owns_fibers

      # --- the SDK's SpanProcessor interface -----------------------------------------------
      # Without an agent nothing is tracked: the processor costs one semaphore read per span.
      def on_start(span, parent_context)
        publish_resource(span.resource) if !@published && @enabled && span.respond_to?(:resource)
        start(span, parent_context) if @enabled && @hook.active?
      rescue StandardError => e
        log_error("on_start", e)
      end

      # Newer SDKs may call this just before on_finish; nothing to do here.
      def on_finishing(_span); end

      def on_finish(span)
        finish(span) if @enabled
      rescue StandardError => e
        log_error("on_finish", e)
      end

      def force_flush(timeout: nil) # rubocop:disable Lint/UnusedMethodArgument
        success
      end

      # Stops the processor; the calling thread is left with no span, and the per-fiber spans
      # Otel.install turned on are off (the TracePoint would hand the hook this processor's spans).
      def shutdown(timeout: nil) # rubocop:disable Lint/UnusedMethodArgument
        if @enabled
          @enabled = false
          Fibers.uninstall if @owns_fibers
          @owns_fibers = false
          stack = Thread.current[@stack_key]
          if stack && !stack.empty?
            stack.clear
            if @hook.active?
              @hook.clear
              Fibers.remember(nil)
            end
          end
          @live_lock.synchronize { @live.clear }
        end
        success
      rescue StandardError => e
        log_error("shutdown", e)
        success
      end

      # Publishes the SDK resource's String attributes (service.name, service.namespace, ...) as
      # OpenTelemetry process context (OTEP 4719), so the agent names this process's profiles as
      # its traces are named. Done once, from the first span, unless called first (install
      # does). Returns true when published.
      def publish_resource(resource)
        return false unless resource.respond_to?(:attribute_enumerator)

        @published = true
        attrs = resource.attribute_enumerator.select { |_k, v| v.is_a?(String) }.to_h
        err = @hook.respond_to?(:publish_context) ? @hook.publish_context(attrs) : -38
        unless err.zero? || @publish_logged
          @publish_logged = true
          SpanProf.logger.warn("spanprof: could not publish the resource as process context " \
                               "(errno #{-err}); the agent names the service from the environment")
        end
        err.zero?
      rescue StandardError => e
        log_error("publish_resource", e)
        false
      end

      private

      def start(span, parent_context)
        ctx = span.context
        parent_id = span.parent_span_id
        if @root_span_only && parent_id && parent_id != INVALID_SPAN_ID && !parent_remote?(parent_context)
          found = @live_lock.synchronize { @live[parent_id] }
          # A local parent this processor never saw started before the agent attached (or
          # before the processor was added): as in Pyroscope's processor, such a span is not a
          # local root and gets nothing.
          return unless found

          # A child: its samples belong to the local root (its own id goes along, for agents
          # run with --span-scope all).
          entry = Entry.new(ctx.trace_id, ctx.span_id, root: found.first.root)
        else
          # A local root, or any span in all-spans scope.
          annotate(span, ctx)
          entry = Entry.new(ctx.trace_id, ctx.span_id, span: span, name_bytes: @add_span_name ? name_bytes(span.name) : "".b)
        end
        push(entry)
        activate(entry)
      end

      def push(entry)
        stack = thread_stack
        stack.pop while !stack.empty? && stack.last.ended # spans another thread finished
        if stack.size >= MAX_DEPTH # spans that never finish must not grow the stack forever
          dropped = stack.shift
          @live_lock.synchronize { @live.delete(dropped.span_id) }
        end
        stack.push(entry)
        @live_lock.synchronize { @live[entry.span_id] = [entry, stack] }
      end

      def finish(span)
        entry, stack = @live_lock.synchronize { @live.delete(span.context.span_id) }
        return unless entry # never seen

        entry.ended = true
        # Finished on another thread or fiber: the hook only speaks for the calling thread, so
        # the owner drops the entry at its next span start or finish.
        return unless stack.equal?(Thread.current[@stack_key])

        popped = false
        while !stack.empty? && stack.last.ended
          stack.pop
          popped = true
        end
        if popped
          activate(stack.last)
        else
          stack.delete_if { |e| e.equal?(entry) } # finished out of order: nothing changes
        end
      end

      def name_bytes(name)
        @names[name] || (@names.size < 256 ? @names[name.dup.freeze] = Ids.name_bytes(name).freeze : Ids.name_bytes(name))
      end

      def activate(entry)
        return unless @hook.active? # nobody listens: do not build the struct

        unless entry
          @hook.clear
          return Fibers.remember(nil)
        end
        follow_rename(entry.root)
        raw = entry.pack
        @hook.set(raw)
        Fibers.remember(raw) # the running fiber's span (SpanProf::Fibers)
      end

      # The SDK tells processors nothing when name= renames a span, so the root's current name
      # is compared with the packed one at each hook call of its trace.
      def follow_rename(root)
        return unless @add_span_name && root.span

        name = root.span.name
        return if name.equal?(root.name) || name == root.name

        root.name = name
        root.name_bytes = name_bytes(name)
      end

      # Fiber-local (Thread#[]), as OpenTelemetry's context is: each fiber has its own stack.
      def thread_stack
        Thread.current[@stack_key] ||= []
      end

      def parent_remote?(parent_context)
        return false unless defined?(::OpenTelemetry::Trace) && ::OpenTelemetry::Trace.respond_to?(:current_span)

        ::OpenTelemetry::Trace.current_span(parent_context).context.remote?
      end

      def annotate(span, ctx)
        profile_id = ctx.span_id.unpack1("H*")
        span.set_attribute(PROFILE_ID_ATTRIBUTE, profile_id)
        check_kept(span)
        span.set_attribute(PROFILE_URL_ATTRIBUTE, profile_url(span.name)) if @url_base
      end

      # The SDK keeps a span's first attribute_count_limit attributes and drops newer ones, so
      # a span whose start attributes fill the limit loses pyroscope.profile.id. Say so, once.
      def check_kept(span)
        return if @limit_logged || !span.respond_to?(:attributes)

        attrs = span.attributes
        return if attrs.nil? || attrs.key?(PROFILE_ID_ATTRIBUTE)

        @limit_logged = true
        SpanProf.logger.warn("spanprof: a span's start attributes fill its attribute limit " \
                             "(OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT), so the SDK dropped " \
                             "pyroscope.profile.id and Grafana cannot link it; its samples are still labelled " \
                             "(logged once)")
      end

      # The service's CPU profile in the Pyroscope UI from a minute before the span's start to
      # an hour after. span_id is a sample label, not a series label, so the UI's query cannot
      # select one span; Grafana's trace-to-profile link does that with pyroscope.profile.id.
      def profile_url(name)
        labels = [%(service_name="#{quote(@service_name)}")]
        labels << %(span_name="#{quote(Ids.name_bytes(name).force_encoding(Encoding::UTF_8))}") if @add_span_name && name && !name.empty?
        now = Time.now.to_i
        query = URI.encode_www_form(query: "#{CPU_PROFILE_TYPE}{#{labels.join(",")}}", from: now - 60, until: now + 3600)
        "#{@url_base}/?#{query}"
      end

      def quote(value)
        value.to_s.gsub(/["\\]/) { |c| "\\#{c}" }
      end

      def default_service_name
        return ENV["OTEL_SERVICE_NAME"] if ENV["OTEL_SERVICE_NAME"] && !ENV["OTEL_SERVICE_NAME"].empty?

        ENV.fetch("OTEL_RESOURCE_ATTRIBUTES", "").split(",").each do |kv|
          key, value = kv.split("=", 2)
          return URI.decode_www_form_component(value.strip) if key&.strip == "service.name" && value
        end
        File.read("/proc/self/comm").strip
      rescue StandardError
        File.basename($PROGRAM_NAME)
      end

      def success
        defined?(::OpenTelemetry::SDK::Trace::Export::SUCCESS) ? ::OpenTelemetry::SDK::Trace::Export::SUCCESS : 0
      end

      def log_error(where, err)
        return if @error_logged

        @error_logged = true
        SpanProf.logger.warn("spanprof: SpanProcessor##{where} failed; span skipped (logged once): " \
                             "#{err.class}: #{err.message}")
      end
    end
  end
end
