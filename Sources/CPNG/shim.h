#ifndef SPOTTER_CPNG_SHIM_H
#define SPOTTER_CPNG_SHIM_H
/* libpng for the thumbnails (SpotterImages). Only the simplified API (png_image_*) is used from Swift: it keeps
   libpng's longjmp inside libpng and answers errors as return values, which Swift can read. */
#include <png.h>

/* The simplified API's constants are macros built from macros: one spelling each for Swift. */
static inline png_uint_32 spotter_png_image_version(void) { return PNG_IMAGE_VERSION; }
static inline png_uint_32 spotter_png_format_rgba(void) { return PNG_FORMAT_RGBA; }
static inline png_uint_32 spotter_png_format_rgb(void) { return PNG_FORMAT_RGB; }
#endif
