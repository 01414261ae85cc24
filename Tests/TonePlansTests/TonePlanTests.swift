import Testing
import TonePlans

@Suite struct TonePlanTests {
  @Test func dtmfDigitsAreTheQ23Pairs() throws {
    #expect(TonePlan.dtmf.frequencies(of: "1") == [697, 1209])
    #expect(TonePlan.dtmf.frequencies(of: "#") == [941, 1477])
    #expect(TonePlan.dtmf.frequencies(of: "D") == [941, 1633])
    let segments = try TonePlan.dtmf.schedule(for: "123#", sampleRate: 48_000)
    #expect(segments.map(\.symbol) == ["1", "2", "3", "#"])
    #expect(segments.allSatisfy { $0.duration == 0.07 && $0.gap == 0.07 })
  }

  @Test func repeatedDigitsAreSentAsTheRepeatTone() throws {
    let segments = try TonePlan.ccir1.schedule(for: "12335", sampleRate: 48_000)
    #expect(String(segments.map(\.symbol)) == "123E5")
    #expect(segments[3].frequencies == [2110])
    #expect(segments.allSatisfy { $0.duration == 0.1 && $0.gap == 0 })
    let triple = try TonePlan.zvei1.schedule(for: "333", sampleRate: 48_000)
    #expect(String(triple.map(\.symbol)) == "3E3")
  }

  @Test func everyFiveTonePlanHasSixteenOrFifteenDistinctTones() {
    for plan in TonePlan.all where plan.kind == .sequential(repeatSymbol: "E") {
      let frequencies = plan.symbols.flatMap(\.frequencies)
      #expect(frequencies.count >= 15, "\(plan.name)")
      #expect(Set(frequencies).count == frequencies.count, "\(plan.name) repeats a frequency")
    }
  }

  @Test func timingOverridesApply() throws {
    let segments = try TonePlan.eea.schedule(
      for: "1", sampleRate: 48_000, toneDuration: 0.05, gapDuration: 0.01)
    #expect(segments[0].duration == 0.05 && segments[0].gap == 0.01)
  }

  @Test func handshakePrecedesEveryCharacterWithTheMarker() throws {
    let segments = try TonePlan.handshake.schedule(for: "Hi", sampleRate: 48_000)
    #expect(segments.count == 4)
    #expect(segments[0].frequencies == [19_000])
    #expect(segments[1].frequencies == [19_000 + 43 * 72])
    #expect(segments[3].frequencies == [19_000 + 43 * 105])
    #expect(segments.allSatisfy { $0.duration == 0.2 })
  }

  @Test func symbolsAbovNyquistOrOutsideThePlanAreAllNamed() {
    // 'u' is 19000 + 43 × 117 = 24031 Hz: above 24000 Hz at 48 kHz.
    #expect(throws: TonePlanError.self) {
      try TonePlan.handshake.schedule(for: "tux", sampleRate: 48_000)
    }
    do {
      _ = try TonePlan.handshake.schedule(for: "tux", sampleRate: 48_000)
    } catch {
      #expect(error.description.contains("'u'") && error.description.contains("'x'"), "\(error)")
      #expect(!error.description.contains("'t'"), "\(error)")
    }
    do {
      _ = try TonePlan.dtmf.schedule(for: "12X4Y", sampleRate: 48_000)
      Issue.record("DTMF accepted X")
    } catch {
      #expect(error.description.contains("'X', 'Y'"), "\(error)")
    }
  }

  /// Found by the tone-plan fuzzer: "ŉ" upper-cases to two characters,
  /// which trapped when made one symbol.
  @Test func aSymbolWhoseCapitalIsTwoLettersIsUnknownNotATrap() {
    for plan in [TonePlan.dtmf, .ccir1, .named("twotone:1000,1200")!] {
      do {
        _ = try plan.schedule(for: "1ŉß", sampleRate: 48_000)
        Issue.record("\(plan.name) accepted ŉ")
      } catch {
        #expect(error.kind == .unknownSymbols, "\(error)")
        #expect(error.description.contains("'ŉ'"), "\(error)")
      }
    }
  }

  @Test func arbitraryPlansParseAndPlansResolveByName() throws {
    let plan = try #require(TonePlan.named("freq:1000,1500.5"))
    #expect(plan.frequencies(of: "2") == [1500.5])
    #expect(TonePlan.named("CCIR") == TonePlan.ccir1)
    #expect(TonePlan.named("freq:abc") == nil)
    #expect(TonePlan.named("nosuchplan") == nil)
  }

  @Test func anAbsurdFrequencyIsRefusedInWordsNotATrap() throws {
    // Found by the tone-plan fuzzer: a tone of 2.8e72 Hz trapped in the error's wording.
    let plan = try #require(TonePlan.named("freq:1000,2.8e72"))
    #expect(throws: TonePlanError.self) { try plan.schedule(for: "12", sampleRate: 48_000) }
    do {
      _ = try plan.schedule(for: "2", sampleRate: 48_000)
    } catch {
      #expect(error.kind == .aboveNyquist)
      #expect(error.description.contains("2.8e+72 Hz"), "\(error.description)")
    }
  }
}
