#include <cairo/cairo.h>
#include <cairo/cairo-pdf.h>
#include <cairo/cairo-svg.h>

/* The Cairo functions micloop plots with. The library is loaded when a plot
   is made (dlopen), so no other command pays for loading it; these are the
   types its functions are looked up as. */
typedef struct {
  __typeof__(&cairo_image_surface_create) image_surface_create;
  __typeof__(&cairo_svg_surface_create_for_stream) svg_surface_create_for_stream;
  __typeof__(&cairo_pdf_surface_create_for_stream) pdf_surface_create_for_stream;
  __typeof__(&cairo_surface_status) surface_status;
  __typeof__(&cairo_surface_destroy) surface_destroy;
  __typeof__(&cairo_surface_write_to_png_stream) surface_write_to_png_stream;
  __typeof__(&cairo_surface_finish) surface_finish;
  __typeof__(&cairo_surface_flush) surface_flush;
  __typeof__(&cairo_surface_mark_dirty) surface_mark_dirty;
  __typeof__(&cairo_status_to_string) status_to_string;
  __typeof__(&cairo_image_surface_get_stride) image_surface_get_stride;
  __typeof__(&cairo_image_surface_get_data) image_surface_get_data;
  __typeof__(&cairo_create) create;
  __typeof__(&cairo_destroy) destroy;
  __typeof__(&cairo_paint) paint;
  __typeof__(&cairo_select_font_face) select_font_face;
  __typeof__(&cairo_set_font_size) set_font_size;
  __typeof__(&cairo_rectangle) rectangle;
  __typeof__(&cairo_fill) fill;
  __typeof__(&cairo_set_line_width) set_line_width;
  __typeof__(&cairo_move_to) move_to;
  __typeof__(&cairo_line_to) line_to;
  __typeof__(&cairo_close_path) close_path;
  __typeof__(&cairo_stroke) stroke;
  __typeof__(&cairo_set_source_surface) set_source_surface;
  __typeof__(&cairo_set_source_rgb) set_source_rgb;
  __typeof__(&cairo_save) save;
  __typeof__(&cairo_restore) restore;
  __typeof__(&cairo_rotate) rotate;
  __typeof__(&cairo_show_text) show_text;
  __typeof__(&cairo_text_extents) text_extents;
} micloop_cairo_functions;
