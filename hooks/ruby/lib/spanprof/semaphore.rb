# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Finds the hook's USDT semaphore in a loaded libspanprof.so through the library's standard
# .note.stapsdt note, so "is an agent attached?" is a 2-byte memory read instead of a Fiddle
# call to spanprof_active() (which costs about 0.7 us of Fiddle overhead per call).
require "fiddle"

module SpanProf
  module Semaphore
    SHT_DYNSYM = 11
    NT_STAPSDT = 3

    module_function

    # A Fiddle::Pointer to the 2-byte semaphore of probe spanprof:span_set in the library at
    # path, loaded as handle; nil when the file is not a 64-bit little-endian ELF with that
    # note and a dynamic spanprof_span_set symbol (callers then use spanprof_active()).
    def locate(path, handle)
      elf = File.binread(path)
      return nil unless elf.byteslice(0, 6) == "\x7fELF\x02\x01".b

      sections = section_headers(elf)
      sem_vaddr = note_semaphore(elf, sections)
      sym_vaddr = dynsym_value(elf, sections, "spanprof_span_set")
      return nil unless sem_vaddr&.positive? && sym_vaddr&.positive?

      # Load bias = where the symbol is now minus where the file says it is.
      Fiddle::Pointer.new(handle["spanprof_span_set"] - sym_vaddr + sem_vaddr, 2)
    rescue StandardError
      nil
    end

    def section_headers(elf)
      shoff, = elf.byteslice(0x28, 8).unpack("Q<")
      shentsize, shnum, shstrndx = elf.byteslice(0x3a, 6).unpack("S<S<S<")
      headers = Array.new(shnum) do |i|
        name, type, _flags, _addr, off, size, link = elf.byteslice(shoff + i * shentsize, 44).unpack("L<L<Q<Q<Q<Q<L<")
        { name: name, type: type, off: off, size: size, link: link }
      end
      strtab = headers[shstrndx]
      headers.each { |h| h[:name] = cstr(elf, strtab[:off] + h[:name]) }
    end

    # The semaphore address of the spanprof:span_set note: namesz, descsz, type, "stapsdt\0",
    # then pc, base, semaphore (8 bytes each) and three C strings: provider, name, arguments.
    def note_semaphore(elf, sections)
      note = sections.find { |s| s[:name] == ".note.stapsdt" } or return nil
      pos, stop = note[:off], note[:off] + note[:size]
      while pos + 12 <= stop
        namesz, descsz, type = elf.byteslice(pos, 12).unpack("L<L<L<")
        desc = pos + 12 + align4(namesz)
        if type == NT_STAPSDT && elf.byteslice(pos + 12, namesz) == "stapsdt\0".b
          _pc, _base, sem = elf.byteslice(desc, 24).unpack("Q<Q<Q<")
          provider = cstr(elf, desc + 24)
          probe = cstr(elf, desc + 24 + provider.bytesize + 1)
          return sem if provider == "spanprof" && probe == "span_set"
        end
        pos = desc + align4(descsz)
      end
      nil
    end

    def dynsym_value(elf, sections, wanted)
      dynsym = sections.find { |s| s[:type] == SHT_DYNSYM } or return nil
      strtab = sections[dynsym[:link]]
      (dynsym[:size] / 24).times do |i|
        st_name, _info, _other, _shndx, value = elf.byteslice(dynsym[:off] + i * 24, 16).unpack("L<CCS<Q<")
        return value if cstr(elf, strtab[:off] + st_name) == wanted
      end
      nil
    end

    def cstr(elf, off)
      elf.byteslice(off, elf.index("\0".b, off) - off)
    end

    def align4(n)
      (n + 3) & ~3
    end
  end
end
