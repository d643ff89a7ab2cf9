# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
require_relative "lib/spanprof/version"

Gem::Specification.new do |s|
  s.name = "spanprof-otel"
  s.version = SpanProf::VERSION
  s.summary = "Tell the spanprof eBPF profiler which OpenTelemetry span is active"
  s.description = "A Fiddle binding to spanprof's span hook (libspanprof.so) and an OpenTelemetry " \
                  "SDK span processor that follows Pyroscope's span-profile conventions."
  s.authors = ["spanprof developers"]
  s.license = "LGPL-2.1-only OR BSD-2-Clause"
  s.files = Dir[File.join(__dir__, "lib/**/*.rb")].map { |f| f.delete_prefix("#{__dir__}/") } + ["README.md"]
  # A packaged build may place libspanprof.so in lib/spanprof/; it is found there after $SPANPROF_LIBRARY.
  s.files += ["lib/spanprof/libspanprof.so"] if File.exist?(File.join(__dir__, "lib/spanprof/libspanprof.so"))
  s.require_paths = ["lib"]
  s.required_ruby_version = ">= 2.7"
  s.platform = Gem::Platform::RUBY
  # Fiddle is a default gem up to Ruby 3.4 and a bundled gem after; no other dependency. The
  # opentelemetry-sdk gem is the application's own: the processor only duck-types its interface.
  s.add_dependency "fiddle", ">= 1.0"
end
