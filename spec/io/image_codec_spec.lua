-- tf.io image codecs (core/io_image.c over libpng, libjpeg-turbo, giflib)
-- against Python's PIL (python3-pil, spec/io/pil_dump.py) on the images of
-- spec/fixtures/images/ (made once by make_images.py), the GIF against the
-- palette indexes it was drawn from (anim.json) composited by hand as
-- TensorFlow's decoder does; round trips; bad data; size limits.
local tf = require("tf")
local cjson = require("cjson")
local support = require("support")

local FIX = "spec/fixtures/images/"

local function pil(path, mode, scale)
  local cmd = "/usr/bin/python3 spec/io/pil_dump.py " .. support.shell_quote(path) .. " " .. (mode or "-") ..
              (scale and (" " .. scale) or "")
  local p = assert(io.popen(cmd))
  local out = p:read("a")
  p:close()
  return cjson.decode(out)
end

local function flat(t)
  return support.flatten(t:totable())
end

local function read(name) return support.slurp(FIX .. name) end

local function max_diff(a, b)
  assert.equal(#a, #b)
  local m = 0
  for i = 1, #a do m = math.max(m, math.abs(a[i] - b[i])) end
  return m
end

describe("tf.io.decode_png", function()
  local cases = {
    {"grey.png", "L", 1}, {"grey_alpha.png", "LA", 2}, {"rgb.png", "RGB", 3}, {"rgba.png", "RGBA", 4},
    {"palette.png", "RGB", 3}, {"palette_trns.png", "RGBA", 4}, {"bilevel.png", "L", 1},
  }
  for _, c in ipairs(cases) do
    it("decodes " .. c[1] .. " as PIL does (" .. c[3] .. " channels)", function()
      local ref = pil(FIX .. c[1], c[2])
      local x = tf.io.decode_png(read(c[1]))
      assert.equal("uint8", x.dtype.name)
      assert.same({ref.h, ref.w, c[3]}, x.shape:as_list())
      assert.same(ref.frames[1], flat(x))
    end)
  end

  it("converts channels as asked (gray <-> RGB, alpha added as 255 or dropped)", function()
    local g = tf.io.decode_png(read("grey.png"), 3)
    assert.same(pil(FIX .. "grey.png", "RGB").frames[1], flat(g))
    local a = tf.io.decode_png(read("rgb.png"), {channels = 4})
    assert.same(pil(FIX .. "rgb.png", "RGBA").frames[1], flat(a))
    local s = tf.io.decode_png(read("rgba.png"), {channels = 3})
    assert.same(pil(FIX .. "rgba.png", "RGB").frames[1], flat(s))
    -- RGB to gray: libpng's sRGB coefficients (0.2126, 0.7152, 0.0722), within 1
    local rgb = pil(FIX .. "rgb.png", "RGB").frames[1]
    local y = flat(tf.io.decode_png(read("rgb.png"), 1))
    assert.equal(#rgb // 3, #y)
    for i = 1, #y do
      local r, gg, b = rgb[3 * i - 2], rgb[3 * i - 1], rgb[3 * i]
      assert.is_true(math.abs(y[i] - (0.2126 * r + 0.7152 * gg + 0.0722 * b)) <= 1)
    end
  end)

  it("gives 16-bit samples as int32 with dtype uint16, 8-bit files scaled by 257", function()
    local ref = pil(FIX .. "grey16.png")
    local x = tf.io.decode_png(read("grey16.png"), {dtype = "uint16"})
    assert.equal("int32", x.dtype.name)
    assert.same(ref.frames[1], flat(x))
    -- as uint8: libpng strips the low byte
    local lo = flat(tf.io.decode_png(read("grey16.png")))
    for i, v in ipairs(ref.frames[1]) do assert.equal(v >> 8, lo[i]) end
    local g = flat(tf.io.decode_png(read("grey.png"), {dtype = tf.int32}))
    for i, v in ipairs(pil(FIX .. "grey.png").frames[1]) do assert.equal(v * 257, g[i]) end
  end)
end)

describe("tf.io.decode_jpeg", function()
  for _, name in ipairs({"baseline.jpg", "progressive.jpg", "noss.jpg", "grey.jpg"}) do
    it("decodes " .. name .. " as PIL does (INTEGER_ACCURATE, fancy upscaling)", function()
      local ref = pil(FIX .. name)
      local c = ref.mode == "L" and 1 or 3
      local x = tf.io.decode_jpeg(read(name), {dct_method = "INTEGER_ACCURATE"})
      assert.same({ref.h, ref.w, c}, x.shape:as_list())
      assert.same(ref.frames[1], flat(x))
      -- TensorFlow's default DCT (INTEGER_FAST) is close, not equal
      local fast = flat(tf.io.decode_jpeg(read(name)))
      assert.is_true(max_diff(fast, ref.frames[1]) <= 16)
    end)
  end

  it("converts channels and scales by ratio as libjpeg does", function()
    local g = tf.io.decode_jpeg(read("baseline.jpg"), {channels = 1, dct_method = "INTEGER_ACCURATE"})
    assert.same({17, 33, 1}, g.shape:as_list())
    local ref_l = pil(FIX .. "baseline.jpg", "L")
    -- libjpeg's gray output is the decoded Y (PIL converts the decoded RGB to L): within 4
    assert.is_true(max_diff(flat(g), ref_l.frames[1]) <= 4)
    local rgb = tf.io.decode_jpeg(read("grey.jpg"), {channels = 3, dct_method = "INTEGER_ACCURATE"})
    assert.same(pil(FIX .. "grey.jpg", "RGB").frames[1], flat(rgb))
    local half = pil(FIX .. "baseline.jpg", nil, 2)
    local x = tf.io.decode_jpeg(read("baseline.jpg"), {ratio = 2, dct_method = "INTEGER_ACCURATE"})
    assert.same({half.h, half.w, 3}, x.shape:as_list())
    assert.same({9, 17, 3}, x.shape:as_list())
    assert.same(half.frames[1], flat(x))
    assert.tf_error("InvalidArgumentError", "decode_jpeg: 'ratio' must be 1, 2, 4 or 8, got 3", tf.io.decode_jpeg,
                    read("baseline.jpg"), {ratio = 3})
    assert.tf_error("InvalidArgumentError", "decode_jpeg: 'channels' must be 0, 1 or 3, got 4", tf.io.decode_jpeg,
                    read("baseline.jpg"), {channels = 4})
    assert.tf_error("ValueError", "decode_jpeg: 'dct_method' must be", tf.io.decode_jpeg, read("baseline.jpg"),
                    {dct_method = "SLOW"})
  end)

  it("refuses truncated data unless try_recover_truncated", function()
    local full = read("baseline.jpg")
    local sos = full:find("\255\218", 1, true)   -- the scan starts here
    local cut = full:sub(1, sos + (#full - sos) * 9 // 10)
    assert.tf_error("InvalidArgumentError", "decode_jpeg: invalid JPEG data: premature end of data (truncated file)",
                    tf.io.decode_jpeg, cut)
    local x = tf.io.decode_jpeg(cut, {try_recover_truncated = true, acceptable_fraction = 0.5,
                                      dct_method = "INTEGER_ACCURATE"})
    assert.same({17, 33, 3}, x.shape:as_list())
    -- the first 8-row band decoded before the cut is the full decode's
    local a = flat(x)
    local b = flat(tf.io.decode_jpeg(full, {dct_method = "INTEGER_ACCURATE"}))
    for i = 1, 8 * 33 * 3 do assert.equal(b[i], a[i]) end
    -- the rows past the cut are zeros
    local zero_from = 8 * 33 * 3 + 1
    while zero_from > 1 and a[zero_from - 1] == 0 do zero_from = zero_from - 1 end
    for i = #a - 33 * 3 + 1, #a do assert.equal(0, a[i]) end
    assert.tf_error("InvalidArgumentError", "decode_jpeg: invalid JPEG data: premature end of data (truncated file)",
                    tf.io.decode_jpeg, cut, {try_recover_truncated = true, acceptable_fraction = 1})
  end)
end)

describe("tf.io.decode_gif", function()
  it("gives every frame, composited as TensorFlow does", function()
    local spec = cjson.decode(read("anim.json"))
    local x = tf.io.decode_gif(read("anim.gif"))
    assert.equal("uint8", x.dtype.name)
    assert.same({4, spec.height, spec.width, 3}, x.shape:as_list())
    -- by hand: each frame over the previous; the transparent index keeps it
    local want, prev = {}, nil
    for k, f in ipairs(spec.frames) do
      local cur = {}
      for i, idx in ipairs(f) do
        for ch = 1, 3 do
          local v
          if idx == spec.transparent[k] then v = prev and prev[3 * (i - 1) + ch] or 0
          else v = spec.palette[3 * idx + ch] end
          cur[3 * (i - 1) + ch] = v
        end
      end
      for _, v in ipairs(cur) do want[#want + 1] = v end
      prev = cur
    end
    assert.same(want, flat(x))
    -- the transparent pixels of frame 3 really kept frame 2's colours
    local got = x:totable()
    assert.same(got[2][1][1], got[3][1][1])
    -- PIL draws frames 1, 2 and 4 the same way
    local ref = pil(FIX .. "anim.gif", "RGB")
    for _, k in ipairs({1, 2, 4}) do assert.same(ref.frames[k], flat(x[k])) end
  end)
end)

describe("tf.io.decode_image", function()
  it("sniffs the format", function()
    assert.same(flat(tf.io.decode_png(read("rgba.png"))), flat(tf.io.decode_image(read("rgba.png"))))
    assert.same(flat(tf.io.decode_jpeg(read("baseline.jpg"))), flat(tf.io.decode_image(read("baseline.jpg"))))
    assert.same({4, 6, 9, 3}, tf.io.decode_image(read("anim.gif")).shape:as_list())
    local first = tf.io.decode_image(read("anim.gif"), {expand_animations = false})
    assert.same({6, 9, 3}, first.shape:as_list())
    assert.same(flat(tf.io.decode_gif(read("anim.gif"))[1]), flat(first))
    local bmp = tf.io.decode_image(read("rgb.bmp"))
    assert.same(pil(FIX .. "rgb.bmp", "RGB").frames[1], flat(bmp))
    local f = tf.io.decode_image(read("grey.png"), {dtype = tf.float32})
    assert.equal("float32", f.dtype.name)
    local g = flat(tf.io.decode_png(read("grey.png")))
    local ff = flat(f)
    for i = 1, #g do assert.near(g[i] / 255, ff[i], 1e-6) end
    assert.tf_error("InvalidArgumentError", "decode_image: unknown image format: the contents are not PNG, JPEG, GIF "
                    .. "or BMP data", tf.io.decode_image, "hello")
  end)

  it("works inside tf.fn and a tf.data map", function()
    local f = tf.fn(function(s) return tf.io.decode_image(s, {channels = 3, expand_animations = false}) end)
    local x = f(tf.constant(read("rgb.png")))
    assert.same(flat(tf.io.decode_png(read("rgb.png"))), flat(x))
    local ds = tf.data.Dataset.from_tensor_slices({FIX .. "grey.png", FIX .. "rgb.png"}):map(function(p)
      return tf.io.decode_png(tf.io.read_file(p), {channels = 3})
    end)
    local shapes = {}
    for e in ds:iter() do shapes[#shapes + 1] = e.shape:as_list() end
    assert.same({{7, 13, 3}, {7, 13, 3}}, shapes)
  end)
end)

describe("tf.io.encode_png / encode_jpeg", function()
  local dir
  before_each(function() dir = support.tmpdir() end)
  after_each(function() os.execute("rm -rf " .. support.shell_quote(dir)) end)

  it("round-trip PNG exactly, and PIL reads the files", function()
    for _, name in ipairs({"grey.png", "grey_alpha.png", "rgb.png", "rgba.png"}) do
      local x = tf.io.decode_png(read(name))
      for _, level in ipairs({-1, 0, 9}) do
        local bytes = tf.io.encode_png(x, {compression = level})
        assert.same(flat(x), flat(tf.io.decode_png(bytes)))
        support.spit(dir .. "/o.png", bytes:item())
        assert.same(flat(x), pil(dir .. "/o.png").frames[1])
      end
    end
    local w = tf.io.decode_png(read("grey16.png"), {dtype = "uint16"})
    local b16 = tf.io.encode_png(w)
    assert.same(flat(w), flat(tf.io.decode_png(b16, {dtype = "uint16"})))
    support.spit(dir .. "/o16.png", b16:item())
    assert.same(flat(w), pil(dir .. "/o16.png").frames[1])
    assert.tf_error("InvalidArgumentError", "encode_png: 'compression' must be -1..9, got 10", tf.io.encode_png, w,
                    {compression = 10})
    assert.tf_error("InvalidArgumentError", "encode_png: int32 samples are 16-bit and must be 0..65535, got 70000",
                    tf.io.encode_png, tf.constant({{{70000}}}))
    assert.tf_error("TypeError", "encode_png: 'image' has dtype float32, expected uint8 or int32", tf.io.encode_png,
                    tf.zeros({2, 2, 3}))
    assert.tf_error("InvalidArgumentError", "encode_png: 'image' must be 3-D [height, width, channels], got shape (2, 2)",
                    tf.io.encode_png, tf.zeros({2, 2}, tf.uint8))
  end)

  it("encode JPEG that decodes as PIL decodes it, close to the source", function()
    local x = tf.io.decode_jpeg(read("noss.jpg"), {dct_method = "INTEGER_ACCURATE"})
    for _, o in ipairs({{}, {quality = 50}, {progressive = true}, {optimize_size = true},
                        {chroma_downsampling = false, quality = 100}}) do
      local bytes = tf.io.encode_jpeg(x, next(o) and o or nil)
      support.spit(dir .. "/o.jpg", bytes:item())
      local back = flat(tf.io.decode_jpeg(bytes, {dct_method = "INTEGER_ACCURATE"}))
      assert.same(pil(dir .. "/o.jpg").frames[1], back)
      if o.quality == 100 then assert.is_true(max_diff(back, flat(x)) <= 3) end
    end
    local smaller = #tf.io.encode_jpeg(x, {quality = 10}):item()
    assert.is_true(smaller < #tf.io.encode_jpeg(x, {quality = 95}):item())
    local g = tf.io.decode_jpeg(read("grey.jpg"))
    local gb = tf.io.encode_jpeg(g, {format = "grayscale"})
    assert.same({17, 33, 1}, tf.io.decode_jpeg(gb).shape:as_list())
    assert.tf_error("InvalidArgumentError", "encode_jpeg: format 'rgb' needs 3 channels, got 1", tf.io.encode_jpeg,
                    g, {format = "rgb"})
    assert.tf_error("InvalidArgumentError", "encode_jpeg: 'quality' must be 0..100, got 101", tf.io.encode_jpeg, x,
                    {quality = 101})
  end)
end)

describe("bad image data", function()
  local function crc32(s)
    local crc = 0xffffffff
    for i = 1, #s do
      crc = crc ~ s:byte(i)
      for _ = 1, 8 do crc = (crc >> 1) ~ (0xedb88320 & -(crc & 1)) end
    end
    return crc ~ 0xffffffff
  end

  it("is an InvalidArgumentError naming the format and the reason", function()
    local png = read("rgb.png")
    assert.tf_error("InvalidArgumentError", "decode_png: invalid PNG data: not a PNG signature", tf.io.decode_png,
                    "GIF89a")
    assert.tf_error("InvalidArgumentError", "decode_png: invalid PNG data: truncated", tf.io.decode_png,
                    png:sub(1, 40))
    local flipped = png:sub(1, 29) .. string.char(png:byte(30) ~ 0xff) .. png:sub(31)   -- IHDR's CRC
    assert.tf_error("InvalidArgumentError", "decode_png: invalid PNG data: IHDR: CRC error", tf.io.decode_png, flipped)
    assert.tf_error("InvalidArgumentError", "decode_jpeg: invalid JPEG data: not a JPEG signature", tf.io.decode_jpeg,
                    png)
    assert.tf_error("InvalidArgumentError", "decode_gif: invalid GIF data", tf.io.decode_gif, "GIF89a\1\0")
    local gif = read("anim.gif")
    assert.tf_error("InvalidArgumentError", "decode_gif: invalid GIF data", tf.io.decode_gif, gif:sub(1, #gif // 2))
    assert.tf_error("InvalidArgumentError", "decode_png: 'channels' must be 0, 1, 2, 3 or 4, got 5", tf.io.decode_png,
                    png, 5)
    assert.tf_error("InvalidArgumentError", "decode_png: 'contents' must be a scalar", tf.io.decode_png,
                    tf.constant({png, png}))
  end)

  it("with huge declared dimensions is refused before allocating", function()
    local ihdr = "IHDR" .. string.pack(">I4I4BBBBB", 60000, 60000, 8, 6, 0, 0, 0)
    local png = "\137PNG\r\n\26\n" .. string.pack(">I4", 13) .. ihdr .. string.pack(">I4", crc32(ihdr))
    assert.tf_error("InvalidArgumentError", "decode_png: image of 1 frame(s) of 60000 x 60000 x 4 is over the limit "
                    .. "(sides at most 65536, at most 1073741824 bytes decoded)", tf.io.decode_png, png)
    local jpg = read("baseline.jpg")
    local sof = jpg:find("\255\192", 1, true)
    local big = jpg:sub(1, sof + 4) .. string.pack(">I2I2", 65000, 65000) .. jpg:sub(sof + 9)
    assert.tf_error("InvalidArgumentError", "decode_jpeg: image of 1 frame(s) of 65000 x 65000 x 3 is over the limit",
                    tf.io.decode_jpeg, big)
    local gif = read("anim.gif")
    local huge = gif:sub(1, 6) .. string.pack("<I2I2", 65535, 65535) .. gif:sub(11)
    assert.tf_error("InvalidArgumentError", "decode_gif: image of 1 frame(s) of 65535 x 65535 x 3 is over the limit",
                    tf.io.decode_gif, huge)
  end)
end)
