# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# SpanProf::Otel::SpanProcessor against stand-ins for the SDK's documented span interface: which
# span each thread's hook sees, the pyroscope.profile.* attributes, options, threads, failures.
require_relative "test_helper"

class SpanProcessorTest < Minitest::Test
  ZERO = "0" * 16
  PROFILE_ID = SpanProf::Otel::PROFILE_ID_ATTRIBUTE
  PROFILE_URL = SpanProf::Otel::PROFILE_URL_ATTRIBUTE

  def setup
    @hook = FakeHook.new
    @p = SpanProf::Otel::SpanProcessor.new(hook: @hook)
  end

  def start(span, processor = @p)
    processor.on_start(span, span.parent_context)
  end

  def test_root_span_sets_its_own_id_and_profile_id_then_clears
    root = FakeSpan.new("GET /cart")
    start(root)
    assert_equal [[:set, root.hex, ZERO, "GET /cart"]], @hook.take
    assert_equal({ PROFILE_ID => root.hex }, root.attributes)
    assert_match(/\A\h{16}\z/, root.attributes[PROFILE_ID])
    @p.on_finish(root)
    assert_equal [[:clear]], @hook.take
  end

  def test_struct_carries_abi_version_and_trace_id
    root = FakeSpan.new("r", trace_id: ["4bf92f3577b34da6a3ce929d0e0e4736"].pack("H*"))
    start(root)
    fields = @hook.calls.first[2]
    assert_equal 2, fields[:abi]
    assert_equal 0, fields[:reserved]
    assert_equal "4bf92f3577b34da6a3ce929d0e0e4736", fields[:trace_id]
  end

  def test_child_carries_root_id_and_name_and_finish_restores_the_parent
    root = FakeSpan.new("GET /cart")
    child = root.child("SELECT carts")
    grandchild = child.child("parse row")
    [root, child, grandchild].each { |s| start(s) }
    [grandchild, child, root].each { |s| @p.on_finish(s) }
    r = root.hex
    assert_equal [[:set, r, ZERO, "GET /cart"],
                  [:set, child.hex, r, "GET /cart"],
                  [:set, grandchild.hex, r, "GET /cart"],
                  [:set, child.hex, r, "GET /cart"],
                  [:set, r, ZERO, "GET /cart"],
                  [:clear]], @hook.take
    refute child.attributes.key?(PROFILE_ID)
    refute grandchild.attributes.key?(PROFILE_ID)
  end

  def test_remote_parent_makes_a_local_root_even_if_this_process_started_it
    root = FakeSpan.new("client call")
    start(root)
    # The server side of a call this process made to itself: its parent is this process's
    # client span, received over the wire, so it is remote and the span is a local root.
    server = FakeSpan.new("handle call", trace_id: root.context.trace_id, parent: remote_parent_span)
    server.instance_variable_set(:@parent_span_id, root.context.span_id)
    @hook.take
    start(server)
    assert_equal [[:set, server.hex, ZERO, "handle call"]], @hook.take
    assert_equal server.hex, server.attributes[PROFILE_ID]
  end

  # The SDK hands processors recording spans only; Pyroscope's processor labels them whatever
  # their sampled flag, and so does this one.
  def test_recording_unsampled_spans_are_labelled_like_sampled_ones
    root = FakeSpan.new("r", sampled: false)
    start(root)
    child = root.child("c")
    start(child)
    @p.on_finish(child)
    @p.on_finish(root)
    r = root.hex
    assert_equal [[:set, r, ZERO, "r"], [:set, child.hex, r, "r"], [:set, r, ZERO, "r"], [:clear]], @hook.take
    assert_equal({ PROFILE_ID => r }, root.attributes)
  end

  def test_child_of_a_parent_never_seen_gets_nothing
    orphan = FakeSpan.new("before the agent").child("SELECT")
    start(orphan)
    @p.on_finish(orphan)
    assert_empty @hook.take
    assert_empty orphan.attributes
  end

  def test_root_span_only_false_gives_every_span_its_own_profile_id
    p = SpanProf::Otel::SpanProcessor.new(root_span_only: false, hook: @hook)
    root = FakeSpan.new("GET /cart")
    child = root.child("SELECT carts")
    start(root, p)
    start(child, p)
    p.on_finish(child)
    p.on_finish(root)
    assert_equal [[:set, root.hex, ZERO, "GET /cart"],
                  [:set, child.hex, ZERO, "SELECT carts"],
                  [:set, root.hex, ZERO, "GET /cart"],
                  [:clear]], @hook.take
    assert_equal child.hex, child.attributes[PROFILE_ID]
    assert_equal root.hex, root.attributes[PROFILE_ID]
  end

  def test_add_span_name_false_passes_no_name
    p = SpanProf::Otel::SpanProcessor.new(add_span_name: false, hook: @hook)
    root = FakeSpan.new("GET /users/12345")
    start(root, p)
    start(root.child("c"), p)
    assert_equal ["", ""], @hook.take.map { |c| c[3] }
  end

  def test_long_names_are_cut_to_255_bytes
    start(FakeSpan.new("/api/v1/#{"x" * 100}")) # ABI v1 cut this at 63 bytes
    assert_equal "/api/v1/#{"x" * 100}", @hook.take.first[3]
    start(FakeSpan.new("é" * 140)) # 280 bytes of UTF-8
    assert_equal "é" * 127, @hook.take.first[3]
  end

  def test_add_url_needs_a_pyroscope_url
    root = FakeSpan.new("GET /cart")
    start(root)
    refute root.attributes.key?(PROFILE_URL)

    p = SpanProf::Otel::SpanProcessor.new(pyroscope_url: "http://pyroscope:4040/", service_name: "shop", hook: @hook)
    root = FakeSpan.new("GET /cart")
    child = root.child("c")
    start(root, p)
    start(child, p)
    url = URI(root.attributes[PROFILE_URL])
    assert_equal "http://pyroscope:4040/", "#{url.scheme}://#{url.host}:#{url.port}#{url.path}"
    query = URI.decode_www_form(url.query).to_h
    assert_equal 'process_cpu:cpu:nanoseconds:cpu:nanoseconds{service_name="shop",span_name="GET /cart"}', query["query"]
    assert_in_delta Time.now.to_i - 60, query["from"].to_i, 5
    assert_operator query["until"].to_i, :>, Time.now.to_i
    refute child.attributes.key?(PROFILE_URL)

    p = SpanProf::Otel::SpanProcessor.new(add_url: false, pyroscope_url: "http://pyroscope:4040", hook: @hook)
    root = FakeSpan.new("r")
    start(root, p)
    refute root.attributes.key?(PROFILE_URL)
  end

  def test_no_agent_means_no_hook_calls_and_no_bookkeeping
    @hook.active = false
    root = FakeSpan.new("r")
    child = root.child("c")
    start(root)
    start(child)
    assert_empty @hook.take
    assert_empty root.attributes # no agent, no profile to link to
    # The agent attaches mid-request: spans started before stay invisible; the next is tracked.
    @hook.active = true
    @p.on_finish(child)
    @p.on_finish(root)
    assert_empty @hook.take
    later = FakeSpan.new("later")
    start(later)
    @p.on_finish(later)
    assert_equal [[:set, later.hex, ZERO, "later"], [:clear]], @hook.take
    assert_equal later.hex, later.attributes[PROFILE_ID]
  end

  def test_missing_library_makes_the_processor_a_no_op
    hook = FakeHook.new(loaded: false)
    p = SpanProf::Otel::SpanProcessor.new(hook: hook)
    root = FakeSpan.new("r")
    start(root, p)
    p.on_finish(root)
    assert_empty hook.take
    assert_empty root.attributes
  end

  def test_threads_have_separate_stacks
    root_a = FakeSpan.new("a")
    root_b = FakeSpan.new("b")
    start(root_a)
    other = Thread.new do
      start(root_b)
      @p.on_finish(root_b)
    end
    other.join
    per_thread = @hook.calls.map { |c| [c[0], c[1] == Thread.current, c[0] == :set ? c[2][:span_id] : nil] }
    assert_equal [[:set, true, root_a.hex], [:set, false, root_b.hex], [:clear, false, nil]], per_thread
    @hook.calls.clear
    @p.on_finish(root_a)
    assert_equal [[:clear]], @hook.take
  end

  def test_a_child_started_on_another_thread_carries_the_root
    root = FakeSpan.new("GET /report")
    start(root)
    @hook.take
    child = root.child("render")
    Thread.new { start(child); @p.on_finish(child) }.join
    assert_equal [[:set, child.hex, root.hex, "GET /report"], [:clear]], @hook.take
  end

  def test_span_finished_on_another_thread_is_dropped_by_its_owner
    root = FakeSpan.new("handed off")
    start(root)
    @hook.take
    Thread.new { @p.on_finish(root) }.join
    assert_empty @hook.take # the hook only speaks for its own thread
    nxt = FakeSpan.new("next")
    start(nxt)
    @p.on_finish(nxt)
    assert_equal [[:set, nxt.hex, ZERO, "next"], [:clear]], @hook.take
    assert_empty @p.send(:thread_stack)
  end

  def test_parent_finishing_before_its_child_keeps_the_child_active
    root = FakeSpan.new("r")
    child = root.child("c")
    start(root)
    start(child)
    @hook.take
    @p.on_finish(root)
    assert_empty @hook.take
    @p.on_finish(child)
    assert_equal [[:clear]], @hook.take
  end

  def test_spans_that_never_finish_do_not_grow_the_stack_forever
    (SpanProf::Otel::MAX_DEPTH * 3).times { |i| start(FakeSpan.new("leak #{i}")) }
    assert_equal SpanProf::Otel::MAX_DEPTH, @p.send(:thread_stack).size
    assert_equal SpanProf::Otel::MAX_DEPTH, @p.instance_variable_get(:@live).size
  end

  def test_errors_never_reach_the_application_and_are_logged_once
    broken = Object.new
    def broken.context
      raise "boom"
    end
    log = capture_spanprof_log do
      @p.on_start(broken, nil)
      @p.on_finish(broken)
      @p.on_start(broken, nil)
    end
    assert_equal 1, log.scan("failed").size, log
    assert_includes log, "on_start"
    assert_includes log, "boom"
    root = FakeSpan.new("still works")
    start(root)
    assert_equal [[:set, root.hex, ZERO, "still works"]], @hook.take
  end

  def test_shutdown_clears_this_thread_and_stops
    start(FakeSpan.new("r"))
    @hook.take
    assert_equal 0, @p.shutdown
    assert_equal [[:clear]], @hook.take
    start(FakeSpan.new("after"))
    assert_empty @hook.take
    assert_equal 0, @p.force_flush
    assert_equal 0, @p.force_flush(timeout: 1)
    assert_equal 0, @p.shutdown(timeout: 1)
  end

  def test_has_the_sdk_span_processor_methods
    %i[on_start on_finishing on_finish force_flush shutdown].each { |m| assert_respond_to @p, m }
    assert_equal 2, @p.method(:on_start).arity
    @p.on_finishing(FakeSpan.new("x"))
  end
end
