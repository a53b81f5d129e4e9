#include <png.h>
#include <setjmp.h>

/* Writes a whole image through libpng, which reports errors by longjmp: the jump lands in
 * this C frame (libpng's default error handler jumps to png_jmpbuf), never across Swift
 * frames, and becomes a return value. The write callback set with png_set_write_fn must
 * not raise libpng errors itself. Returns 0 on success, 1 when libpng failed.
 * palette/trans may be NULL (RGBA); rows are `height` rows of `stride` bytes. */
static inline int cpng_write_image(
    png_structp png, png_infop info, png_uint_32 width, png_uint_32 height, int color_type,
    const png_color *palette, int palette_count, const png_byte *trans, int trans_count,
    int level, int strategy, int filters, const png_byte *rows, size_t stride)
{
    if (setjmp(png_jmpbuf(png))) return 1;
    png_set_IHDR(png, info, width, height, 8, color_type, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    if (palette) png_set_PLTE(png, info, palette, palette_count);
    if (trans && trans_count > 0) png_set_tRNS(png, info, trans, trans_count, NULL);
    png_set_compression_level(png, level);
    png_set_compression_strategy(png, strategy);
    png_set_filter(png, 0, filters);
    png_write_info(png, info);
    for (png_uint_32 row = 0; row < height; row++) png_write_row(png, (png_const_bytep)(rows + row * stride));
    png_write_end(png, NULL);
    return 0;
}
