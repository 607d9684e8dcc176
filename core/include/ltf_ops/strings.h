/*
** ltf_ops/strings.h: string ops for data pipelines (ORDER OP within the
** family). None is differentiable. Positions are 1-BASED; dtype attributes
** hold dtype + 1 (0: the default).
**
**   op                inputs                   attributes / output
**   string_length     input                    i[0]: unit (0 BYTE, 1 UTF8_CHAR). int32 of input's shape.
**   substr            input, pos, len          pos/len: int32 or int64, scalars or input's shape; pos is
**                                              1-BASED (1..n+1, or -n..-1 from the end), len >= 0 (cut at
**                                              the end); i[0]: unit. An out-of-range pos is an error.
**   string_to_number  input                    i[0]: out dtype + 1 (0: float32; float64, int32, int64).
**                                              The whole string must parse (spaces around allowed).
**   regex_full_match  input, pattern           pattern: scalar string (PCRE2, UTF-8). bool: the whole
**                                              element matches.
**   regex_replace     input, pattern, rewrite  scalars; i[0]: replace_global. Rewrite as TensorFlow's
**                                              (RE2): \0..\9 groups, \\ a backslash.
**   string_format     template, inputs...      template: scalar string; s: placeholder ("" = "{}");
**                                              i[0]: summarize (-1: everything). Scalar string.
**   string_split      input, pad               input: rank 0 or 1; pad: scalar string. s: separator
**                                              ("" = runs of whitespace, empty parts dropped); i[0]:
**                                              maxsplit (-1: no limit). Outputs: parts padded with 'pad'
**                                              [..., max parts] and the number of parts int32 [...].
**                                              The padded length is decided when the op runs.
**   string_case       input                    i[0]: 0 lower, 1 upper; i[1]: 0 ASCII only, 1 UTF-8 (Latin-1,
**                                              Latin Extended-A, Greek, Cyrillic letters too).
**   string_strip      input                    ASCII whitespace removed at both ends.
**   reduce_join       input, separator         i[0]: the 0-based axis joined (-1: every axis, row-major);
**                                              i[1]: keepdims. separator: scalar string.
**   string_ngrams     data, lengths, widths,   data [..., n] string; lengths int32 of data's leading shape
**                     separator, left_pad,     (or a scalar -1: every row full); widths int32 vector;
**                     right_pad                i[0]: pad width (-1: width - 1; capped at width - 1);
**                                              i[1]: preserve_short_sequences. Outputs: the n-grams padded
**                                              with "" [..., max n-grams] and their number int32 [...].
**   unicode_decode    input                    i[0]: errors (0 strict, 1 replace, 2 ignore); i[1]:
**                                              replacement code point; i[2]: 1 = split (the characters as
**                                              strings, their original bytes) else int32 code points;
**                                              i[3]: the pad code point (split: s, the pad string).
**                                              Outputs: padded [..., max chars]
**                                              and the count int32 [...].
**   unicode_encode    code_points, lengths     int32 [..., n]; lengths int32 [...] or a scalar -1 (all n).
**                                              i[0]: errors; i[1]: replacement. String [...].
**   string_hash_bucket input (string/int)      i[0]: num_buckets >= 1; i[1]: 0 fast (farmhash
**                                              Fingerprint64), 1 strong (SipHash-2-4 keyed by i[2], i[3]).
**                                              int64 of input's shape. Integers hash their decimal text.
**   hash_table_find   keys, values, input,     keys [K] string/int32/int64, values [K], input of keys'
**                     default                  dtype; default: scalar of values' dtype. i[0]: 0, or the
**                                              number of OOV buckets: a missing key gives K + Fingerprint64
**                                              (the key, integers as decimal text) mod i[0] (int64 out).
*/
#ifndef LTF_OPS_STRINGS_H
#define LTF_OPS_STRINGS_H

#define LTF_OPS_STRINGS(X)                                             \
    X(STRING_LENGTH, string_length) X(SUBSTR, substr)                  \
    X(STRING_TO_NUMBER, string_to_number)                              \
    X(REGEX_FULL_MATCH, regex_full_match) X(REGEX_REPLACE, regex_replace) \
    X(STRING_FORMAT, string_format) X(STRING_SPLIT, string_split)      \
    X(STRING_CASE, string_case) X(STRING_STRIP, string_strip)          \
    X(REDUCE_JOIN, reduce_join) X(STRING_NGRAMS, string_ngrams)        \
    X(UNICODE_DECODE, unicode_decode) X(UNICODE_ENCODE, unicode_encode) \
    X(STRING_HASH_BUCKET, string_hash_bucket) X(HASH_TABLE_FIND, hash_table_find)

#endif
