# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Entry point named after the gem: require "spanprof-otel" loads the hook and the processor.
require "spanprof"
require "spanprof/otel"
