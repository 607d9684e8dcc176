-- tf.keras.layers.LSTM and LSTMCell: the checks shared with GRU
-- (spec/keras/recurrent_gated_support.lua, run in this spec's environment).
local path = assert(package.searchpath("keras.recurrent_gated_support", package.path))
assert(loadfile(path, "t", _ENV))().describe("LSTM")
