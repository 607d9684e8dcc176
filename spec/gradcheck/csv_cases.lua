-- The csv family (core/ops/csv.c): decode_csv parses text; not differentiable.
return {
  cases = {},
  nondifferentiable = {"decode_csv"},
}
