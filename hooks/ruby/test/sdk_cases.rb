# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The processor inside OpenTelemetry::SDK.configure as users run it: exporters from
# OTEL_TRACES_EXPORTER kept, the configured logger followed, renames, a child of a request already
# running when the agent attached, recording-but-unsampled spans, the attribute limit. Written
# against the SDK's names only, so the same cases run on the stand-in (test_sdk_behaviour.rb) and
# on the real SDK (real_sdk_run.rb, in a child process) when it is installed.
require "stringio"
require "spanprof/otel"
require "fake_hook"

module SdkCases
  ZERO = "0" * 16
  PROFILE_ID = SpanProf::Otel::PROFILE_ID_ATTRIBUTE

  def with_env(vars)
    old = vars.keys.to_h { |k| [k, ENV[k]] }
    vars.each { |k, v| ENV[k] = v }
    yield
  ensure
    old.each { |k, v| ENV[k] = v }
  end

  # Runs the block with $stdout captured; returns what was printed.
  def capture_stdout
    old = $stdout
    $stdout = StringIO.new
    yield
    $stdout.string
  ensure
    $stdout = old
  end

  # limit: the span attribute count limit. The SDK reads OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT once,
  # when it is required, so a test sets it on the provider, as an app changing it in code does.
  def setup_sdk(exporter: "none", limit: nil, &block)
    @hook = FakeHook.new
    with_env("OTEL_TRACES_EXPORTER" => exporter) do
      OpenTelemetry::SDK.configure(&block)
    end
    if limit
      OpenTelemetry.tracer_provider.span_limits =
        OpenTelemetry::SDK::Trace::SpanLimits.new(attribute_count_limit: limit)
    end
    @processor = SpanProf::Otel.install(hook: @hook)
    SpanProf::Fibers.uninstall # install also turned per-fiber spans on, with the fake hook
    @tracer = OpenTelemetry.tracer_provider.tracer("spanprof-test")
  end

  def child_of(parent, name)
    @tracer.start_span(name, with_parent: OpenTelemetry::Trace.context_with_span(parent))
  end

  def hex(span)
    span.context.span_id.unpack1("H*")
  end

  def test_documented_setup_keeps_exporters_from_the_environment
    out = capture_stdout do
      setup_sdk(exporter: "console") { |c| c.service_name = "checkout" }
      3.times { @tracer.start_span("exported-span").finish }
    end
    assert_equal 3, out.scan("exported-span").size, "the console exporter printed:\n#{out}"
    assert_equal 6, @hook.take.size # and spanprof saw each span start and finish
  end

  def test_adding_the_processor_inside_configure_loses_them_which_is_why_install_exists
    out = capture_stdout do
      with_env("OTEL_TRACES_EXPORTER" => "console") do
        OpenTelemetry::SDK.configure { |c| c.add_span_processor(SpanProf::Otel::SpanProcessor.new(hook: FakeHook.new)) }
      end
      OpenTelemetry.tracer_provider.tracer("t").start_span("lost-span").finish
    end
    assert_equal 0, out.scan("lost-span").size
  end

  def test_logger_follows_the_one_configure_sets
    io = StringIO.new
    setup_sdk { |c| c.logger = Logger.new(io) }
    SpanProf.logger.warn("spanprof-logger-probe")
    assert_includes io.string, "spanprof-logger-probe"
  end

  def test_rename_of_the_root_reaches_the_next_hook_call
    setup_sdk
    root = @tracer.start_span("HTTP GET")
    root.name = "GET /cart/{id}"
    child = child_of(root, "SELECT carts")
    child.finish
    root.finish
    r = hex(root)
    assert_equal [[:set, r, ZERO, "HTTP GET"], # nothing tells a processor about the rename...
                  [:set, hex(child), r, "GET /cart/{id}"], # ...the next call carries it
                  [:set, r, ZERO, "GET /cart/{id}"], [:clear]], @hook.take
  end

  def test_child_of_a_request_running_before_the_agent_attached_gets_nothing
    setup_sdk
    @hook.active = false
    root = @tracer.start_span("GET /slow")
    @hook.active = true
    child = child_of(root, "SELECT")
    child.finish
    root.finish
    assert_empty @hook.take
    refute child.attributes&.key?(PROFILE_ID)
    later = @tracer.start_span("GET /next")
    assert_equal hex(later), later.attributes[PROFILE_ID]
    later.finish
  end

  def test_the_resource_set_in_code_is_published_at_install
    setup_sdk { |c| c.service_name = "checkout" }
    assert_equal ["checkout"], @hook.published.map { |a| a["service.name"] }
    @tracer.start_span("GET /cart").finish
    assert_equal 1, @hook.published.size
  end

  def test_a_processor_added_by_hand_publishes_from_the_first_span
    with_env("OTEL_TRACES_EXPORTER" => "none") do
      OpenTelemetry::SDK.configure { |c| c.service_name = "billing" }
    end
    hook = FakeHook.new(active: false) # published whether or not an agent is attached yet
    OpenTelemetry.tracer_provider.add_span_processor(SpanProf::Otel::SpanProcessor.new(hook: hook))
    2.times { OpenTelemetry.tracer_provider.tracer("t").start_span("x").finish }
    assert_equal ["billing"], hook.published.map { |a| a["service.name"] }
  end

  def test_at_the_attribute_limit_the_drop_is_logged_once_and_samples_stay_labelled
    setup_sdk(limit: 2)
    io = StringIO.new
    SpanProf.logger = Logger.new(io)
    2.times do
      full = @tracer.start_span("full", attributes: { "a" => 1, "b" => 2 })
      assert_equal({ "a" => 1, "b" => 2 }, full.attributes) # user attributes are never displaced
      full.finish
    end
    assert_equal 1, io.string.scan("attribute limit").size
    room = @tracer.start_span("room", attributes: { "a" => 1 })
    assert_equal hex(room), room.attributes[PROFILE_ID]
    room.finish
    assert_equal [:set, "full"], @hook.take.first.values_at(0, 3)
  ensure
    SpanProf.logger = nil
  end
end
