# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# A stand-in for the parts of opentelemetry-sdk 1.10 the processor meets, with the SDK's names and
# behaviours: OpenTelemetry::SDK.configure builds the exporters named by OTEL_TRACES_EXPORTER only
# when the block added no span processor (ConfiguratorPatches); c.logger= replaces
# OpenTelemetry.logger; Span#name= tells no processor; a span keeps its first
# attribute_count_limit attributes and drops newer ones, the limit read from
# OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT (default 128) once, when the SDK is required (SpanLimits::DEFAULT),
# and changed later only through TracerProvider#span_limits=, which spans started afterwards
# follow; finish calls on_finishing then on_finish; the console exporter prints each span to $stdout.
require "logger"
require "securerandom"

module OpenTelemetry
  class << self
    attr_writer :logger, :tracer_provider

    def logger
      @logger ||= Logger.new($stdout)
    end

    def tracer_provider
      @tracer_provider ||= Object.new # the API's proxy: no add_span_processor
    end
  end

  module Trace
    INVALID_SPAN_ID = ("\0" * 8).b.freeze

    def self.context_with_span(span, parent_context: nil) # rubocop:disable Lint/UnusedMethodArgument
      FakeContext.new(span)
    end
  end

  module SDK
    def self.configure
      c = Configurator.new
      yield c if block_given?
      c.configure
    end

    # OpenTelemetry::SDK::Configurator with the ConfiguratorPatches exporter rule.
    class Configurator
      attr_writer :service_name, :logger
      attr_accessor :resource

      def initialize
        @span_processors = []
      end

      def add_span_processor(processor)
        @span_processors << processor
      end

      def configure
        OpenTelemetry.logger = @logger if @logger
        attrs = { "service.name" => @service_name || ENV["OTEL_SERVICE_NAME"] || "unknown_service" }
        provider = Trace::TracerProvider.new(Resources::Resource.create(attrs.merge(@resource&.attribute_enumerator.to_h)))
        processors = @span_processors.empty? ? exporters_from_env : @span_processors
        processors.each { |p| provider.add_span_processor(p) }
        OpenTelemetry.tracer_provider = provider
      end

      private

      def exporters_from_env
        ENV.fetch("OTEL_TRACES_EXPORTER", "otlp").split(",").map(&:strip).filter_map do |name|
          case name
          when "console" then Trace::Export::SimpleSpanProcessor.new(Trace::Export::ConsoleSpanExporter.new)
          when "none" then nil
          else OpenTelemetry.logger.warn("stand-in SDK: exporter #{name} is not available")
          end
        end
      end
    end

    module Resources
      # Like the SDK's: attributes come out through attribute_enumerator.
      class Resource
        def self.create(attributes = {})
          new(attributes)
        end

        def initialize(attributes)
          @attributes = attributes.freeze
        end

        def attribute_enumerator
          @attributes.each
        end
      end
    end

    module Trace
      class SpanLimits
        attr_reader :attribute_count_limit

        def initialize(attribute_count_limit: Integer(ENV.fetch("OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT", "128")))
          @attribute_count_limit = attribute_count_limit
        end

        DEFAULT = new
      end

      SpanData = Struct.new(:name, :attributes, :span_id)

      class TracerProvider
        attr_accessor :span_limits
        attr_reader :resource

        def initialize(resource)
          @resource = resource
          @processors = []
          @span_limits = SpanLimits::DEFAULT
        end

        def add_span_processor(processor)
          @processors << processor
        end

        def tracer(_name = nil, _version = nil)
          Tracer.new(self, @processors, @resource)
        end
      end

      class Tracer
        def initialize(provider, processors, resource)
          @provider, @processors, @resource = provider, processors, resource
        end

        def start_span(name, with_parent: nil, attributes: nil, kind: nil) # rubocop:disable Lint/UnusedMethodArgument
          parent = with_parent&.span
          trace_id = parent ? parent.context.trace_id : SecureRandom.bytes(16)
          ctx = FakeSpanContext.new(trace_id, SecureRandom.bytes(8))
          Span.new(ctx, with_parent, name, parent ? parent.context.span_id : OpenTelemetry::Trace::INVALID_SPAN_ID,
                   @provider.span_limits, @processors, attributes&.dup, @resource)
        end
      end

      class Span
        attr_reader :name, :context, :parent_span_id, :resource

        def initialize(context, parent_context, name, parent_span_id, limits, processors, attributes, resource) # rubocop:disable Metrics/ParameterLists
          @context, @name, @parent_span_id, @limits, @processors = context, name, parent_span_id, limits, processors
          @resource = resource
          @mutex = Mutex.new
          @attributes = attributes
          trim(@attributes)
          @ended = false
          @processors.each { |p| p.on_start(self, parent_context) }
        end

        def attributes
          @attributes&.clone&.freeze
        end

        def recording?
          !@ended
        end

        def set_attribute(key, value)
          @mutex.synchronize do
            unless @ended
              @attributes ||= {}
              @attributes[key] = value
              trim(@attributes)
            end
          end
          self
        end

        def name=(new_name)
          @mutex.synchronize { @name = new_name unless @ended }
        end

        def finish
          @mutex.synchronize do
            return self if @ended

            @processors.each { |p| p.on_finishing(self) if p.respond_to?(:on_finishing) }
            @attributes.freeze
            @ended = true
          end
          @processors.each { |p| p.on_finish(self) }
          self
        end

        def to_span_data
          SpanData.new(@name, @attributes, @context.span_id)
        end

        private

        def trim(attrs) # keeps the first attribute_count_limit, as the SDK does
          return if attrs.nil? || attrs.size <= @limits.attribute_count_limit

          n = @limits.attribute_count_limit
          attrs.delete_if { (n -= 1).negative? }
        end
      end

      module Export
        SUCCESS = 0

        class SimpleSpanProcessor
          def initialize(exporter)
            @exporter = exporter
          end

          def on_start(_span, _parent_context); end

          def on_finish(span)
            @exporter.export([span.to_span_data])
          end
        end

        class ConsoleSpanExporter
          def export(spans, timeout: nil) # rubocop:disable Lint/UnusedMethodArgument
            spans.each { |s| pp s }
            SUCCESS
          end
        end
      end
    end
  end
end
