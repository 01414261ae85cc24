import AudioFiles

#if canImport(Glibc)
  import Glibc
#endif

/// One input: the bytes as a file on disk, opened and read to the end as
/// `meter` and `tones` read it. Errors are answers; a crash or hang is a bug.
/// The file each input is written to (one per process, rewritten each time).
nonisolated(unsafe) private var scratch: (descriptor: Int32, path: String)? = {
  var template = Array("/tmp/micloop-fuzz-XXXXXX".utf8CString)
  let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
  guard descriptor >= 0 else { return nil }
  let path = String(cString: template)
  unlink(path)
  return (descriptor, "/proc/self/fd/\(descriptor)")
}()

func fuzzAudioFile(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  guard let scratch, ftruncate(scratch.descriptor, 0) == 0 else { return 0 }
  var offset = 0
  while offset < size {
    let wrote = pwrite(scratch.descriptor, data + offset, size - offset, off_t(offset))
    if wrote <= 0 { return 0 }
    offset += wrote
  }
  let path = scratch.path
  guard let reader = try? AudioFileReader(path: path) else { return 0 }
  let frames = 1024
  let buffer = UnsafeMutablePointer<Float>.allocate(capacity: frames * reader.channelCount)
  defer { buffer.deallocate() }
  var total = 0
  // Headers may promise billions of frames; a few seconds' worth tells enough.
  while total < 1_000_000, let got = try? reader.read(into: buffer, frameCount: frames), got > 0 {
    total += got
  }
  _ = try? reader.checkComplete()
  return 0
}
