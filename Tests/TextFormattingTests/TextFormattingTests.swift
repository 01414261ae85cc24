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

  /// The object writes its numbers and strings in place, as the string
  /// functions write them one by one.
  @Test func objectsWriteWhatTheStringFunctionsWrite() {
    let values: [Double?] = [
      nil, .nan, -.infinity, 0, -0.0004, 2.5, -2.5, 12.3456, 0.05, -1.005, 1e20, -123_456.789,
    ]
    for places in 0...3 {
      for value in values {
        var object = JSONObject()
        object.add("v", value, places: places)
        #expect(object.finished == "{\"v\":\(DecimalFormatting.json(value, places: places))}")
      }
    }
    for integer: Int64 in [0, 7, -7, 1_234_567_890, .max, .min] {
      var object = JSONObject()
      object.add("n", integer)
      #expect(object.finished == "{\"n\":\(integer)}")
    }
    var member = JSONObject(capacity: 8)
    member.add("a", true)
    var object = JSONObject(event: "x\"y")
    object.add("list", objects: [member, JSONObject()])
    object.add("s", optional: nil)
    object.add("t", "tab\t")
    #expect(object.finished == #"{"event":"x\"y","list":[{"a":true},{}],"s":null,"t":"tab\t"}"#)
  }
}
