-- Gradient-check cases for the image family (see harness.lua): bilinear and
-- nearest resizes up and down; the gradient ops (linear in their first
-- input) through a tape's gradient with the checked tensor as
-- output_gradients.
local function resize(shape, size, method)
  return {inputs = {{shape}}, fn = function(tf, x) return tf.image.resize(x, size, {method = method}) end}
end

-- d/dg of the resize's gradient with output_gradients g (the grad op's own gradient)
local function grad_of(shape, size, method)
  return {inputs = {{{shape[1], size[1], size[2], shape[4]}}}, fn = function(tf, g)
    local x = tf.ones(shape, tf.float64)
    local t = tf.GradientTape()
    t:watch(x)
    local y = t:record(function() return tf.image.resize(x, size, {method = method}) end)
    return t:gradient(y, x, {output_gradients = g})
  end}
end

return {
  cases = {
    resize_bilinear = resize({2, 3, 2, 2}, {5, 4}),
    resize_bilinear_down = resize({1, 5, 4, 1}, {2, 3}),
    resize_bilinear_single_image = resize({3, 3, 2}, {4, 2}),
    resize_nearest = resize({2, 3, 2, 1}, {5, 3}, "nearest"),
    resize_bilinear_grad = grad_of({1, 3, 2, 2}, {4, 5}),
    resize_nearest_grad = grad_of({1, 3, 2, 1}, {2, 5}, "nearest"),
    flip_left_right = {inputs = {{{2, 3, 1}}}, fn = function(tf, x) return tf.image.flip_left_right(x) end},
  },
  -- image_transform has no gradient (docs/random.md; spec/core/image_transform_spec.lua checks the error)
  nondifferentiable = {"image_transform"},
}
