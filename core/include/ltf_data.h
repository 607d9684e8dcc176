/*
** ltf_data.h: readers of data files for tf.data / tf.keras.datasets.
** IDX (the MNIST format): a big-endian header, magic 0x0000TTNN (TT the
** element type, NN the number of dimensions), NN uint32 dimensions, then
** the elements, big-endian. Parsing is from memory: the caller reads (and
** decompresses) the file; nothing here touches the file system.
*/
#ifndef LTF_DATA_H
#define LTF_DATA_H
#include <stddef.h>
#include "ltf.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Parse the IDX bytes 'buf' ('size' bytes) into a new tensor '*out' (the
** caller owns it): type 0x08 gives uint8, 0x09/0x0B/0x0C int32, 0x0D
** float32, 0x0E float64; ranks 1..LTF_MAX_RANK. 'name' (the file) starts
** every error message: wrong magic or element type (InvalidArgumentError),
** a header or data shorter or longer than the header says (DataLossError). */
LTF_API ltf_status ltf_idx_read(ltf_ctx *ctx, const void *buf, size_t size, const char *name, ltf_tensor **out);

/* {==== Prefetch: batches of rows built ahead on a worker thread
** A worker thread with its own context copies the rows of each batch out of
** the source tensors (memcpy per row) into new tensors, shares them
** (ltf_tensor_share) and keeps up to 'depth' batches ready; the caller takes
** them in order. The sources are shared by ltf_prefetch_new (so they must
** be concrete CPU tensors of a numeric or bool dtype, rank >= 1, with one
** first dimension) and retained until ltf_prefetch_free. */
typedef struct ltf_prefetch ltf_prefetch;
/* Start: 'rows' ('nrows' 0-based row indices, copied) in batches of
** 'batch' rows (a smaller last batch unless 'drop_remainder'). */
LTF_API ltf_status ltf_prefetch_new(ltf_ctx *ctx, ltf_tensor *const *src, int nsrc, const int64_t *rows,
                                    int64_t nrows, int64_t batch, int drop_remainder, int depth,
                                    ltf_prefetch **out);
/* The next batch: 'out' gets one new reference per source (shared tensors,
** the caller owns them); '*done' is set (and 'out' untouched) at the end.
** A failure of the worker (out of memory) is returned here, its message in
** 'ctx' (the context given to ltf_prefetch_new). */
LTF_API ltf_status ltf_prefetch_next(ltf_prefetch *p, ltf_tensor **out, int *done);
/* Stop the worker, wait for it, release everything; NULL is a no-op. */
LTF_API void       ltf_prefetch_free(ltf_prefetch *p);
/* }==== */

/* {==== CSV (core/csv.c; docs/data.md "CSV")
** RFC 4180 text: fields separated by 'delim'; with 'use_quote' a field
** starting with '"' runs to the next lone '"' ("" is a quote; delimiters and
** line breaks inside are data). An empty unquoted field, or one equal to
** 'na_value' ('na_len' bytes, 0: none), is missing: the column's default is
** used, and a column without a default (an empty 'defaults' tensor) fails
** "Field C is required but missing in record R!". Columns are float32,
** float64, int32, int64 or string (the dtype of their default tensor, a
** scalar or a one-element vector, or empty for a required column).
** 'select_cols' (NULL: every field, whose count must then be 'ncols') lists
** 'nsel' == ncols increasing 0-based field indices. Errors are
** InvalidArgumentError naming the (0-based) record: "Expect 3 fields but
** have 2 in record 0", "Field 1 in record 4 is not a valid int32: x",
** quote errors. */
#define LTF_CSV_MAX_COLUMNS 4096
typedef struct ltf_csv_options {
    char        delim;      /* ',' */
    int         use_quote;  /* 1: quoted fields as above; 0: '"' is data */
    const char *na_value;   /* may be NULL when na_len is 0 */
    size_t      na_len;
    int         header;     /* ltf_csv_parse: skip the first record */
} ltf_csv_options;
/* decode_csv: each element of the string tensor 'records' is one record;
** 'out' gets 'ncols' new tensors of the records' shape. */
LTF_API ltf_status ltf_csv_decode(ltf_ctx *ctx, const ltf_tensor *records, ltf_tensor *const *defaults, int ncols,
                                  const int64_t *select_cols, int nsel, const ltf_csv_options *opt,
                                  ltf_tensor **out);
/* A whole CSV text 'buf' ('size' bytes): records end at LF or CRLF outside
** quotes; blank lines are skipped; 'header' skips the first record. 'out'
** gets 'ncols' new vectors of '*nrecords' elements. 'name' (the file, may
** be NULL) starts every error message. */
LTF_API ltf_status ltf_csv_parse(ltf_ctx *ctx, const char *buf, size_t size, const ltf_csv_options *opt,
                                 ltf_tensor *const *defaults, int ncols, const int64_t *select_cols, int nsel,
                                 const char *name, ltf_tensor **out, int64_t *nrecords);
/* }==== */

#ifdef __cplusplus
}
#endif
#endif
