#if canImport(Glibc)
  import Glibc
#endif

/// Cairo writes the words of an SVG as glyph outlines, which no search,
/// screen reader or script can read. This adds the same words as invisible
/// `<text>` at the same places, as a searchable text layer does in a
/// scanned PDF. Calling thread.
enum SVGTextLayer {
  struct Label {
    var x: Double
    var y: Double
    var text: String
  }

  /// Inserts `labels` before the closing tag of the SVG at `path`.
  static func add(_ labels: [Label], to path: String) throws(PlotError) {
    guard !labels.isEmpty else { return }
    let closing = Array("</svg>".utf8)
    guard var document = read(path),
      let end = (0...(max(0, document.count - closing.count))).reversed().first(where: {
        document.count >= closing.count && Array(document[$0..<$0 + closing.count]) == closing
      })
    else { throw PlotError(description: "cannot add the text layer to \(path)") }
    var layer = "<g fill-opacity=\"0\" font-family=\"DejaVu Sans\" font-size=\"12\">\n"
    for label in labels {
      layer +=
        "<text x=\"\(format(label.x))\" y=\"\(format(label.y))\">\(escaped(label.text))</text>\n"
    }
    layer += "</g>\n"
    document.insert(contentsOf: Array(layer.utf8), at: end)
    guard write(document, to: path) else {
      throw PlotError(description: "cannot write \(path): \(String(cString: strerror(errno)))")
    }
  }

  static func escaped(_ text: String) -> String {
    var result = ""
    for character in text {
      switch character {
      case "&": result += "&amp;"
      case "<": result += "&lt;"
      case ">": result += "&gt;"
      case "\"": result += "&quot;"
      default: result.append(character)
      }
    }
    return result
  }

  private static func format(_ value: Double) -> String {
    String((value * 10).rounded() / 10)
  }

  private static func read(_ path: String) -> [UInt8]? {
    guard let file = fopen(path, "rb") else { return nil }
    defer { fclose(file) }
    var bytes = [UInt8]()
    var chunk = [UInt8](repeating: 0, count: 65_536)
    while true {
      let count = fread(&chunk, 1, chunk.count, file)
      if count == 0 { break }
      bytes += chunk[0..<count]
    }
    return bytes
  }

  private static func write(_ bytes: [UInt8], to path: String) -> Bool {
    guard let file = fopen(path, "wb") else { return false }
    let written = fwrite(bytes, 1, bytes.count, file)
    return fclose(file) == 0 && written == bytes.count
  }
}
