-- Gradient-check cases for the example family (tf.train.Example parsing): not differentiable.
return {
  cases = {},
  nondifferentiable = {"parse_example_feature"},
}
