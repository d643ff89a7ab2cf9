# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The Fiddle binding: id spellings, the library search order, a missing library, the semaphore
# found through the ELF note, and SpanProf.set_span/clear_span over a recording hook.
require_relative "test_helper"
require "tmpdir"

TRACE_HEX = "4bf92f3577b34da6a3ce929d0e0e4736"
SPAN_HEX = "00f067aa0ba902b7"

class IdsTest < Minitest::Test
  def test_binary_hex_and_integer_spell_the_same_id
    want = [TRACE_HEX].pack("H*")
    assert_equal want, SpanProf::Ids.id_bytes(want, 16, "t")
    assert_equal want, SpanProf::Ids.id_bytes(TRACE_HEX, 16, "t")
    assert_equal want, SpanProf::Ids.id_bytes(TRACE_HEX.upcase, 16, "t")
    assert_equal want, SpanProf::Ids.id_bytes(TRACE_HEX.to_i(16), 16, "t")
    assert_equal [SPAN_HEX].pack("H*"), SpanProf::Ids.id_bytes(0xf067aa0ba902b7, 8, "s")
    assert_equal Encoding::BINARY, SpanProf::Ids.id_bytes(SPAN_HEX, 8, "s").encoding
  end

  def test_malformed_ids_raise
    [["00f067aa0ba902b", ArgumentError], ["00f067aa0ba902b7a", ArgumentError],
     ["00f067aa0ba902bg", ArgumentError], ["0x00f067aa0ba902", ArgumentError],
     ["\x01" * 7, ArgumentError], [-1, ArgumentError], [1 << 64, ArgumentError],
     [1.5, TypeError], [:sym, TypeError], [0, ArgumentError], ["0" * 16, ArgumentError],
     [nil, ArgumentError]].each do |value, err|
      assert_raises(err, value.inspect) { SpanProf::Ids.id_bytes(value, 8, "span_id") }
    end
  end

  def test_zero_root_means_own_root
    [nil, 0, ""].each { |v| assert_equal ("\0" * 8).b, SpanProf::Ids.id_bytes(v, 8, "root", allow_zero: true) }
  end

  def test_name_is_cut_on_a_character_boundary
    assert_equal "GET /a".b, SpanProf::Ids.name_bytes("GET /a")
    assert_equal "".b, SpanProf::Ids.name_bytes(nil)
    assert_equal ("a" * 254).b, SpanProf::Ids.name_bytes("#{"a" * 254}€tail")
    assert_equal "#{"b" * 253}é".b, SpanProf::Ids.name_bytes("#{"b" * 253}étail")
    assert_equal 255, SpanProf::Ids.name_bytes("c" * 300).bytesize
    assert_equal 100, SpanProf::Ids.name_bytes("d" * 100).bytesize # ABI v1 cut this at 63
  end
end

class LibrarySearchTest < Minitest::Test
  def test_search_order_is_env_then_gem_then_system
    paths = SpanProf::Native.candidates({ "SPANPROF_LIBRARY" => "/opt/x/libspanprof.so" }, "/gem/lib/spanprof")
    assert_equal ["/opt/x/libspanprof.so", "/gem/lib/spanprof/libspanprof.so", "libspanprof.so"], paths
    assert_equal "/gem/lib/spanprof/libspanprof.so", SpanProf::Native.candidates({}, "/gem/lib/spanprof").first
  end

  def test_missing_library_logs_once_and_no_ops
    Dir.mktmpdir do |d|
      not_a_lib = File.join(d, "libspanprof.so")
      File.write(not_a_lib, "not an ELF file")
      hook = nil
      log = capture_spanprof_log { hook = SpanProf::Native.load([File.join(d, "missing.so"), not_a_lib]) }
      assert_equal 1, log.lines.size, log
      assert_includes log, "not found"
      refute hook.loaded?
      assert_nil hook.path
      refute hook.active?
      assert_equal :none, hook.active_check
      hook.set("\0" * 296)
      hook.clear
    end
  end

  def test_set_span_without_library_returns_false
    saved = SpanProf.hook
    SpanProf.hook = SpanProf::Native::Hook.new([])
    refute SpanProf.available?
    refute SpanProf.set_span(trace_id: TRACE_HEX, span_id: SPAN_HEX)
    refute SpanProf.clear_span
    assert_nil SpanProf.library_path
  ensure
    SpanProf.hook = saved
  end
end

class SetSpanTest < Minitest::Test
  def setup
    @saved = SpanProf.hook
    @hook = FakeHook.new
    SpanProf.hook = @hook
    SpanProf.instance_variable_set(:@bad_input_logged, false)
  end

  def teardown
    SpanProf.hook = @saved
  end

  def test_set_span_passes_the_struct
    assert SpanProf.set_span(trace_id: TRACE_HEX, span_id: SPAN_HEX.to_i(16), root_span_id: "\xa1".b * 8, name: "GET /a")
    assert SpanProf.clear_span
    (kind, _, fields), clear = @hook.calls
    assert_equal :set, kind
    assert_equal({ abi: 2, reserved: 0, trace_id: TRACE_HEX, span_id: SPAN_HEX, root_span_id: "a1" * 8, name: "GET /a" }, fields)
    assert_equal :clear, clear[0]
  end

  def test_no_agent_means_nothing_is_built_or_passed
    @hook.active = false
    refute SpanProf.set_span(trace_id: "not even checked", span_id: 0)
    refute SpanProf.clear_span
    assert_empty @hook.calls
  end

  def test_malformed_ids_are_logged_once_and_never_raise
    log = capture_spanprof_log do
      refute SpanProf.set_span(trace_id: "nothex", span_id: SPAN_HEX)
      refute SpanProf.set_span(trace_id: TRACE_HEX, span_id: 0)
      refute SpanProf.set_span(trace_id: TRACE_HEX, span_id: SPAN_HEX, root_span_id: 3.5)
    end
    assert_equal 1, log.lines.size, log
    assert_includes log, "trace_id"
    assert_empty @hook.calls
  end
end

# The library this run built (SPANPROF_LIBRARY, set by `make hook-tests`).
class RealLibraryTest < Minitest::Test
  def setup
    @path = ENV["SPANPROF_LIBRARY"]
    skip "SPANPROF_LIBRARY does not name a built libspanprof.so (run `make`)" unless @path && File.exist?(@path)
  end

  def test_gem_loaded_the_library_named_by_the_environment
    assert SpanProf.available?
    assert_equal @path, SpanProf.library_path
  end

  def test_semaphore_is_found_through_the_note_and_agrees_with_spanprof_active
    hook = SpanProf::Native::Hook.new([@path])
    assert hook.loaded?
    assert_equal :semaphore, hook.active_check
    function = hook.instance_variable_get(:@active)
    # Another agent on the machine may attach in between: agreement once is enough.
    assert(3.times.any? { hook.active? == (function.call != 0) })
    hook.set(SpanProf::Native.pack_span([TRACE_HEX].pack("H*"), [SPAN_HEX].pack("H*"), ("\0" * 8).b, "x"))
    hook.clear
  end

  def test_semaphore_lookup_declines_files_without_the_note
    handle = Fiddle.dlopen(@path)
    assert_nil SpanProf::Semaphore.locate(__FILE__, handle)
    assert_nil SpanProf::Semaphore.locate("/nonexistent", handle)
  end

  def test_resource_is_published_as_process_context
    hook = SpanProf::Native::Hook.new([@path])
    assert_equal 0, hook.publish_context("service.name" => "rb-in-code", "service.namespace" => "shop")
    lines = File.foreach("/proc/self/maps").select { |l| l.include?("OTEL_CTX") }
    assert_equal 1, lines.size, "one OTEL_CTX mapping (OTEP 4719: a singleton)"
    header = Fiddle::Pointer.new(lines.first.split("-").first.to_i(16))[0, 32]
    assert_equal "OTEL_CTX", header[0, 8]
    size, ptr = header[12, 4].unpack1("L<"), header[24, 8].unpack1("Q<")
    assert_includes Fiddle::Pointer.new(ptr)[0, size], "\x0a\x0cservice.name\x12\x0c\x0a\x0arb-in-code".b
  end
end
