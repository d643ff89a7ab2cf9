# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# SpanProf::Fibers: fibers taking turns on one thread under a fiber scheduler each hand the hook
# their own span at every switch, through set_span and through the span processor.
require_relative "test_helper"
require_relative "fake_hook"
require_relative "mini_scheduler"

class FibersTest < Minitest::Test
  TRACE = "5a5a0000000000000000000000000001"
  ONE = "5a5a000000000001"
  TWO = "5a5a000000000002"

  def setup
    skip "Ruby #{RUBY_VERSION} has no :fiber_switch trace event" unless SpanProf::Fibers.supported?
    @hook = FakeHook.new
    @saved_hook = SpanProf.hook
    SpanProf.hook = @hook
    SpanProf::Fibers.remember(nil)
    assert SpanProf::Fibers.install(@hook)
  end

  def teardown
    return unless @hook

    SpanProf::Fibers.uninstall
    SpanProf.hook = @saved_hook
    SpanProf::Fibers.remember(nil)
  end

  def spans(calls)
    calls.map { |c| c[0] == :set ? c[2][:span_id] : nil }
  end

  # Runs the blocks as fibers of a MiniScheduler on a thread of their own; returns the hook's calls.
  def scheduled(*blocks)
    Thread.new do
      Fiber.set_scheduler(MiniScheduler.new)
      blocks.each { |b| Fiber.schedule(&b) }
    end.join
    @hook.calls
  end

  def test_each_fiber_runs_in_its_span_and_the_scheduler_in_none
    work = ->(span) { -> { SpanProf.set_span(trace_id: TRACE, span_id: span, name: "f"); 2.times { sleep 0 }; SpanProf.clear_span } }
    seq = spans(scheduled(work.call(ONE), work.call(TWO)))
    assert_equal [ONE, TWO] * 3, seq.compact
    seq.each_cons(2) { |a, b| refute(a && b, "two spans without the scheduler between: #{seq}") }
  end

  def test_no_switch_costs_a_call_when_no_fiber_has_a_span
    assert_empty scheduled(-> { 3.times { sleep 0 } }, -> { 3.times { sleep 0 } })
  end

  def test_processor_stacks_are_per_fiber
    p = SpanProf::Otel::SpanProcessor.new(hook: @hook)
    roots = {}
    request = lambda do |name|
      lambda do
        root = roots[name] = FakeSpan.new(name)
        p.on_start(root, nil)
        child = root.child("db")
        p.on_start(child, FakeContext.new(root))
        sleep 0
        p.on_finish(child)
        sleep 0
        p.on_finish(root)
      end
    end
    calls = scheduled(request.call("GET /a"), request.call("GET /b"))
    a = roots["GET /a"].context.hex_span_id
    b = roots["GET /b"].context.hex_span_id
    sets = calls.select { |c| c[0] == :set }.map { |c| c[2] }
    # every call carries one request's own root: the other fiber's spans never leak in
    sets.each { |f| assert_includes [a, b], f[:root_span_id] == "0" * 16 ? f[:span_id] : f[:root_span_id] }
    # after its child finished, each fiber is back in its own root
    last_a = sets.rindex { |f| f[:span_id] == a || f[:root_span_id] == a }
    assert_equal a, sets[last_a][:span_id]
    assert_equal :clear, calls.last[0]
  end

  def test_an_enumerators_block_runs_in_the_span_of_its_caller_at_no_hook_call
    seen = []
    e = Enumerator.new { |y| 3.times { |i| seen << SpanProf::Fibers.published; y << i } }
    SpanProf.set_span(trace_id: TRACE, span_id: ONE, name: "f")
    @hook.calls.clear
    3.times { e.next }
    e.peek rescue StopIteration
    assert_empty @hook.calls, "hook calls for next without a span change"
    refute_nil seen.first
    assert_equal [SpanProf::Fibers.published] * 3, seen
    SpanProf.clear_span
  end

  def test_a_span_set_inside_an_enumerator_is_taken_back_by_its_caller
    e = Enumerator.new do |y|
      SpanProf.set_span(trace_id: TRACE, span_id: TWO, name: "g")
      y << 1
    end
    SpanProf.set_span(trace_id: TRACE, span_id: ONE, name: "f")
    e.next
    assert_equal [ONE, TWO, ONE], spans(@hook.calls)
    SpanProf.clear_span
  end

  def test_processor_shutdown_turns_the_seam_off
    SpanProf::Fibers.uninstall
    provider = Object.new
    def provider.add_span_processor(_processor); end
    processor = SpanProf::Otel.install(provider, hook: @hook)
    assert SpanProf::Fibers.installed?
    processor.shutdown
    refute SpanProf::Fibers.installed?
    # fibers keep the spans they set; switching to them no longer hands those to the hook
    work = ->(span) { -> { SpanProf.set_span(trace_id: TRACE, span_id: span, name: "f"); 2.times { sleep 0 } } }
    assert_equal [ONE, TWO], spans(scheduled(work.call(ONE), work.call(TWO)))
  end

  def test_off_switch
    refute SpanProf::Fibers.enabled?("SPANPROF_TASKS" => "off")
    refute SpanProf::Fibers.enabled?("SPANPROF_TASKS" => "0")
    assert SpanProf::Fibers.enabled?({})
    SpanProf::Fibers.uninstall
    refute SpanProf::Fibers.installed?
  end
end
