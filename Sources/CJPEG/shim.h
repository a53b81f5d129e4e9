#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <jpeglib.h>

/* libjpeg reports errors through error_exit, which must not return: ours jumps back to
 * the C frame below (never across Swift frames), which turns the jump into a return
 * value and keeps the library's message. */
struct cjpeg_error {
    struct jpeg_error_mgr base;
    jmp_buf jump;
    char message[JMSG_LENGTH_MAX];
};

static void cjpeg_error_exit(j_common_ptr cinfo) {
    struct cjpeg_error *error = (struct cjpeg_error *)cinfo->err;
    (*cinfo->err->format_message)(cinfo, error->message);
    longjmp(error->jump, 1);
}

/* Warnings (a corrupt entropy segment, premature end of data) would otherwise print to
 * stderr and let a damaged image through: they fail the decoding too. */
static void cjpeg_emit_message(j_common_ptr cinfo, int level) {
    if (level < 0) cjpeg_error_exit(cinfo);
}

/* Our error manager: errors jump back; with `strict`, so do warnings. */
static struct jpeg_error_mgr *cjpeg_errors(struct cjpeg_error *error, int strict) {
    jpeg_std_error(&error->base);
    error->base.error_exit = cjpeg_error_exit;
    if (strict) error->base.emit_message = cjpeg_emit_message;
    return &error->base;
}

/* A progressive JPEG may have any number of scans, each a pass over the whole picture:
 * past this many, decoding stops (a camera writes about ten). */
#define CJPEG_MAX_SCANS 200
/* The most memory libjpeg may take for one picture (a 50-megapixel progressive JPEG keeps
 * every coefficient: about 300 MB). */
#define CJPEG_MAX_MEMORY (400L * 1024 * 1024)

static void cjpeg_progress(j_common_ptr cinfo) {
    if (cinfo->is_decompressor && ((j_decompress_ptr)cinfo)->input_scan_number > CJPEG_MAX_SCANS) {
        struct cjpeg_error *error = (struct cjpeg_error *)cinfo->err;
        snprintf(error->message, JMSG_LENGTH_MAX, "more than %d scans", CJPEG_MAX_SCANS);
        longjmp(error->jump, 1);
    }
}

/* Reads a JPEG's size without decoding it. Returns 0, or 1 with `message` set. */
static inline int cjpeg_size(const unsigned char *data, unsigned long size, int *width, int *height, char *message) {
    struct jpeg_decompress_struct cinfo;
    struct cjpeg_error error;
    cinfo.err = cjpeg_errors(&error, 1);
    if (setjmp(error.jump)) {
        strncpy(message, error.message, JMSG_LENGTH_MAX);
        jpeg_destroy_decompress(&cinfo);
        return 1;
    }
    jpeg_create_decompress(&cinfo);
    jpeg_mem_src(&cinfo, data, size);
    jpeg_read_header(&cinfo, TRUE);
    *width = (int)cinfo.image_width;
    *height = (int)cinfo.image_height;
    jpeg_destroy_decompress(&cinfo);
    return 0;
}

/* Decodes a JPEG to 8-bit RGB, scaled by 1/denominator in the DCT domain (1, 2, 4 or 8),
 * into the caller's `pixels`, which holds width × height × 3 bytes: the scaled size the
 * caller expects (refused if it is not). Returns 0, or 1 with `message` set. */
static inline int cjpeg_decode(
    const unsigned char *data, unsigned long size, int denominator,
    unsigned char *pixels, int width, int height, char *message)
{
    struct jpeg_decompress_struct cinfo;
    struct cjpeg_error error;
    cinfo.err = cjpeg_errors(&error, 1);
    if (setjmp(error.jump)) {
        strncpy(message, error.message, JMSG_LENGTH_MAX);
        jpeg_destroy_decompress(&cinfo);
        return 1;
    }
    struct jpeg_progress_mgr progress = { .progress_monitor = cjpeg_progress };
    jpeg_create_decompress(&cinfo);
    cinfo.progress = &progress;
    cinfo.mem->max_memory_to_use = CJPEG_MAX_MEMORY;
    jpeg_mem_src(&cinfo, data, size);
    jpeg_read_header(&cinfo, TRUE);
    cinfo.out_color_space = JCS_RGB;
    cinfo.scale_num = 1;
    cinfo.scale_denom = (unsigned int)denominator;
    cinfo.dct_method = JDCT_ISLOW;
    jpeg_start_decompress(&cinfo);
    if ((int)cinfo.output_width != width || (int)cinfo.output_height != height || cinfo.output_components != 3) {
        snprintf(message, JMSG_LENGTH_MAX, "decodes to %ux%u, not the %dx%d its header gives",
                 cinfo.output_width, cinfo.output_height, width, height);
        jpeg_destroy_decompress(&cinfo);
        return 1;
    }
    size_t stride = (size_t)width * 3;
    while (cinfo.output_scanline < cinfo.output_height) {
        JSAMPROW row = pixels + stride * cinfo.output_scanline;
        jpeg_read_scanlines(&cinfo, &row, 1);
    }
    jpeg_finish_decompress(&cinfo);
    jpeg_destroy_decompress(&cinfo);
    return 0;
}

/* Encodes 8-bit RGB as a baseline JPEG at `quality` (with Huffman tables made for the
 * picture when `optimize`, else the standard ones), with a JFIF header and no other
 * marker, into a buffer of libjpeg's (*out, free() it). Returns 0, or 1 with `message`. */
static inline int cjpeg_encode(
    const unsigned char *pixels, int width, int height, int quality, int optimize,
    unsigned char **out, unsigned long *size, char *message)
{
    struct jpeg_compress_struct cinfo;
    struct cjpeg_error error;
    cinfo.err = cjpeg_errors(&error, 0);
    *out = NULL;
    *size = 0;
    if (setjmp(error.jump)) {
        /* Not freed: once the memory destination has grown its buffer, *out points at
         * one it has freed already (it is set right only when compression finishes). An
         * error here (out of memory) leaks the buffer rather than freeing it twice. */
        strncpy(message, error.message, JMSG_LENGTH_MAX);
        jpeg_destroy_compress(&cinfo);
        *out = NULL;
        return 1;
    }
    jpeg_create_compress(&cinfo);
    jpeg_mem_dest(&cinfo, out, size);
    cinfo.image_width = (JDIMENSION)width;
    cinfo.image_height = (JDIMENSION)height;
    cinfo.input_components = 3;
    cinfo.in_color_space = JCS_RGB;
    jpeg_set_defaults(&cinfo);
    jpeg_set_quality(&cinfo, quality, TRUE);
    cinfo.optimize_coding = optimize ? TRUE : FALSE;
    jpeg_start_compress(&cinfo, TRUE);
    size_t stride = (size_t)width * 3;
    while (cinfo.next_scanline < cinfo.image_height) {
        JSAMPROW row = (JSAMPROW)(pixels + stride * cinfo.next_scanline);
        jpeg_write_scanlines(&cinfo, &row, 1);
    }
    jpeg_finish_compress(&cinfo);
    jpeg_destroy_compress(&cinfo);
    return 0;
}
