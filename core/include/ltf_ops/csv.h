/*
** ltf_ops/csv.h: the CSV op (core/ops/csv.c; the parser is core/csv.c).
** Not differentiable.
**
**   op          inputs                                  attributes / outputs
**   decode_csv  records, select_cols, defaults...       records: string, any shape; select_cols: int64
**                                                       vector of 0-based field indices (empty: all);
**                                                       defaults: one per column, a scalar or
**                                                       one-element vector of float32/float64/int32/
**                                                       int64/string, or empty (the column is
**                                                       required). i[0]: field delimiter (a byte);
**                                                       i[1]: use_quote_delim; s: na_value. One output
**                                                       per column, records' shape, the default's dtype.
*/
#ifndef LTF_OPS_CSV_H
#define LTF_OPS_CSV_H

#define LTF_OPS_CSV(X) X(DECODE_CSV, decode_csv)

#endif
