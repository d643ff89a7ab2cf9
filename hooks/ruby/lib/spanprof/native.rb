# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Finds and loads libspanprof.so with Fiddle and wraps the hook; when the library is missing,
# logs once and hands out a hook whose calls do nothing.
require "fiddle"
require "spanprof/semaphore"

module SpanProf
  module Native
    ABI_VERSION = 2 # SPANPROF_SPAN_ABI_VERSION
    # struct spanprof_span: abi_version, reserved, trace_id[16], span_id[8], root_span_id[8], name[256]
    SPAN_FORMAT = "L<L<a16a8a8a256"
    SPAN_SIZE = 296

    module_function

    # The 296 bytes of a struct spanprof_span; ids are big-endian binary Strings, name < 256 bytes.
    def pack_span(trace_id, span_id, root_span_id, name)
      [ABI_VERSION, 0, trace_id, span_id, root_span_id, name].pack(SPAN_FORMAT).freeze
    end

    # Where to look for the library, in order: $SPANPROF_LIBRARY, a copy inside the gem
    # (lib/spanprof/libspanprof.so), then the dynamic loader's own search by soname.
    def candidates(env = ENV, gem_dir = __dir__)
      paths = []
      paths << env["SPANPROF_LIBRARY"] if env["SPANPROF_LIBRARY"] && !env["SPANPROF_LIBRARY"].empty?
      paths << File.join(gem_dir, "libspanprof.so")
      paths << "libspanprof.so"
    end

    # The loaded library, or nothing (path nil) when no candidate could be loaded. set(raw)
    # passes packed bytes to spanprof_span_set(), clear passes NULL, active? tells whether an
    # agent has the hook attached. None of them raise.
    class Hook
      attr_reader :path, :error

      def initialize(paths)
        errors = []
        paths.each do |path|
          if path.include?("/") && !File.exist?(path)
            errors << "#{path}: no such file"
            next
          end
          begin
            load_from(path)
            return
          rescue Fiddle::DLError, StandardError => e
            errors << "#{path}: #{e.message}"
          end
        end
        @error = errors.join("; ")
      end

      def loaded?
        !@set.nil?
      end

      def active?
        if @semaphore
          @semaphore[0] != 0 || @semaphore[1] != 0
        elsif @active
          @active.call != 0
        else
          false
        end
      end

      def set(raw)
        @set&.call(raw)
      end

      def clear
        @set&.call(nil)
      end

      # Publishes { key => String } as OpenTelemetry process context (OTEP 4719), where the agent
      # reads the service name. Returns 0 or a negative errno (-ENOSYS without the library).
      def publish_context(attributes)
        return -38 unless @publish

        pairs = attributes.map { |k, v| [k.to_s.b, v.to_s.b] }
        strings = pairs.flatten.map { |str| Fiddle::Pointer[str] } # kept alive during the call
        width = Fiddle::SIZEOF_VOIDP
        keys = Fiddle::Pointer.malloc([pairs.size, 1].max * width, Fiddle::RUBY_FREE)
        values = Fiddle::Pointer.malloc([pairs.size, 1].max * width, Fiddle::RUBY_FREE)
        pairs.each_index do |i|
          keys[i * width, width] = [strings[2 * i].to_i].pack("J")
          values[i * width, width] = [strings[2 * i + 1].to_i].pack("J")
        end
        @publish.call(keys, values, pairs.size)
      end

      # How active? is answered: :semaphore (a memory read), :function or :none.
      def active_check
        return :semaphore if @semaphore
        return :function if @active

        :none
      end

      private

      def load_from(path)
        handle = Fiddle.dlopen(path)
        set = function(handle["spanprof_span_set"], [Fiddle::TYPE_VOIDP], Fiddle::TYPE_VOID)
        active = function(handle["spanprof_active"], [], Fiddle::TYPE_INT)
        resolved = File.exist?(path) ? path : loaded_path(path)
        @semaphore = resolved && Semaphore.locate(resolved, handle)
        @path, @handle, @set, @active = path, handle, set, active
        @publish = publish_function(handle)
      end

      # spanprof_process_context_publish, absent from libraries built before it.
      def publish_function(handle)
        Fiddle::Function.new(handle["spanprof_process_context_publish"],
                             [Fiddle::TYPE_VOIDP, Fiddle::TYPE_VOIDP, Fiddle::TYPE_SIZE_T], Fiddle::TYPE_INT)
      rescue Fiddle::DLError
        nil
      end

      # need_gvl: the hook is a few instructions (or one uprobe hit); releasing the GVL around
      # it would cost more than the call. Fiddle before 1.0.1 (Ruby 2.7) lacks the option.
      def function(address, args, ret)
        Fiddle::Function.new(address, args, ret, need_gvl: true)
      rescue ArgumentError
        Fiddle::Function.new(address, args, ret)
      end

      # The file the loader picked for a bare soname, from /proc/self/maps.
      def loaded_path(soname)
        File.foreach("/proc/self/maps") do |line|
          file = line.split(" ", 6)[5]&.strip
          return file if file && File.basename(file) == soname
        end
        nil
      rescue SystemCallError
        nil
      end
    end

    def load(paths = candidates, logger: SpanProf.logger)
      hook = Hook.new(paths)
      unless hook.loaded?
        logger.warn("spanprof: libspanprof.so not found, span profiling is off (#{hook.error}); " \
                    "set SPANPROF_LIBRARY to its path")
      end
      hook
    end
  end
end
