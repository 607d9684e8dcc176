-- bench/io_image.lua: tf.io.decode_png over 1,000 28x28 PNGs and
-- tf.io.decode_jpeg over 100 640x480 JPEGs (the files of
-- bench/io_image_peers.py DIR make), bytes already in memory as Lua
-- strings, median of 5 passes (wall clock). Usage: lua5.4 bench/io_image.lua DIR
local tf = require("tf")
local now = tf.core.monotonic
local dir = assert(arg[1], "usage: lua5.4 bench/io_image.lua DIR")

local function files(sub, ext)
  local out = {}
  for _, p in ipairs(tf.io.gfile.glob(dir .. "/" .. sub .. "/*." .. ext)) do
    local f = assert(io.open(p, "rb"))
    out[#out + 1] = f:read("a")
    f:close()
  end
  return out
end

local function bench(blobs, decode)
  local function one()
    for i = 1, #blobs do decode(blobs[i]) end
    collectgarbage("step", 0)
  end
  one()
  local ts = {}
  for r = 1, 5 do
    local t0 = now()
    one()
    ts[r] = now() - t0
  end
  table.sort(ts)
  return ts[3]
end

local png, jpeg = files("png", "png"), files("jpeg", "jpg")
local t = bench(png, tf.io.decode_png)
print(string.format("RESULT luatf_decode_png_1000x28x28 %.3f ms (%.1f us/image)", t * 1e3, t / #png * 1e6))
t = bench(jpeg, tf.io.decode_jpeg)
print(string.format("RESULT luatf_decode_jpeg_100x640x480 %.3f ms (%.2f ms/image; dct INTEGER_FAST, TensorFlow's default)",
                    t * 1e3, t / #jpeg * 1e3))
local accurate = {dct_method = "INTEGER_ACCURATE"}
t = bench(jpeg, function(b) return tf.io.decode_jpeg(b, accurate) end)
print(string.format("RESULT luatf_decode_jpeg_100x640x480_accurate %.3f ms (%.2f ms/image; dct INTEGER_ACCURATE, as PIL)",
                    t * 1e3, t / #jpeg * 1e3))
