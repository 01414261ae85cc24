import Testing

@testable import TextFormatting

/// The reader of JSON that other programs may have written: what micloop
/// writes reads back as written, and malformed or hostile text is refused
/// without a crash.
@Suite struct JSONValueTests {
  @Test func whatMicloopWritesReadsBack() throws {
    let name = "2026-11-25T12-00-03.417Z \"quoted\" \\ tab\t é ☎ 𝄞"
    let line =
      "{\"event\":\"recording\",\"file\":" + JSONText.quoted(name)
      + ",\"frames\":48000,\"duration\":1.000,\"tags\":[{\"key\":\"5\"}],\"continues\":null,\"ok\":true}"
    let value = try #require(JSONValue(parsing: line))
    #expect(value["event"]?.string == "recording")
    #expect(value["file"]?.string == name)
    #expect(value["frames"]?.number == 48_000)
    #expect(value["continues"] == .null && value["ok"] == .bool(true))
    #expect(value["tags"] == .array([.object(["key": .string("5")])]))
  }

  @Test func escapesAndSurrogatePairsAreDecoded() {
    #expect(JSONValue(parsing: #""\u00e9\uD834\uDD1E\n\/""#) == .string("é𝄞\n/"))
    #expect(JSONValue(parsing: #""\uD834""#) == nil, "a lone high surrogate")
    #expect(JSONValue(parsing: #""\uDD1E""#) == nil, "a lone low surrogate")
  }

  @Test(arguments: [
    "", "{", "}", "[1,]", "{\"a\":1,}", "{\"a\" 1}", "01", "1.", ".5", "+1", "-", "1e", "tru",
    "nul", "\"open", "\"bad \\x escape\"", "\"tab\tinside\"", "{} {}", "[1 2]", "{1:2}",
    "\u{FFFD}",
  ])
  func malformedTextIsRefused(text: String) {
    #expect(JSONValue(parsing: text) == nil, "\(text)")
  }

  @Test func nestingIsBounded() {
    let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
    #expect(JSONValue(parsing: deep) == nil)
    let allowed =
      String(repeating: "[", count: JSONValue.maximumDepth)
      + String(repeating: "]", count: JSONValue.maximumDepth)
    #expect(JSONValue(parsing: allowed) != nil)
  }

  @Test func numbersFollowJSONsGrammar() {
    #expect(JSONValue(parsing: "-0.5e-3")?.number == -0.0005)
    #expect(JSONValue(parsing: " 12 ")?.number == 12)
    #expect(JSONValue(parsing: "1E400")?.number == .infinity)
  }
}
