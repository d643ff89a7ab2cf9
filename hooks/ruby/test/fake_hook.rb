# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# A hook that records what would reach spanprof_span_set(), for the processor tests.
require "spanprof"

class FakeHook
  attr_accessor :active, :loaded, :calls

  def initialize(active: true, loaded: true)
    @active, @loaded, @calls, @lock = active, loaded, [], Mutex.new
  end

  def active?
    @active
  end

  def loaded?
    @loaded
  end

  def path
    @loaded ? "/fake/libspanprof.so" : nil
  end

  def set(raw)
    abi, reserved, trace, span, root, name = raw.unpack(SpanProf::Native::SPAN_FORMAT)
    fields = { abi: abi, reserved: reserved, trace_id: trace.unpack1("H*"), span_id: span.unpack1("H*"),
               root_span_id: root.unpack1("H*"), name: name.delete("\0").force_encoding(Encoding::UTF_8) }
    @lock.synchronize { @calls << [:set, Thread.current, fields] }
  end

  def clear
    @lock.synchronize { @calls << [:clear, Thread.current] }
  end

  # Each publish_context call's attributes.
  def published
    @published ||= []
  end

  def publish_context(attributes)
    published << attributes.dup
    0
  end

  # The calls so far as [:set, span_id, root_span_id, name] or [:clear]; forgets them.
  def take
    calls = @lock.synchronize { @calls.slice!(0..) }
    calls.map { |c| c[0] == :set ? [:set, c[2][:span_id], c[2][:root_span_id], c[2][:name]] : [:clear] }
  end
end
