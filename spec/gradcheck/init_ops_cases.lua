-- Gradient-check cases for the constructors (fill, range, linspace, eye):
-- they take no tensor inputs (every value is an attribute), so nothing
-- flows back through them.
return {
  cases = {},
  nondifferentiable = {"fill", "range", "linspace", "eye", "range_dyn"},
}
