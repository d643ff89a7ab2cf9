# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# A fiber scheduler that knows sleeping only: enough for fibers that take turns.
class MiniScheduler
  def initialize
    @ready = []
  end

  def fiber(&block)
    f = Fiber.new(blocking: false, &block)
    f.resume
    f
  end

  def kernel_sleep(_duration = nil)
    @ready << Fiber.current
    Fiber.yield
  end

  def block(_blocker, _timeout = nil)
    kernel_sleep
  end

  def unblock(_blocker, fiber)
    @ready << fiber
  end

  def io_wait(_io, events, _timeout)
    kernel_sleep
    events
  end

  def close
    @ready.shift.resume until @ready.empty?
  end
end
