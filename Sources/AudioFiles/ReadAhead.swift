import Dispatch
import Synchronization

/// Reads an audio file ahead of its analysis: a reader thread fills a few
/// blocks (reading, and whatever preparation the caller gives it) while the
/// calling thread empties them, in order; semaphores order every
/// hand-over, so each block belongs to one thread at a time. The one
/// skeleton of the file meter, the file tone decoder and plot analysis.
///
/// Threads: `run` is called on the calling thread, which runs `consume`
/// and `shouldStop`; `fill` runs on the reader thread only, and owns the
/// reader until `run` returns.
package enum ReadAhead {
  /// How the last block ended the stream.
  package enum Ending: Sendable {
    /// The stream ended, or a stop was asked for.
    case finished
    /// Reading failed.
    case failed(AudioFileError)
  }

  /// What a read-ahead run found besides the blocks.
  package struct Outcome {
    /// Whether `shouldStop` ended it early.
    package var wasStopped: Bool
    /// A problem found after reading everything present (a truncated file).
    package var problem: AudioFileError?
  }

  /// Fills `blocks` in turn on a reader thread with `fill` (given the
  /// block, whether a stop was asked for, and the ring) until it returns
  /// an ending, and hands each filled block, with its ending (the last
  /// one's), to `consume` on the calling thread. `shouldStop` is asked
  /// before each block. Throws a failed read, and an empty stream.
  package static func run<Block: AnyObject>(
    _ reader: AudioFileReader, blocks: [Block], spinsBeforeSleeping: Int = 0,
    shouldStop: () -> Bool,
    fill: @escaping (Block, _ stopRequested: Bool, BlockRing<Block>) -> Ending?,
    consume: (Block, Ending?) -> Void
  ) throws(AudioFileError) -> Outcome {
    let ring = BlockRing(blocks, spinsBeforeSleeping: spinsBeforeSleeping)
    let stopRequested = Atomic<Bool>(false)
    let producer = UncheckedProducer {
      while true {
        let block = ring.nextFree()
        let ending = fill(block, stopRequested.load(ordering: .relaxed), ring)
        ring.publish(ending: ending)
        if ending != nil { return }
      }
    }
    guard let thread = BackgroundThread({ producer.body() }) else {
      throw .readFailed(path: reader.displayPath, reason: "no thread to read with")
    }
    var stopped = false
    var ending: Ending?
    repeat {
      if !stopped && shouldStop() {
        stopped = true
        stopRequested.store(true, ordering: .relaxed)
      }
      let (block, blockEnding) = ring.nextFilled()
      ending = blockEnding
      consume(block, ending)
      ring.release()
    } while ending == nil
    thread.join()
    if case .failed(let error) = ending { throw error }
    if reader.framesRead == 0 {
      throw reader.wasStopped
        ? .stoppedBeforeAudio(path: reader.displayPath) : .empty(path: reader.displayPath)
    }
    var problem: AudioFileError?
    if !stopped {
      do { try reader.checkComplete() } catch { problem = error }
    }
    return Outcome(wasStopped: stopped, problem: problem)
  }

  /// The reader thread's loop, handed across threads once.
  private final class UncheckedProducer: @unchecked Sendable {
    let body: () -> Void
    init(_ body: @escaping () -> Void) { self.body = body }
  }
}

/// A few blocks passed round between a producer thread, which fills them,
/// and a consumer thread, which empties them, in a fixed order; one
/// semaphore counts the free blocks and one the filled. The consumer may
/// spin a while before sleeping on a filled block (worth it when a block
/// takes less time to fill than waking a thread costs); the producer,
/// waiting for room, is ahead and sleeps at once: spinning there only
/// takes the processor from the consumer it waits for.
package final class BlockRing<Block: AnyObject>: @unchecked Sendable {
  private let blocks: [Block]
  private var endings: [ReadAhead.Ending?]
  private let free: DispatchSemaphore
  private let filled = DispatchSemaphore(value: 0)
  /// Blocks filled and not yet taken by the consumer.
  private let ready = Atomic<Int>(0)
  private let spins: Int
  // Each touched by one side only.
  private var nextToFill = 0
  private var nextToEmpty = 0

  package init(_ blocks: [Block], spinsBeforeSleeping: Int = 0) {
    precondition(!blocks.isEmpty, "a ring needs a block")
    self.blocks = blocks
    endings = Array(repeating: nil, count: blocks.count)
    free = DispatchSemaphore(value: blocks.count)
    spins = spinsBeforeSleeping
  }

  /// Producer: whether the consumer has no filled block waiting (it is
  /// about to wait for the one being filled).
  package var consumerIsWaiting: Bool { ready.load(ordering: .relaxed) == 0 }

  /// Producer: the next block to fill, waiting until the consumer frees it.
  package func nextFree() -> Block {
    free.wait()
    return blocks[nextToFill]
  }

  /// Producer: hands the block from `nextFree` to the consumer, with the
  /// stream's ending if it is the last.
  package func publish(ending: ReadAhead.Ending?) {
    endings[nextToFill] = ending
    nextToFill = (nextToFill + 1) % blocks.count
    ready.add(1, ordering: .relaxed)
    filled.signal()
  }

  /// Consumer: the next filled block and its ending, waiting for the producer.
  package func nextFilled() -> (Block, ReadAhead.Ending?) {
    wait(filled)
    ready.subtract(1, ordering: .relaxed)
    return (blocks[nextToEmpty], endings[nextToEmpty])
  }

  /// Consumer: hands the block from `nextFilled` back to the producer.
  package func release() {
    nextToEmpty = (nextToEmpty + 1) % blocks.count
    free.signal()
  }

  /// Takes `semaphore`, spinning first when asked to (the consumer's wait).
  private func wait(_ semaphore: DispatchSemaphore) {
    for _ in 0..<spins where semaphore.wait(timeout: .now()) == .success { return }
    semaphore.wait()
  }
}
