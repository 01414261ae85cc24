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

  /// The end of an SVG, `tail` (its last bytes, the closing tag among
  /// them), with `labels` inserted before the closing tag.
  static func ending(_ tail: [UInt8], adding labels: [Label]) throws(PlotError) -> [UInt8] {
    guard !labels.isEmpty else { return tail }
    let closing = Array("</svg>".utf8)
    guard tail.count >= closing.count,
      let end = (0...(tail.count - closing.count)).reversed().first(where: {
        Array(tail[$0..<$0 + closing.count]) == closing
      })
    else { throw PlotError(description: "cannot add the text layer: no closing </svg> tag") }
    var layer = "<g fill-opacity=\"0\" font-family=\"DejaVu Sans\" font-size=\"12\">\n"
    for label in labels {
      layer +=
        "<text x=\"\(format(label.x))\" y=\"\(format(label.y))\">\(escaped(label.text))</text>\n"
    }
    layer += "</g>\n"
    var result = tail
    result.insert(contentsOf: Array(layer.utf8), at: end)
    return result
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
}
