internal import CCairo

#if canImport(Glibc)
  import Glibc
#endif

/// The file types a plot is written as, from the output's extension.
public enum PlotFormat: String, Sendable, CaseIterable {
  case png, svg, pdf

  /// The format an output path's extension names, if any.
  public init?(path: String) {
    guard let dot = path.lastIndex(of: "."), path[dot...].count > 1 else { return nil }
    self.init(rawValue: path[path.index(after: dot)...].lowercased())
  }
}

/// A plot that could not be written.
public struct PlotError: Error, Sendable, CustomStringConvertible {
  public var description: String
}

/// Draws `PlotData` with Cairo: the level timeline (RMS filled, peak and
/// loudness as lines, talk shaded, tones marked with their symbols) over a
/// spectrogram with its colour legend, both on one time axis in seconds.
/// PNG, SVG and PDF come from the same drawing. Calling thread.
public struct PlotRenderer {
  public let layout: PlotLayout
  private static let talkShade = (0.80, 0.93, 0.80)
  private static let toneColour = (0.80, 0.10, 0.10)
  /// dB from the weakest colour of the spectrogram to the strongest.
  private static let legendSpan = 90.0
  /// dB between the legend's labels.
  private static let legendStep = 30.0
  /// The top of the spectrogram's scale at most, in dB (a full-scale sine
  /// is 0 dB): far above anything a real file holds.
  private static let highestTop = 1_000.0

  public init(layout: PlotLayout) { self.layout = layout }

  /// Writes the plot of `data` to `path` as `format`. The picture appears
  /// whole or not at all: it is written next to `path` and renamed onto it.
  public func write(_ data: PlotData, to path: String, as format: PlotFormat) throws(PlotError) {
    try CairoLibrary.load()
    let output = try PlotOutputFile(
      path: path, keepingBack: format == .svg ? PlotOutputFile.svgTailLength : 0)
    defer { output.discard() }
    let closure = Unmanaged.passUnretained(output).toOpaque()
    let write: cairo_write_func_t = { closure, bytes, count in
      let output = Unmanaged<PlotOutputFile>.fromOpaque(closure!).takeUnretainedValue()
      let written = output.write(UnsafeRawBufferPointer(start: bytes, count: Int(count)))
      return written ? CAIRO_STATUS_SUCCESS : CAIRO_STATUS_WRITE_ERROR
    }
    let width = Double(layout.width)
    let height = Double(layout.height)
    let surface: OpaquePointer?
    switch format {
    case .png:
      surface = cairo_image_surface_create(
        CAIRO_FORMAT_RGB24, Int32(layout.width), Int32(layout.height))
    case .svg: surface = cairo_svg_surface_create_for_stream(write, closure, width, height)
    case .pdf: surface = cairo_pdf_surface_create_for_stream(write, closure, width, height)
    }
    guard let surface, cairo_surface_status(surface) == CAIRO_STATUS_SUCCESS else {
      throw failure(surface, output)
    }
    defer { cairo_surface_destroy(surface) }
    let context = cairo_create(surface)!
    draw(data, on: context)
    cairo_destroy(context)
    switch format {
    case .png:
      guard cairo_surface_write_to_png_stream(surface, write, closure) == CAIRO_STATUS_SUCCESS
      else { throw failure(surface, output) }
      try output.commit()
    case .svg, .pdf:
      cairo_surface_finish(surface)
      guard cairo_surface_status(surface) == CAIRO_STATUS_SUCCESS else {
        throw failure(surface, output)
      }
      if format == .svg {
        try output.commit(ending: SVGTextLayer.ending(output.tail, adding: labels(for: data)))
      } else {
        try output.commit()
      }
    }
  }

  /// Why writing failed: the file's error when a write failed, else Cairo's.
  private func failure(_ surface: OpaquePointer?, _ output: PlotOutputFile) -> PlotError {
    if let error = output.failure {
      return PlotError(description: PlotOutputFile.message(path: output.path, error: error))
    }
    return PlotError(description: "cannot draw \(output.path): \(Self.reason(surface))")
  }

  /// The words drawn on the plot with where they are, for a text layer.
  func labels(for data: PlotData) -> [SVGTextLayer.Label] {
    toneLabelPositions(data).map { SVGTextLayer.Label(x: $0.x, y: $0.y, text: $0.mark.label) }
  }

  private static func reason(_ surface: OpaquePointer?) -> String {
    guard let surface else { return "out of memory" }
    return String(cString: cairo_status_to_string(cairo_surface_status(surface)))
  }

  // MARK: Drawing

  private func draw(_ data: PlotData, on context: OpaquePointer) {
    setColour(context, (1, 1, 1))
    cairo_paint(context)
    cairo_select_font_face(
      context, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL)
    drawTitle(data, on: context)
    drawLevels(data, on: context)
    drawSpectrogram(data, on: context)
    drawTimeAxis(data, on: context)
  }

  private func drawTitle(_ data: PlotData, on context: OpaquePointer) {
    var title =
      "\(data.title) — \(AxisTicks.label((data.duration * 100).rounded() / 100)) s, \(Int(data.sampleRate)) Hz, \(data.channelCount) channel\(data.channelCount == 1 ? "" : "s"), talk in \(data.talkSegments.count) segment\(data.talkSegments.count == 1 ? "" : "s")"
    if let integrated = data.integratedLUFS {
      title += ", integrated \(AxisTicks.label((integrated * 10).rounded() / 10)) LUFS"
    }
    cairo_set_font_size(context, 14)
    setColour(context, (0, 0, 0))
    text(context, title, x: Double(layout.levels.x), y: 22)
    // The key of the level panel, at the right end of the title line.
    var keys: [(String, (Double, Double, Double))] = [
      ("talk", Self.talkShade), ("RMS", (0.30, 0.50, 0.80)), ("peak", (0.05, 0.15, 0.45)),
    ]
    if data.hasLoudness { keys.append(("momentary LUFS", (0.95, 0.50, 0.05))) }
    if !data.tones.isEmpty { keys.append(("tones", Self.toneColour)) }
    cairo_set_font_size(context, 11)
    var x = Double(layout.levels.maxX)
    for (name, colour) in keys.reversed() {
      x -= textWidth(context, name) + 26
      setColour(context, colour)
      cairo_rectangle(context, x, 13, 12, 10)
      cairo_fill(context)
      setColour(context, (0.2, 0.2, 0.2))
      text(context, name, x: x + 16, y: 22)
    }
  }

  private func drawLevels(_ data: PlotData, on context: OpaquePointer) {
    let panel = layout.levels
    let duration = max(data.duration, 1e-9)
    // Talk, behind everything.
    setColour(context, Self.talkShade)
    for segment in data.talkSegments {
      let start = layout.x(of: segment.start, duration: duration)
      let end = layout.x(of: segment.end, duration: duration)
      cairo_rectangle(context, start, Double(panel.y), max(1, end - start), Double(panel.height))
    }
    cairo_fill(context)
    // Grid and level labels every 10 dB.
    cairo_set_font_size(context, 11)
    cairo_set_line_width(context, 1)
    var level = PlotLayout.levelRange.low
    while level <= PlotLayout.levelRange.high {
      let y = layout.y(ofLevel: level).rounded() + 0.5
      setColour(context, (0.85, 0.85, 0.85))
      cairo_move_to(context, Double(panel.x), y)
      cairo_line_to(context, Double(panel.maxX), y)
      cairo_stroke(context)
      setColour(context, (0.2, 0.2, 0.2))
      let label = AxisTicks.label(level)
      text(context, label, x: Double(panel.x) - 6 - textWidth(context, label), y: y + 4)
      level += 10
    }
    axisTitle(context, "dBFS", x: 16, y: Double(panel.y + panel.height / 2))
    let columns = pixelColumns(data.levels, width: panel.width, duration: duration)
    let bottom = Double(panel.maxY)
    setColour(context, (0.30, 0.50, 0.80))
    cairo_move_to(context, Double(panel.x), bottom)
    for (column, value) in columns.enumerated() {
      let y = value?.rmsDecibels.map { layout.y(ofLevel: $0) } ?? bottom
      cairo_line_to(context, Double(panel.x + column), y)
      cairo_line_to(context, Double(panel.x + column + 1), y)
    }
    cairo_line_to(context, Double(panel.maxX), bottom)
    cairo_close_path(context)
    cairo_fill(context)
    polyline(context, columns.map { $0?.peakDecibels }, colour: (0.05, 0.15, 0.45))
    if data.hasLoudness {
      polyline(context, columns.map { $0?.loudnessLUFS }, colour: (0.95, 0.50, 0.05))
    }
    // Tones: a line through the panel and the symbol above.
    for placed in toneLabelPositions(data) {
      setColour(context, Self.toneColour)
      cairo_set_line_width(context, 1)
      let x = placed.lineX.rounded() + 0.5
      cairo_move_to(context, x, Double(panel.y))
      cairo_line_to(context, x, Double(panel.maxY))
      cairo_stroke(context)
      cairo_set_font_size(context, 12)
      text(context, placed.mark.label, x: placed.x, y: placed.y)
    }
    frame(context, panel)
  }

  /// Where each tone's label goes: next to its line, in the first of three
  /// rows where it does not overlap the previous label.
  private func toneLabelPositions(_ data: PlotData) -> [(
    mark: ToneMark, lineX: Double, x: Double, y: Double
  )] {
    let panel = layout.levels
    var rowEnds = [Double](repeating: -.infinity, count: 3)
    let characterWidth = 7.5
    return data.tones.map { mark in
      let lineX = layout.x(of: mark.time, duration: max(data.duration, 1e-9))
      let x = lineX + 3
      let width = Double(mark.label.count) * characterWidth
      let row = rowEnds.firstIndex { $0 < x } ?? 0
      rowEnds[row] = x + width + 4
      return (mark, lineX, x, Double(panel.y) + 14 + Double(row) * 14)
    }
  }

  private func drawSpectrogram(_ data: PlotData, on context: OpaquePointer) {
    let panel = layout.spectrogram
    let duration = max(data.duration, 1e-9)
    let columns = pixelColumns(data.spectrum, width: panel.width, duration: duration)
    var strongest = -300.0
    for column in columns {
      if let column {
        for row in 0..<data.spectrumRows {
          let decibels = column.decibels(row: row)
          // Absurd samples (1e38) overflow the power to infinity.
          if decibels.isFinite { strongest = max(strongest, decibels) }
        }
      }
    }
    let top = min(Self.highestTop, strongest > -300 ? (strongest / 10).rounded(.up) * 10 : 0)
    let range = (low: top - Self.legendSpan, high: top)
    let image = cairo_image_surface_create(
      CAIRO_FORMAT_RGB24, Int32(panel.width), Int32(panel.height))!
    defer { cairo_surface_destroy(image) }
    cairo_surface_flush(image)
    let stride = Int(cairo_image_surface_get_stride(image))
    let pixels = cairo_image_surface_get_data(image)!
    for y in 0..<panel.height {
      // Row 0 of the data is the lowest frequency, at the bottom.
      let row = min(
        data.spectrumRows - 1, (panel.height - 1 - y) * data.spectrumRows / panel.height)
      let line = UnsafeMutableRawPointer(pixels + y * stride).assumingMemoryBound(to: UInt32.self)
      for x in 0..<panel.width {
        let decibels = columns[x]?.decibels(row: row) ?? -300
        let colour = ColourScale.colour((decibels - range.low) / (range.high - range.low))
        line[x] =
          UInt32((colour.red * 255).rounded()) << 16 | UInt32((colour.green * 255).rounded()) << 8
          | UInt32((colour.blue * 255).rounded())
      }
    }
    cairo_surface_mark_dirty(image)
    cairo_set_source_surface(context, image, Double(panel.x), Double(panel.y))
    cairo_paint(context)
    // Frequency labels in kHz.
    cairo_set_font_size(context, 11)
    let kilohertz = data.maximumFrequency / 1000
    for value in AxisTicks.ticks(span: kilohertz, target: max(2, panel.height / 50)) {
      let y = (Double(panel.maxY) - value / kilohertz * Double(panel.height)).rounded() + 0.5
      setColour(context, (0.2, 0.2, 0.2))
      cairo_move_to(context, Double(panel.x) - 4, y)
      cairo_line_to(context, Double(panel.x), y)
      cairo_stroke(context)
      let label = AxisTicks.label(value)
      text(context, label, x: Double(panel.x) - 6 - textWidth(context, label), y: y + 4)
    }
    axisTitle(context, "kHz", x: 16, y: Double(panel.y + panel.height / 2))
    frame(context, panel)
    drawLegend(range: range, on: context)
  }

  private func drawLegend(range: (low: Double, high: Double), on context: OpaquePointer) {
    let legend = layout.legend
    for y in 0..<legend.height {
      let fraction = 1 - Double(y) / Double(max(1, legend.height - 1))
      setColour(context, ColourScale.colour(fraction))
      cairo_rectangle(context, Double(legend.x), Double(legend.y + y), Double(legend.width), 1)
      cairo_fill(context)
    }
    frame(context, legend)
    cairo_set_font_size(context, 11)
    setColour(context, (0.2, 0.2, 0.2))
    // A fixed number of labels: the range is the same span whatever the data.
    let labels = Int((Self.legendSpan / Self.legendStep).rounded(.down))
    for index in 0...labels {
      let level = range.low + Double(index) * Self.legendStep
      let y =
        Double(legend.maxY) - (level - range.low) / (range.high - range.low) * Double(legend.height)
      text(context, AxisTicks.label(level), x: Double(legend.maxX) + 4, y: y + 4)
    }
    text(context, "dB", x: Double(legend.x), y: Double(legend.y) - 6)
  }

  private func drawTimeAxis(_ data: PlotData, on context: OpaquePointer) {
    let duration = max(data.duration, 1e-9)
    let bottom = Double(layout.spectrogram.maxY)
    cairo_set_font_size(context, 11)
    setColour(context, (0.2, 0.2, 0.2))
    cairo_set_line_width(context, 1)
    for time in AxisTicks.ticks(span: duration, target: max(2, layout.levels.width / 90)) {
      let x = layout.x(of: time, duration: duration).rounded() + 0.5
      for panelBottom in [Double(layout.levels.maxY), bottom] {
        cairo_move_to(context, x, panelBottom)
        cairo_line_to(context, x, panelBottom + 4)
      }
      cairo_stroke(context)
      let label = AxisTicks.label(time)
      text(context, label, x: x - textWidth(context, label) / 2, y: bottom + 17)
    }
    let title = "time (s)"
    text(
      context, title,
      x: Double(layout.levels.x + layout.levels.width / 2) - textWidth(context, title) / 2,
      y: bottom + 34)
  }

  // MARK: Helpers

  /// One value per pixel column of a panel `width` pixels wide. A pixel
  /// shorter than what one value covers (a reading every 10 ms, a
  /// transform every 21 ms) shows the value before it.
  private func pixelColumns<Value: ColumnValue>(
    _ columns: TimeColumns<Value>, width: Int, duration: Double
  ) -> [Value?] {
    var values = [Value?]()
    values.reserveCapacity(width)
    var previous: Value?
    for column in 0..<width {
      let start = Double(column) / Double(width) * duration
      let end = Double(column + 1) / Double(width) * duration
      let value = columns.value(from: start, to: end) ?? previous
      values.append(value)
      previous = value
    }
    return values
  }

  private func polyline(
    _ context: OpaquePointer, _ values: [Double?], colour: (Double, Double, Double)
  ) {
    let panel = layout.levels
    setColour(context, colour)
    cairo_set_line_width(context, 1.2)
    var drawing = false
    for (column, value) in values.enumerated() {
      guard let value else {
        drawing = false
        continue
      }
      let x = Double(panel.x + column) + 0.5
      let y = layout.y(ofLevel: value)
      if drawing { cairo_line_to(context, x, y) } else { cairo_move_to(context, x, y) }
      drawing = true
    }
    cairo_stroke(context)
  }

  private func frame(_ context: OpaquePointer, _ rect: PixelRect) {
    setColour(context, (0.4, 0.4, 0.4))
    cairo_set_line_width(context, 1)
    cairo_rectangle(
      context, Double(rect.x) - 0.5, Double(rect.y) - 0.5, Double(rect.width) + 1,
      Double(rect.height) + 1)
    cairo_stroke(context)
  }

  private func axisTitle(_ context: OpaquePointer, _ title: String, x: Double, y: Double) {
    cairo_save(context)
    cairo_set_font_size(context, 11)
    setColour(context, (0.2, 0.2, 0.2))
    cairo_move_to(context, x, y + textWidth(context, title) / 2)
    cairo_rotate(context, -Double.pi / 2)
    cairo_show_text(context, title)
    cairo_restore(context)
  }

  private func text(_ context: OpaquePointer, _ string: String, x: Double, y: Double) {
    cairo_move_to(context, x, y)
    cairo_show_text(context, string)
  }

  private func textWidth(_ context: OpaquePointer, _ string: String) -> Double {
    var extents = cairo_text_extents_t()
    cairo_text_extents(context, string, &extents)
    return extents.x_advance
  }

  private func setColour(_ context: OpaquePointer, _ colour: (Double, Double, Double)) {
    cairo_set_source_rgb(context, colour.0, colour.1, colour.2)
  }
}
