# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Runs test/sdk_cases.rb against the stand-in SDK here, and against the real opentelemetry-sdk in
# a child process when it is installed (the stand-in and the real SDK cannot share a process).
require_relative "test_helper"
require "rbconfig"
require "sdk_standin"
require "sdk_cases"

class StandInSDKTest < Minitest::Test
  include SdkCases
end

class RealSDKTest < Minitest::Test
  def test_the_same_cases_pass_on_the_real_sdk
    ruby = RbConfig.ruby
    unless system(ruby, "-e", 'require "opentelemetry/sdk"', out: File::NULL, err: File::NULL)
      skip "opentelemetry-sdk is not installed: the cases ran on the stand-in only"
    end
    dir = File.expand_path("..", __dir__)
    out = IO.popen([ruby, "-I#{dir}/lib", "-I#{dir}/test", "#{dir}/test/real_sdk_run.rb"], err: %i[child out], &:read)
    assert $?.success?, "the cases failed on the real SDK:\n#{out}"
  end
end
