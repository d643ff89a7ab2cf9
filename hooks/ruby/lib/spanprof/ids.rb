# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Trace and span ids in the spellings callers have (OpenTelemetry's binary Strings, hex text,
# Integers) -> the big-endian bytes of struct spanprof_span, and the span name's bounded form.
module SpanProf
  module Ids
    NAME_MAX = 256 # SPANPROF_SPAN_NAME_MAX: 255 bytes of name and a NUL
    HEX = /\A\h+\z/.freeze

    module_function

    # Returns value as `size` big-endian bytes (a binary String). value is a binary String of
    # exactly `size` bytes (as OpenTelemetry's Ruby SDK keeps ids), a hex String of exactly
    # 2 * size digits (either case), or a non-negative Integer. nil, 0 and "" mean "no id" and
    # are accepted only with allow_zero (they give all-zero bytes). Raises ArgumentError or
    # TypeError otherwise, naming `what`.
    def id_bytes(value, size, what, allow_zero: false)
      if value.nil? || value == 0 || value == ""
        return ("\0" * size).b if allow_zero

        raise ArgumentError, "#{what} is empty or zero"
      end
      raw =
        case value
        when Integer
          raise ArgumentError, "#{what} does not fit in #{size} bytes: #{value}" if value.negative? || value >> (8 * size) != 0

          [value >> 64, value & 0xffff_ffff_ffff_ffff].pack("Q>Q>").byteslice(16 - size, size)
        when String
          if value.bytesize == size
            value.b
          elsif value.bytesize == 2 * size && HEX.match?(value)
            [value].pack("H*")
          else
            raise ArgumentError, "#{what}: expected #{size} bytes or #{2 * size} hex digits, got #{value.inspect}"
          end
        else
          raise TypeError, "#{what}: expected a String or Integer, got #{value.class}"
        end
      raise ArgumentError, "#{what} is all zero" if !allow_zero && raw.count("\0") == size

      raw
    end

    # The span name as UTF-8 bytes, cut to 255 bytes without splitting a character.
    def name_bytes(name)
      return "".b if name.nil?

      s = name.to_s
      s = s.encode(Encoding::UTF_8, invalid: :replace, undef: :replace) unless s.encoding == Encoding::UTF_8 || s.encoding == Encoding::BINARY
      return s.b if s.bytesize < NAME_MAX

      # scrub drops the partial character the cut may leave at the end.
      s.byteslice(0, NAME_MAX - 1).force_encoding(Encoding::UTF_8).scrub("").b
    end
  end
end
