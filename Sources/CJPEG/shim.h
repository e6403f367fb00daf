#ifndef SPOTTER_CJPEG_SHIM_H
#define SPOTTER_CJPEG_SHIM_H
/* libjpeg(-turbo) for the thumbnails (SpotterImages). libjpeg reports a fatal error by calling error_exit, which by
   default ends the process; Swift cannot catch a longjmp either. So every libjpeg call runs inside one of the two
   functions below: error_exit longjmps back to the setjmp of the same C function, which cleans up and returns a
   status. Nothing is decoded before the header's dimensions are checked against the caller's bounds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <jpeglib.h>

enum {
    SPOTTER_JPEG_OK = 0,
    SPOTTER_JPEG_CORRUPT = 1,      /* not a JPEG, truncated, or libjpeg refused it */
    SPOTTER_JPEG_TOO_LARGE = 2,    /* the header's dimensions exceed the bounds: nothing was decoded */
    SPOTTER_JPEG_UNSUPPORTED = 3,  /* a colour space with no RGB conversion (CMYK, YCCK) */
    SPOTTER_JPEG_NO_MEMORY = 4,
};

struct spotter_jpeg_error {
    struct jpeg_error_mgr base;
    jmp_buf jump;
    int warnings;                  /* corrupt-data warnings: a truncated file only warns in libjpeg */
    unsigned char *buffer;         /* freed on a jump */
};

static void spotter_jpeg_error_exit(j_common_ptr info) {
    struct spotter_jpeg_error *error = (struct spotter_jpeg_error *)info->err;
    longjmp(error->jump, 1);
}

static void spotter_jpeg_emit_message(j_common_ptr info, int level) {
    struct spotter_jpeg_error *error = (struct spotter_jpeg_error *)info->err;
    if (level < 0) error->warnings += 1;  /* never printed */
}

static void spotter_jpeg_output_message(j_common_ptr info) { (void)info; }

static inline void spotter_jpeg_free(unsigned char *buffer) { free(buffer); }

/* Decodes `data` to 8-bit RGB, read at the smallest libjpeg scale (1/1, 1/2, 1/4 or 1/8) whose output still
   covers `target` on its longer side. Refuses (SPOTTER_JPEG_TOO_LARGE) before decoding when the header says wider
   or taller than `max_side` or more than `max_pixels` pixels; libjpeg's own allocations are bounded by `max_memory`.
   On success *out (malloc'd, free with spotter_jpeg_free) holds *out_width × *out_height × 3 bytes and
   *full_width × *full_height are the image's own dimensions. */
static inline int spotter_jpeg_decode(const unsigned char *data, unsigned long size, unsigned long max_pixels,
                                      unsigned int max_side, unsigned int target, long max_memory,
                                      unsigned char **out, unsigned int *out_width, unsigned int *out_height,
                                      unsigned int *full_width, unsigned int *full_height) {
    struct jpeg_decompress_struct info;
    struct spotter_jpeg_error error;
    volatile int status = SPOTTER_JPEG_CORRUPT;
    memset(&info, 0, sizeof info);
    info.err = jpeg_std_error(&error.base);
    error.base.error_exit = spotter_jpeg_error_exit;
    error.base.emit_message = spotter_jpeg_emit_message;
    error.base.output_message = spotter_jpeg_output_message;
    error.warnings = 0;
    error.buffer = NULL;
    *out = NULL;
    if (setjmp(error.jump)) {
        jpeg_destroy_decompress(&info);
        free(error.buffer);
        return status;
    }
    jpeg_create_decompress(&info);
    info.mem->max_memory_to_use = max_memory;
    jpeg_mem_src(&info, data, size);
    if (jpeg_read_header(&info, TRUE) != JPEG_HEADER_OK) { jpeg_destroy_decompress(&info); return SPOTTER_JPEG_CORRUPT; }
    *full_width = info.image_width;
    *full_height = info.image_height;
    if (info.image_width == 0 || info.image_height == 0) { jpeg_destroy_decompress(&info); return SPOTTER_JPEG_CORRUPT; }
    if (info.image_width > max_side || info.image_height > max_side
        || (unsigned long long)info.image_width * info.image_height > max_pixels) {
        jpeg_destroy_decompress(&info);
        return SPOTTER_JPEG_TOO_LARGE;
    }
    if (info.jpeg_color_space == JCS_CMYK || info.jpeg_color_space == JCS_YCCK) {
        jpeg_destroy_decompress(&info);
        return SPOTTER_JPEG_UNSUPPORTED;
    }
    info.out_color_space = JCS_RGB;
    unsigned int longer = info.image_width > info.image_height ? info.image_width : info.image_height;
    unsigned int denom = 1;
    while (denom < 8 && longer / (denom * 2) >= target) denom *= 2;
    info.scale_num = 1;
    info.scale_denom = denom;
    jpeg_start_decompress(&info);
    size_t stride = (size_t)info.output_width * 3;
    error.buffer = (unsigned char *)malloc(stride * info.output_height);
    if (error.buffer == NULL) { status = SPOTTER_JPEG_NO_MEMORY; longjmp(error.jump, 1); }
    while (info.output_scanline < info.output_height) {
        JSAMPROW row = error.buffer + stride * info.output_scanline;
        if (jpeg_read_scanlines(&info, &row, 1) != 1) longjmp(error.jump, 1);  /* suspended: data ran out */
    }
    jpeg_finish_decompress(&info);
    if (error.warnings > 0) longjmp(error.jump, 1);  /* truncated or damaged: no half-grey thumbnail */
    *out_width = info.output_width;
    *out_height = info.output_height;
    *out = error.buffer;
    jpeg_destroy_decompress(&info);
    return SPOTTER_JPEG_OK;
}

/* Encodes `width` × `height` 8-bit RGB pixels as a baseline JPEG of `quality` (1–100). On success *out (malloc'd,
   free with spotter_jpeg_free) holds *out_size bytes. */
static inline int spotter_jpeg_encode(const unsigned char *pixels, unsigned int width, unsigned int height, int quality,
                                      unsigned char **out, unsigned long *out_size) {
    struct jpeg_compress_struct info;
    struct spotter_jpeg_error error;
    memset(&info, 0, sizeof info);
    info.err = jpeg_std_error(&error.base);
    error.base.error_exit = spotter_jpeg_error_exit;
    error.base.emit_message = spotter_jpeg_emit_message;
    error.base.output_message = spotter_jpeg_output_message;
    error.warnings = 0;
    error.buffer = NULL;
    *out = NULL;
    *out_size = 0;
    if (setjmp(error.jump)) {
        /* Only bad parameters get here (never with this module's input). The memory destination's buffer is left
           alone: libjpeg may have replaced it with a bigger one already. */
        jpeg_destroy_compress(&info);
        return SPOTTER_JPEG_CORRUPT;
    }
    jpeg_create_compress(&info);
    jpeg_mem_dest(&info, &error.buffer, out_size);
    info.image_width = width;
    info.image_height = height;
    info.input_components = 3;
    info.in_color_space = JCS_RGB;
    jpeg_set_defaults(&info);
    jpeg_set_quality(&info, quality, TRUE);
    jpeg_start_compress(&info, TRUE);
    size_t stride = (size_t)width * 3;
    while (info.next_scanline < info.image_height) {
        JSAMPROW row = (JSAMPROW)(pixels + stride * info.next_scanline);
        jpeg_write_scanlines(&info, &row, 1);
    }
    jpeg_finish_compress(&info);
    *out = error.buffer;
    jpeg_destroy_compress(&info);
    return SPOTTER_JPEG_OK;
}
#endif
