import MicLoopCLI

/// One input: a command line, one argument per line, checked as `micloop`
/// checks it before running (every option's parsing and validation).

func fuzzCommandLine(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
  let arguments = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
  _ = commandLineProblem(arguments)
  return 0
}
