-- tf.keras.utils.image_dataset_from_directory / text_dataset_from_directory:
-- class folders written here (PNG files of constant colours, so every pixel
-- after resizing is known), labels, splits, errors.
local tf = require("tf")
local S = require("spec.support")
local U = tf.keras.utils

describe("image_dataset_from_directory", function()
  local dir
  setup(function()
    dir = S.tmpdir()
    os.execute("mkdir -p " .. S.shell_quote(dir .. "/img/b_dog") .. " " .. S.shell_quote(dir .. "/img/a_cat/sub") ..
      " " .. S.shell_quote(dir .. "/img/c_empty"))
    local function png(path, h, w, c, v)
      tf.io.write_file(path, tf.io.encode_png(tf.cast(tf.fill({h, w, c}, v), tf.uint8)))
    end
    -- cat pixels 10, 20, 30 (one in a nested folder), dog pixels 200, 210; a non-image file is ignored
    png(dir .. "/img/a_cat/1.png", 4, 6, 3, 10)
    png(dir .. "/img/a_cat/2.png", 5, 5, 3, 20)
    png(dir .. "/img/a_cat/sub/3.png", 3, 3, 3, 30)
    png(dir .. "/img/b_dog/1.png", 2, 2, 1, 200)
    png(dir .. "/img/b_dog/2.PNG", 7, 3, 3, 210)
    S.spit(dir .. "/img/b_dog/notes.txt", "x")
  end)
  teardown(function() os.execute("rm -rf " .. S.shell_quote(dir)) end)

  local function all(ds)
    local xs, ys = {}, {}
    for x, y in ds do
      for i = 1, x.shape[1] do
        xs[#xs + 1] = tf.reduce_mean(x[i]):item()
        ys[#ys + 1] = y and (y.rank == 1 and y[i]:item() or y[i]:totable())
      end
    end
    return xs, ys
  end

  it("one class per folder (sorted), 1-based int labels, images resized to float32 0..255", function()
    local ds = U.image_dataset_from_directory(dir .. "/img", {image_size = {3, 2}, batch_size = 2, shuffle = false})
    assert.same({"a_cat", "b_dog", "c_empty"}, ds.class_names)
    local first = true
    for x, y in ds do
      if first then
        assert.same({2, 3, 2, 3}, x.shape:as_list())
        assert.equal(tf.float32, x.dtype)
        assert.equal(tf.int32, y.dtype)
        first = false
      end
    end
    local xs, ys = all(ds)
    assert.same({10, 20, 30, 200, 210}, xs)   -- grayscale PNG expanded to rgb
    assert.same({1, 1, 1, 2, 2}, ys)
  end)

  it("label_mode categorical and binary; color_mode grayscale", function()
    local ds = U.image_dataset_from_directory(dir .. "/img", {image_size = {2, 2}, shuffle = false,
      label_mode = "categorical", color_mode = "grayscale", class_names = {"a_cat", "b_dog", "c_empty"}})
    for x, y in ds do
      assert.equal(1, x.shape[4])
      assert.same({{1, 0, 0}, {1, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 1, 0}}, y:totable())
    end
    assert.tf_error("ValueError", "When passing `label_mode=\"binary\"`, there must be exactly 2 class_names", function()
      U.image_dataset_from_directory(dir .. "/img", {label_mode = "binary"})
    end)
  end)

  it("a seeded shuffle is reproducible; validation_split takes the end of the shuffled list", function()
    local o = {image_size = {2, 2}, batch_size = 8, seed = 7, validation_split = 0.4}
    o.subset = "both"
    local tr, va = U.image_dataset_from_directory(dir .. "/img", o)
    assert.equal(3, #tr.file_paths)
    assert.equal(2, #va.file_paths)
    local tr2 = U.image_dataset_from_directory(dir .. "/img", {image_size = {2, 2}, batch_size = 8, seed = 7,
      validation_split = 0.4, subset = "training"})
    assert.same(tr.file_paths, tr2.file_paths)
    local seen = {}
    for _, p in ipairs(tr.file_paths) do seen[p] = true end
    for _, p in ipairs(va.file_paths) do assert.is_nil(seen[p]) end
    local xs = all(va)
    assert.equal(2, #xs)
  end)

  it("crop_to_aspect_ratio keeps the centre", function()
    local d2 = dir .. "/crop/k"
    os.execute("mkdir -p " .. S.shell_quote(d2))
    -- 2x4 image: left half 0, right half 100; a square crop is the middle 2x2: mean 50
    local img = tf.concat({tf.fill({2, 2, 3}, 0), tf.fill({2, 2, 3}, 100)}, 2)
    tf.io.write_file(d2 .. "/x.png", tf.io.encode_png(tf.cast(img, tf.uint8)))
    local ds = U.image_dataset_from_directory(dir .. "/crop", {image_size = {2, 2}, crop_to_aspect_ratio = true,
      shuffle = false})
    for x in ds do assert.same({{{0, 0, 0}, {100, 100, 100}}, {{0, 0, 0}, {100, 100, 100}}}, x[1]:totable()) end
  end)

  it("Keras's errors", function()
    assert.tf_error("ValueError", "If `subset` is set, `validation_split` must be set, and inversely.", function()
      U.image_dataset_from_directory(dir .. "/img", {subset = "training"})
    end)
    assert.tf_error("ValueError", "you must provide a `seed` argument", function()
      U.image_dataset_from_directory(dir .. "/img", {validation_split = 0.2, subset = "training"})
    end)
    assert.tf_error("ValueError", "No images found in directory " .. dir .. "/img/c_empty", function()
      U.image_dataset_from_directory(dir .. "/img/c_empty")
    end)
    assert.tf_error("ValueError", "`label_mode` argument must be one of", function()
      U.image_dataset_from_directory(dir .. "/img", {label_mode = "sparse"})
    end)
    assert.tf_error("NotFoundError", "directory " .. dir .. "/nope does not exist", function()
      U.image_dataset_from_directory(dir .. "/nope")
    end)
  end)
end)

describe("text_dataset_from_directory", function()
  local dir
  setup(function()
    dir = S.tmpdir()
    os.execute("mkdir -p " .. S.shell_quote(dir .. "/neg") .. " " .. S.shell_quote(dir .. "/pos"))
    S.spit(dir .. "/neg/1.txt", "bad film")
    S.spit(dir .. "/neg/2.txt", "awful")
    S.spit(dir .. "/pos/1.txt", "great film")
  end)
  teardown(function() os.execute("rm -rf " .. S.shell_quote(dir)) end)

  it("file contents with labels; max_length truncates", function()
    local ds = U.text_dataset_from_directory(dir, {shuffle = false, max_length = 5, batch_size = 2})
    assert.same({"neg", "pos"}, ds.class_names)
    local texts, labels = {}, {}
    for x, y in ds do
      for _, s in ipairs(x:totable()) do texts[#texts + 1] = s end
      for _, l in ipairs(y:totable()) do labels[#labels + 1] = l end
    end
    assert.same({"bad f", "awful", "great"}, texts)
    assert.same({1, 1, 2}, labels)
    local b = U.text_dataset_from_directory(dir, {shuffle = false, label_mode = "binary", batch_size = false})
    local ys = {}
    for _, y in b do ys[#ys + 1] = y:totable() end
    assert.same({{0}, {0}, {1}}, ys)
  end)
end)
