-- tf.keras.utils.to_categorical: one-hot rows of 1-based class ids (the
-- labels SparseCategoricalCrossentropy reads), eagerly and in a tf.fn.
local S = require("keras.train_support")
local tf = S.tf
require("tf.keras.utils")(tf)
local U = tf.keras.utils

describe("tf.keras.utils.to_categorical", function()
  it("label k sets column k; num_classes defaults to the largest label", function()
    assert.tensor_near({{1, 0, 0}, {0, 0, 1}, {0, 1, 0}}, U.to_categorical({1, 3, 2}))
    assert.tensor_near({{0, 1, 0, 0}, {1, 0, 0, 0}}, U.to_categorical({2, 1}, 4))
    local t = U.to_categorical(tf.constant({{2}, {1}}, tf.int32), 2, "float64")
    assert.equal(tf.float64, t.dtype)
    assert.shape({2, 2}, t)
    assert.shape({2, 3, 4}, U.to_categorical({{1, 2, 3}, {4, 4, 1}}))
    assert.tensor_near({{0, 1}}, U.to_categorical{{2.0}, num_classes = 2})
  end)

  it("agrees with SparseCategoricalCrossentropy: the sparse and one-hot losses are equal", function()
    local labels = {3, 1, 2}
    local p = {{0.2, 0.3, 0.5}, {0.6, 0.3, 0.1}, {0.1, 0.8, 0.1}}
    local sparse = tf.keras.losses.SparseCategoricalCrossentropy{}(labels, p):item()
    local dense = tf.keras.losses.CategoricalCrossentropy{}(U.to_categorical(labels, 3), p):item()
    assert.near(sparse, dense, 1e-6)
  end)

  it("a label outside 1..num_classes is an InvalidArgumentError, eagerly and traced", function()
    assert.tf_error("InvalidArgumentError",
      "to_categorical: labels are 1-based class ids in 1..3, got 0 at position 2 (of the flattened labels)",
      function() U.to_categorical({1, 0, 2}, 3) end)
    assert.tf_error("InvalidArgumentError", "got 4 at position 1", function() U.to_categorical({4}, 3) end)
    local f = tf.fn(function(y) return U.to_categorical(y, 3) end)
    assert.tensor_near({{0, 0, 1}, {1, 0, 0}}, f(tf.constant({3, 1}, tf.int64)))
    assert.tf_error("InvalidArgumentError", "valid range 1..3 (label k selects logits[k]), got 4 at labels[1]",
      function() f(tf.constant({4, 1}, tf.int64)) end)
    assert.tf_error("ValueError", "to_categorical: num_classes must be a positive integer, got 0",
      function() U.to_categorical({1}, 0) end)
  end)
end)
