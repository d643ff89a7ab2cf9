# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The gem's version.
module SpanProf
  VERSION = "0.1.0"
end
