import Testing

@testable import TextFormatting

@Suite struct TextFormattingTests {
  @Test func decimalsRoundHalfAwayFromZero() {
    #expect(DecimalFormatting.fixed(-0.0004, places: 3) == "0.000")
    #expect(DecimalFormatting.fixed(-3.0103, places: 2) == "-3.01")
    #expect(DecimalFormatting.fixed(2.5, places: 0) == "3")
    #expect(DecimalFormatting.fixed(-2.5, places: 0) == "-3")
    #expect(DecimalFormatting.fixed(12.3456, places: 3) == "12.346")
    #expect(DecimalFormatting.fixed(0.05, places: 1) == "0.1")
    #expect(DecimalFormatting.fixed(7, places: 2) == "7.00")
  }

  @Test func signedDecimalsCarryAPlusFromZeroUp() {
    #expect(DecimalFormatting.signed(3.3, places: 1) == "+3.3")
    #expect(DecimalFormatting.signed(0, places: 1) == "+0.0")
    #expect(DecimalFormatting.signed(-1.7, places: 1) == "-1.7")
  }

  @Test func numbersThatAreNotFiniteAreNullInJSON() {
    #expect(DecimalFormatting.json(.infinity, places: 2) == "null")
    #expect(DecimalFormatting.json(.nan, places: 2) == "null")
    #expect(DecimalFormatting.json(nil, places: 2) == "null")
    #expect(DecimalFormatting.json(-1.005, places: 1) == "-1.0")
  }

  @Test func stringsAreEscaped() {
    #expect(JSONText.quoted("a\"b\\c\n\u{1}") == #""a\"b\\c\n\u0001""#)
    #expect(JSONText.quoted("tab\there\r") == #""tab\there\r""#)
    #expect(JSONText.quoted("plain ünïcode") == "\"plain ünïcode\"")
    #expect(JSONText.quoted("\u{1f}") == #""\u001f""#)
  }

  @Test func arraysJoinRenderedValues() {
    #expect(JSONText.array([]) == "[]")
    #expect(JSONText.array(["1.0", JSONText.quoted("x")]) == #"[1.0,"x"]"#)
  }
}
