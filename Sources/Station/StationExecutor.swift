import Dispatch

/// Runs the station's tasks on a serial dispatch queue of its own, so the
/// server keeps answering even while every thread of Swift's shared
/// cooperative pool is busy or blocked elsewhere in the process. Any thread
/// may enqueue; jobs run one at a time on the queue's thread.
final class StationExecutor: TaskExecutor, @unchecked Sendable {
  private let queue = DispatchQueue(label: "micloop.station")

  func enqueue(_ job: consuming ExecutorJob) {
    let job = UnownedJob(job)
    let executor = asUnownedTaskExecutor()
    queue.async { job.runSynchronously(on: executor) }
  }
}
