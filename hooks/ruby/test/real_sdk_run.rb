# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# test/sdk_cases.rb on the real opentelemetry-sdk; started by test_sdk_behaviour.rb.
require "minitest/autorun"
require "opentelemetry/sdk"
require "sdk_cases"

class RealSDKCases < Minitest::Test
  include SdkCases
end
