internal import CCairo

#if canImport(Glibc)
  import Glibc
#endif

/// libcairo, loaded the first time a plot is drawn: linked into the
/// binary, its seventeen libraries would cost every command a millisecond
/// at start-up. The `cairo_…` functions below stand in for Cairo's own
/// (the drawing code reads as Cairo's documentation does) and call the
/// loaded library; `load()` must have succeeded first. Any thread.
enum CairoLibrary {
  nonisolated(unsafe) private static let loaded: micloop_cairo_functions? = {
    guard let library = dlopen("libcairo.so.2", RTLD_NOW | RTLD_LOCAL) else { return nil }
    var functions = micloop_cairo_functions()
    // Each function by its name, as the pointer type its field declares.
    func find<Function>(_ name: String, _ field: inout Function?) -> Bool {
      guard let symbol = dlsym(library, name) else { return false }
      field = unsafeBitCast(symbol, to: Function.self)
      return true
    }
    let found = [
      find("cairo_image_surface_create", &functions.image_surface_create),
      find("cairo_svg_surface_create_for_stream", &functions.svg_surface_create_for_stream),
      find("cairo_pdf_surface_create_for_stream", &functions.pdf_surface_create_for_stream),
      find("cairo_surface_status", &functions.surface_status),
      find("cairo_surface_destroy", &functions.surface_destroy),
      find("cairo_surface_write_to_png_stream", &functions.surface_write_to_png_stream),
      find("cairo_surface_finish", &functions.surface_finish),
      find("cairo_surface_flush", &functions.surface_flush),
      find("cairo_surface_mark_dirty", &functions.surface_mark_dirty),
      find("cairo_status_to_string", &functions.status_to_string),
      find("cairo_image_surface_get_stride", &functions.image_surface_get_stride),
      find("cairo_image_surface_get_data", &functions.image_surface_get_data),
      find("cairo_create", &functions.create),
      find("cairo_destroy", &functions.destroy),
      find("cairo_paint", &functions.paint),
      find("cairo_select_font_face", &functions.select_font_face),
      find("cairo_set_font_size", &functions.set_font_size),
      find("cairo_rectangle", &functions.rectangle),
      find("cairo_fill", &functions.fill),
      find("cairo_set_line_width", &functions.set_line_width),
      find("cairo_move_to", &functions.move_to),
      find("cairo_line_to", &functions.line_to),
      find("cairo_close_path", &functions.close_path),
      find("cairo_stroke", &functions.stroke),
      find("cairo_set_source_surface", &functions.set_source_surface),
      find("cairo_set_source_rgb", &functions.set_source_rgb),
      find("cairo_save", &functions.save),
      find("cairo_restore", &functions.restore),
      find("cairo_rotate", &functions.rotate),
      find("cairo_show_text", &functions.show_text),
      find("cairo_text_extents", &functions.text_extents),
    ]
    return found.allSatisfy { $0 } ? functions : nil
  }()

  /// Loads the library, or says in one line why it cannot be.
  static func load() throws(PlotError) {
    guard loaded != nil else {
      throw PlotError(
        description:
          "cannot load the Cairo library (libcairo.so.2) to draw with; install it (Debian: apt-get install libcairo2)"
      )
    }
  }

  /// The loaded functions (after `load()` succeeded).
  static var functions: micloop_cairo_functions { loaded! }
}

func cairo_image_surface_create(
  _ format: cairo_format_t, _ width: Int32, _ height: Int32
) -> OpaquePointer? { CairoLibrary.functions.image_surface_create!(format, width, height) }

func cairo_svg_surface_create_for_stream(
  _ write: cairo_write_func_t?, _ closure: UnsafeMutableRawPointer?, _ width: Double,
  _ height: Double
) -> OpaquePointer? {
  CairoLibrary.functions.svg_surface_create_for_stream!(write, closure, width, height)
}

func cairo_pdf_surface_create_for_stream(
  _ write: cairo_write_func_t?, _ closure: UnsafeMutableRawPointer?, _ width: Double,
  _ height: Double
) -> OpaquePointer? {
  CairoLibrary.functions.pdf_surface_create_for_stream!(write, closure, width, height)
}

func cairo_surface_status(_ surface: OpaquePointer?) -> cairo_status_t {
  CairoLibrary.functions.surface_status!(surface)
}

func cairo_surface_destroy(_ surface: OpaquePointer?) {
  CairoLibrary.functions.surface_destroy!(surface)
}

func cairo_surface_write_to_png_stream(
  _ surface: OpaquePointer?, _ write: cairo_write_func_t?, _ closure: UnsafeMutableRawPointer?
) -> cairo_status_t {
  CairoLibrary.functions.surface_write_to_png_stream!(surface, write, closure)
}

func cairo_surface_finish(_ surface: OpaquePointer?) {
  CairoLibrary.functions.surface_finish!(surface)
}

func cairo_surface_flush(_ surface: OpaquePointer?) {
  CairoLibrary.functions.surface_flush!(surface)
}

func cairo_surface_mark_dirty(_ surface: OpaquePointer?) {
  CairoLibrary.functions.surface_mark_dirty!(surface)
}

func cairo_status_to_string(_ status: cairo_status_t) -> UnsafePointer<CChar>! {
  CairoLibrary.functions.status_to_string!(status)
}

func cairo_image_surface_get_stride(_ surface: OpaquePointer?) -> Int32 {
  CairoLibrary.functions.image_surface_get_stride!(surface)
}

func cairo_image_surface_get_data(_ surface: OpaquePointer?) -> UnsafeMutablePointer<UInt8>? {
  CairoLibrary.functions.image_surface_get_data!(surface)
}

func cairo_create(_ surface: OpaquePointer?) -> OpaquePointer? {
  CairoLibrary.functions.create!(surface)
}

func cairo_destroy(_ context: OpaquePointer?) { CairoLibrary.functions.destroy!(context) }

func cairo_paint(_ context: OpaquePointer?) { CairoLibrary.functions.paint!(context) }

func cairo_select_font_face(
  _ context: OpaquePointer?, _ family: UnsafePointer<CChar>?, _ slant: cairo_font_slant_t,
  _ weight: cairo_font_weight_t
) { CairoLibrary.functions.select_font_face!(context, family, slant, weight) }

func cairo_set_font_size(_ context: OpaquePointer?, _ size: Double) {
  CairoLibrary.functions.set_font_size!(context, size)
}

func cairo_rectangle(
  _ context: OpaquePointer?, _ x: Double, _ y: Double, _ width: Double, _ height: Double
) { CairoLibrary.functions.rectangle!(context, x, y, width, height) }

func cairo_fill(_ context: OpaquePointer?) { CairoLibrary.functions.fill!(context) }

func cairo_set_line_width(_ context: OpaquePointer?, _ width: Double) {
  CairoLibrary.functions.set_line_width!(context, width)
}

func cairo_move_to(_ context: OpaquePointer?, _ x: Double, _ y: Double) {
  CairoLibrary.functions.move_to!(context, x, y)
}

func cairo_line_to(_ context: OpaquePointer?, _ x: Double, _ y: Double) {
  CairoLibrary.functions.line_to!(context, x, y)
}

func cairo_close_path(_ context: OpaquePointer?) { CairoLibrary.functions.close_path!(context) }

func cairo_stroke(_ context: OpaquePointer?) { CairoLibrary.functions.stroke!(context) }

func cairo_set_source_surface(
  _ context: OpaquePointer?, _ surface: OpaquePointer?, _ x: Double, _ y: Double
) { CairoLibrary.functions.set_source_surface!(context, surface, x, y) }

func cairo_set_source_rgb(_ context: OpaquePointer?, _ red: Double, _ green: Double, _ blue: Double)
{ CairoLibrary.functions.set_source_rgb!(context, red, green, blue) }

func cairo_save(_ context: OpaquePointer?) { CairoLibrary.functions.save!(context) }

func cairo_restore(_ context: OpaquePointer?) { CairoLibrary.functions.restore!(context) }

func cairo_rotate(_ context: OpaquePointer?, _ angle: Double) {
  CairoLibrary.functions.rotate!(context, angle)
}

func cairo_show_text(_ context: OpaquePointer?, _ text: UnsafePointer<CChar>?) {
  CairoLibrary.functions.show_text!(context, text)
}

func cairo_text_extents(
  _ context: OpaquePointer?, _ text: UnsafePointer<CChar>?,
  _ extents: UnsafeMutablePointer<cairo_text_extents_t>?
) { CairoLibrary.functions.text_extents!(context, text, extents) }
