# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Stand-ins for the OpenTelemetry SDK objects a span processor receives, limited to what the SDK
# documents (Span#context, #parent_span_id, #name, #set_attribute; SpanContext#trace_id/#span_id
# binary Strings, #trace_flags.sampled?, #remote?; OpenTelemetry::Trace.current_span(context)),
# and a fake hook that records what would reach spanprof_span_set().
$LOAD_PATH.unshift(File.expand_path("../lib", __dir__))
require "minitest/autorun"
require "stringio"
require "spanprof"
require "spanprof/otel"

module OpenTelemetry
  # The one API call the processor makes: the span a parent context holds.
  module Trace
    def self.current_span(context = nil)
      context&.span || FakeSpan::INVALID
    end
  end
end

FakeContext = Struct.new(:span)

class FakeFlags
  def initialize(sampled)
    @sampled = sampled
  end

  def sampled?
    @sampled
  end
end

class FakeSpanContext
  attr_reader :trace_id, :span_id, :trace_flags

  def initialize(trace_id, span_id, sampled: true, remote: false)
    @trace_id, @span_id, @trace_flags, @remote = trace_id, span_id, FakeFlags.new(sampled), remote
  end

  def remote?
    @remote
  end

  def hex_span_id
    @span_id.unpack1("H*")
  end
end

class FakeSpan
  TRACE = ["ab#{"00" * 14}cd"].pack("H*")
  @next_id = 0x5a5a000000000001
  class << self
    def next_id
      id = @next_id
      @next_id += 1
      [id].pack("Q>")
    end
  end

  attr_reader :name, :context, :parent_span_id, :attributes, :parent_context

  def initialize(name, trace_id: TRACE, parent: nil, sampled: true, remote: false)
    @name = name
    @context = FakeSpanContext.new(trace_id, FakeSpan.next_id, sampled: sampled, remote: remote)
    @parent_span_id = parent ? parent.context.span_id : ("\0" * 8).b
    @parent_context = FakeContext.new(parent)
    @attributes = {}
  end

  INVALID = Struct.new(:context).new(FakeSpanContext.new(("\0" * 16).b, ("\0" * 8).b, sampled: false))

  def set_attribute(key, value)
    @attributes[key] = value
    self
  end

  def child(name, sampled: @context.trace_flags.sampled?)
    FakeSpan.new(name, trace_id: @context.trace_id, parent: self, sampled: sampled)
  end

  def hex
    @context.span_id.unpack1("H*")
  end
end

# A span received from another process: the remote parent of a local root.
def remote_parent_span
  FakeSpan.new("remote caller", remote: true)
end

require "fake_hook"

# Captures what SpanProf.logger writes during the block.
def capture_spanprof_log
  old = SpanProf.instance_variable_get(:@logger)
  io = StringIO.new
  SpanProf.logger = Logger.new(io)
  yield
  io.string
ensure
  SpanProf.logger = old
end
