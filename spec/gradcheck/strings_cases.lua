-- Gradient-check cases for the strings family: none is differentiable.
return {
  cases = {},
  nondifferentiable = {"string_length", "substr", "string_to_number", "regex_full_match", "regex_replace",
                       "string_format", "string_split", "string_case", "string_strip", "reduce_join",
                       "string_ngrams", "unicode_decode", "unicode_encode", "string_hash_bucket", "hash_table_find"},
}
