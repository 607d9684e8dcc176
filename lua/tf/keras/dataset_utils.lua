--- tf.keras.utils.image_dataset_from_directory / text_dataset_from_directory
-- (docs/data.md "Datasets from directories"): one class per subdirectory,
-- Keras's rules (sorted class names, files sorted per class, a shuffle of
-- the file list with the seed, the validation split taken from the end of
-- that list). Labels are 1-BASED class ids for label_mode "int" (luatf's
-- SparseCategoricalCrossentropy reads label k as class k), one-hot rows
-- with column k for class k for "categorical", 0/1 float32 for "binary".
return function(tf)
  tf.keras = tf.keras or {}
  tf.keras.utils = tf.keras.utils or {}
  local utils = tf.keras.utils
  if utils.image_dataset_from_directory then return end
  local internal = tf.core.internal
  local sfmt = string.format
  local function raise(kind, fmt, ...) internal.raise(kind, sfmt(fmt, ...)) end

  local IMAGE_EXT = {bmp = true, gif = true, jpeg = true, jpg = true, png = true}
  local TEXT_EXT = {txt = true}

  local function kw(opts, what, allowed)
    if opts == nil then return {} end
    if type(opts) ~= "table" then raise("TypeError", "%s: expected a keyword table, got %s", what, type(opts)) end
    for k in pairs(opts) do
      if not allowed[k] then raise("TypeError", "%s: unexpected keyword argument '%s'", what, tostring(k)) end
    end
    return opts
  end

  local function is_dir(p)
    local s = internal.fs_stat(p)
    return s and s.is_directory
  end

  local function list_sorted(dir)
    local names = internal.fs_listdir(dir)
    if type(names) ~= "table" then raise("NotFoundError", "cannot list directory %s", dir) end
    table.sort(names)
    return names
  end

  --- The files under 'dir' (recursively), sorted, with an allowed extension.
  local function files_under(dir, exts, out)
    for _, n in ipairs(list_sorted(dir)) do
      local p = dir .. "/" .. n
      if is_dir(p) then files_under(p, exts, out)
      else
        local ext = n:match("%.([^.]+)$")
        if ext and exts[ext:lower()] then out[#out + 1] = p end
      end
    end
    return out
  end

  --- Keras's index_directory + shuffle + split: paths, labels (1-based
  -- class ids or user labels), class names.
  local function index(what, directory, opts, exts, kind)
    if type(directory) ~= "string" or not is_dir(directory) then
      raise("NotFoundError", "%s: directory %s does not exist", what, tostring(directory))
    end
    local labels = opts.labels
    if labels == nil then labels = "inferred" end
    local label_mode = opts.label_mode
    if label_mode == nil then label_mode = "int" end
    if label_mode == false or label_mode == "none" then label_mode = nil end
    if label_mode ~= nil and label_mode ~= "int" and label_mode ~= "categorical" and label_mode ~= "binary" then
      raise("ValueError", "%s: `label_mode` argument must be one of \"int\", \"categorical\", \"binary\", or nil. " ..
        "Received: label_mode=%s", what, tostring(label_mode))
    end
    if labels == false then labels = nil; label_mode = nil end
    if type(labels) == "string" and labels ~= "inferred" then
      raise("ValueError", "%s: `labels` argument should be an array of labels, \"inferred\" or false. Received: " ..
        "labels=%s", what, labels)
    end
    local vs, subset = opts.validation_split, opts.subset
    if vs ~= nil and (type(vs) ~= "number" or vs <= 0 or vs >= 1) then
      raise("ValueError", "%s: `validation_split` must be between 0 and 1, received: %s", what, tostring(vs))
    end
    if (subset ~= nil) ~= (vs ~= nil) then
      raise("ValueError", "%s: If `subset` is set, `validation_split` must be set, and inversely.", what)
    end
    if subset ~= nil and subset ~= "training" and subset ~= "validation" and subset ~= "both" then
      raise("ValueError", "%s: `subset` must be either \"training\", \"validation\" or \"both\", received: %s",
        what, tostring(subset))
    end
    local shuffle = opts.shuffle
    if shuffle == nil then shuffle = true end
    if vs and shuffle and opts.seed == nil then
      raise("ValueError", "%s: If using `validation_split` and shuffling the data, you must provide a `seed` " ..
        "argument, to make sure that there is no overlap between the training and validation subset.", what)
    end
    -- classes
    local class_names = {}
    if labels == "inferred" then
      for _, n in ipairs(list_sorted(directory)) do
        if is_dir(directory .. "/" .. n) then class_names[#class_names + 1] = n end
      end
      if opts.class_names ~= nil then
        local have = {}
        for _, n in ipairs(class_names) do have[n] = true end
        local given = {}
        for i, n in ipairs(opts.class_names) do given[i] = n end
        table.sort(given)
        if #given ~= #class_names or table.concat(given, "\0") ~= table.concat(class_names, "\0") then
          raise("ValueError", "%s: The `class_names` passed did not match the names of the subdirectories of the " ..
            "target directory. Expected: {%s}, but received: {%s}", what, table.concat(class_names, ", "),
            table.concat(opts.class_names, ", "))
        end
        class_names = {table.unpack(opts.class_names)}
      end
    end
    local paths, labs = {}, {}
    if labels == "inferred" then
      for c, n in ipairs(class_names) do
        for _, p in ipairs(files_under(directory .. "/" .. n, exts, {})) do
          paths[#paths + 1] = p
          labs[#labs + 1] = c
        end
      end
    else
      paths = files_under(directory, exts, {})
      if type(labels) == "table" then
        if #labels ~= #paths then
          raise("ValueError", "%s: Expected the lengths of `labels` to match the number of files in the target " ..
            "directory. len(labels) is %d while we found %d files in directory %s.", what, #labels, #paths, directory)
        end
        labs = {table.unpack(labels)}
      end
    end
    if #paths == 0 then
      local allowed = {}
      for e in pairs(exts) do allowed[#allowed + 1] = "." .. e end
      table.sort(allowed)
      raise("ValueError", "%s: No %s found in directory %s. Allowed formats: %s", what, kind, directory,
        table.concat(allowed, ", "))
    end
    if label_mode == "binary" and labels == "inferred" and #class_names ~= 2 then
      raise("ValueError", "%s: When passing `label_mode=\"binary\"`, there must be exactly 2 class_names. " ..
        "Received: class_names=%s", what, table.concat(class_names, ", "))
    end
    -- shuffle the file list (with the seed: the same order every time)
    local seed = opts.seed
    if shuffle then
      local s = seed or math.random(0, 1 << 30)
      local state = s % 2147483647
      if state <= 0 then state = state + 2147483646 end
      for i = #paths, 2, -1 do
        state = (state * 48271) % 2147483647
        local j = state % i + 1
        paths[i], paths[j] = paths[j], paths[i]
        if #labs > 0 then labs[i], labs[j] = labs[j], labs[i] end
      end
    end
    local function split(which)
      if not vs then return paths, labs end
      local nval = math.floor(vs * #paths)
      local p, l = {}, {}
      local a, b = 1, #paths - nval
      if which == "validation" then a, b = #paths - nval + 1, #paths end
      for i = a, b do
        p[#p + 1] = paths[i]
        if #labs > 0 then l[#l + 1] = labs[i] end
      end
      return p, l
    end
    return {split = split, class_names = class_names, label_mode = labels ~= nil and label_mode or nil,
            shuffle = shuffle, seed = seed, subset = subset, nclasses = #class_names}
  end

  local function label_tensor(info, labs)
    local mode = info.label_mode
    if mode == "int" then return tf.constant(labs, tf.int32) end
    if mode == "binary" then
      local v = {}
      for i, l in ipairs(labs) do v[i] = {l - 1} end
      return tf.constant(v, tf.float32)
    end
    local n = info.nclasses
    if n == 0 then
      for _, l in ipairs(labs) do if l > n then n = l end end
    end
    return tf.one_hot(tf.constant(labs, tf.int32), n, {dtype = tf.float32})
  end

  --- Datasets for the requested subset(s): make(paths, labs) builds one.
  local function build(info, make, batch_size)
    local function one(which)
      local paths, labs = info.split(which)
      local D = tf.data.Dataset
      local ds
      if info.label_mode and #labs > 0 then
        ds = D.from_tensor_slices({tf.constant(paths), label_tensor(info, labs)})
      else
        ds = D.from_tensor_slices(tf.constant(paths))
      end
      ds = make(ds, info.label_mode ~= nil and #labs > 0)
      if info.shuffle and which ~= "validation" then
        ds = ds:shuffle((batch_size or 1) * 8, {seed = info.seed})
      end
      if batch_size then ds = ds:batch(batch_size) end
      ds.class_names = info.class_names
      ds.file_paths = paths
      return ds
    end
    if info.subset == "both" then return one("training"), one("validation") end
    return one(info.subset or "training")
  end

  local function check_batch(b, what)
    if b == nil then return 32 end
    if b == false then return nil end
    if math.type(b) ~= "integer" or b < 1 then
      raise("ValueError", "%s: batch_size must be a positive integer or false, got %s", what, tostring(b))
    end
    return b
  end

  --- tf.keras.utils.image_dataset_from_directory(directory [, {labels = "inferred",
  -- label_mode = "int", class_names =, color_mode = "rgb", batch_size = 32,
  -- image_size = {256, 256}, shuffle = true, seed =, validation_split =,
  -- subset =, interpolation = "bilinear", crop_to_aspect_ratio = false}]):
  -- (images float32 [batch, h, w, c] with values 0..255, labels). The
  -- dataset has class_names and file_paths fields.
  function utils.image_dataset_from_directory(directory, opts)
    local what = "image_dataset_from_directory"
    opts = kw(opts, what, {labels = true, label_mode = true, class_names = true, color_mode = true,
      batch_size = true, image_size = true, shuffle = true, seed = true, validation_split = true, subset = true,
      interpolation = true, follow_links = true, crop_to_aspect_ratio = true})
    local channels = ({rgb = 3, grayscale = 1, rgba = 4})[opts.color_mode or "rgb"]
    if not channels then
      raise("ValueError", "%s: `color_mode` must be one of {\"rgb\", \"rgba\", \"grayscale\"}. Received: " ..
        "color_mode=%s", what, tostring(opts.color_mode))
    end
    local size = opts.image_size or {256, 256}
    if type(size) ~= "table" or math.type(size[1]) ~= "integer" or math.type(size[2]) ~= "integer" then
      raise("ValueError", "%s: image_size must be {height, width}", what)
    end
    local method = opts.interpolation or "bilinear"
    local crop = opts.crop_to_aspect_ratio
    local batch_size = check_batch(opts.batch_size, what)
    local info = index(what, directory, opts, IMAGE_EXT, "images")
    local H, W = size[1], size[2]
    local function load(path)
      local img = tf.io.decode_image(tf.io.read_file(path), {channels = channels, expand_animations = false})
      if crop then
        local h, w = img.shape[1], img.shape[2]
        local ch = math.min(h, (w * H) // W)
        local cw = math.min(w, (h * W) // H)
        local oy, ox = (h - ch) // 2, (w - cw) // 2
        img = tf.slice(img, {oy + 1, ox + 1, 1}, {ch, cw, -1})
      end
      return tf.image.resize(img, {H, W}, {method = method})
    end
    return build(info, function(ds, labelled)
      local gen_src = ds
      return tf.data.Dataset.from_generator(function()
        local it = gen_src:iter()
        return function()
          local p, y = it()
          if p == nil then return nil end
          if labelled then return load(p:item()), y end
          return load(p:item())
        end
      end)
    end, batch_size)
  end

  --- tf.keras.utils.text_dataset_from_directory(directory [, {labels = "inferred",
  -- label_mode = "int", class_names =, batch_size = 32, max_length =,
  -- shuffle = true, seed =, validation_split =, subset =}]): (string
  -- scalars: the files' contents, truncated to max_length bytes, labels).
  function utils.text_dataset_from_directory(directory, opts)
    local what = "text_dataset_from_directory"
    opts = kw(opts, what, {labels = true, label_mode = true, class_names = true, batch_size = true,
      max_length = true, shuffle = true, seed = true, validation_split = true, subset = true, follow_links = true})
    local batch_size = check_batch(opts.batch_size, what)
    local maxlen = opts.max_length
    local info = index(what, directory, opts, TEXT_EXT, "text files")
    return build(info, function(ds, labelled)
      local function load(p)
        local t = tf.io.read_file(p)
        if maxlen then t = tf.strings.substr(t, 1, maxlen) end
        return t
      end
      if labelled then return ds:map(function(p, y) return load(p), y end) end
      return ds:map(load)
    end, batch_size)
  end
end
