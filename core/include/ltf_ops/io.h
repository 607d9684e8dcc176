/*
** ltf_ops/io.h: the io family (tf.io): files, image codecs, raw bytes,
** compression. None is differentiable; all run on the CPU only (strings).
**   read_file         filename (scalar string)   STATEFUL. Scalar string: the file's bytes.
**   write_file        filename, contents         STATEFUL, no output. Writes (replaces) the file.
**   decode_png        contents (scalar string)   i[0]: channels 0..4; i[1]: 1 for 16-bit samples as int32. [h, w, c]
**   decode_jpeg       contents                   i[0]: channels 0, 1, 3; i[1]: ratio 1, 2, 4, 8;
**                                                i[2]: bit 0 fancy upscaling, bit 1 try recover
**                                                truncated; i[3]: dct 0 fast, 1 accurate, 2 float;
**                                                f[0]: acceptable fraction. uint8 [h, w, c]
**   decode_gif        contents                   uint8 [frames, h, w, 3]
**   decode_image      contents                   i[0]: channels; i[1]: 1 16-bit (int32); i[2]: expand
**                                                animations (GIF 4-D, else its first frame 3-D).
**   encode_png        image [h, w, c] uint8, or int32 0..65535 (16-bit)   i[0]: compression -1..9. Scalar string.
**   encode_jpeg       image [h, w, c] uint8      i[0]: quality 0..100; i[1]: format 0 by channels,
**                                                1 grayscale, 2 rgb; i[2]: bit 0 progressive, bit 1
**                                                optimize_size, bit 2 chroma downsampling. Scalar string.
**   decode_raw        bytes (string [...])       i[0]: out dtype; i[1]: little endian; i[2]: fixed
**                                                length (0: none). [..., n]
**   decode_compressed bytes (string [...])       i[0]: 0 none, 1 ZLIB, 2 GZIP. Same shape.
*/
#ifndef LTF_OPS_IO_H
#define LTF_OPS_IO_H

#define LTF_OPS_IO(X)                                                  \
    X(READ_FILE, read_file) X(WRITE_FILE, write_file)                  \
    X(DECODE_PNG, decode_png) X(DECODE_JPEG, decode_jpeg)              \
    X(DECODE_GIF, decode_gif) X(DECODE_IMAGE, decode_image)            \
    X(ENCODE_PNG, encode_png) X(ENCODE_JPEG, encode_jpeg)              \
    X(DECODE_RAW, decode_raw) X(DECODE_COMPRESSED, decode_compressed)

#endif
