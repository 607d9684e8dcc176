-- tf.keras.layers.GRU and GRUCell: the checks shared with LSTM
-- (spec/keras/recurrent_gated_support.lua, run in this spec's environment).
local path = assert(package.searchpath("keras.recurrent_gated_support", package.path))
assert(loadfile(path, "t", _ENV))().describe("GRU")
