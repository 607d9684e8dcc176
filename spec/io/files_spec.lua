-- tf.io.read_file / write_file (ops of the io family) and tf.io.gfile
-- (lua/tf/io_gfile.lua). Expected contents are what Lua's io library reads
-- back or writes; errors name the path.
local tf = require("tf")
local support = require("support")

describe("tf.io.read_file / write_file", function()
  local dir
  before_each(function() dir = support.tmpdir() end)
  after_each(function() os.execute("rm -rf " .. support.shell_quote(dir)) end)

  it("round-trips any bytes, as a scalar string tensor", function()
    local bytes = {}
    for i = 0, 255 do bytes[#bytes + 1] = string.char(i) end
    local s = table.concat(bytes):rep(300)   -- 76800 bytes: past the first read buffer
    tf.io.write_file(dir .. "/a.bin", s)
    assert.equal(s, support.slurp(dir .. "/a.bin"))
    local t = tf.io.read_file(dir .. "/a.bin")
    assert.equal("string", t.dtype.name)
    assert.same({}, t.shape:as_list())
    assert.equal(s, t:item())
    support.spit(dir .. "/e", "")
    assert.equal("", tf.io.read_file(dir .. "/e"):item())
    tf.io.write_file(tf.constant(dir .. "/b"), tf.constant("xyz"))
    assert.equal("xyz", support.slurp(dir .. "/b"))
  end)

  it("work inside tf.fn and in a tf.data map", function()
    support.spit(dir .. "/1.txt", "one")
    support.spit(dir .. "/2.txt", "two")
    local f = tf.fn(function(p) return tf.io.read_file(p) end)
    assert.equal("one", f(tf.constant(dir .. "/1.txt")):item())
    assert.equal("two", f(tf.constant(dir .. "/2.txt")):item())   -- a file read at each call, not folded
    local w = tf.fn(function(p, c) tf.io.write_file(p, c); return tf.constant(0) end)
    w(tf.constant(dir .. "/w.txt"), tf.constant("written"))
    assert.equal("written", support.slurp(dir .. "/w.txt"))
    local ds = tf.data.Dataset.from_tensor_slices({dir .. "/1.txt", dir .. "/2.txt"}):map(tf.io.read_file)
    local got = {}
    for x in ds:iter() do got[#got + 1] = x:item() end
    assert.same({"one", "two"}, got)
  end)

  it("name the path in errors", function()
    assert.tf_error("NotFoundError", "read_file: " .. dir .. "/none: No such file or directory", tf.io.read_file,
                    dir .. "/none")
    assert.tf_error("NotFoundError", "write_file: " .. dir .. "/no/x: No such file or directory", tf.io.write_file,
                    dir .. "/no/x", "a")
    assert.tf_error("InvalidArgumentError", "read_file: 'filename' must be a scalar", tf.io.read_file,
                    tf.constant({"a", "b"}))
    assert.tf_error("TypeError", "read_file: 'filename' must be a string or a string tensor, got number",
                    tf.io.read_file, 3)
  end)
end)

describe("tf.io.gfile", function()
  local dir, gfile
  before_each(function() dir = support.tmpdir(); gfile = tf.io.gfile end)
  after_each(function() os.execute("rm -rf " .. support.shell_quote(dir)) end)

  it("makedirs, mkdir, listdir, isdir, exists, glob, stat", function()
    gfile.makedirs(dir .. "/a/b/c")
    gfile.makedirs(dir .. "/a/b/c")   -- existing: fine
    assert.is_true(gfile.isdir(dir .. "/a/b/c"))
    gfile.mkdir(dir .. "/d")
    assert.tf_error("AlreadyExistsError", "gfile.mkdir: " .. dir .. "/d: File exists", gfile.mkdir, dir .. "/d")
    support.spit(dir .. "/x.txt", "12345")
    support.spit(dir .. "/y.txt", "")
    assert.same({"a", "d", "x.txt", "y.txt"}, gfile.listdir(dir))
    assert.is_true(gfile.exists(dir .. "/x.txt"))
    assert.is_false(gfile.exists(dir .. "/z.txt"))
    assert.is_false(gfile.isdir(dir .. "/x.txt"))
    assert.same({dir .. "/x.txt", dir .. "/y.txt"}, gfile.glob(dir .. "/*.txt"))
    assert.same({}, gfile.glob(dir .. "/*.csv"))
    local s = gfile.stat(dir .. "/x.txt")
    assert.equal(5, s.length)
    assert.is_false(s.is_directory)
    assert.is_true(gfile.stat(dir .. "/a").is_directory)
    local now = os.time()
    assert.is_true(math.abs(s.mtime_nsec // 1000000000 - now) < 60)
    assert.tf_error("NotFoundError", "gfile.stat: " .. dir .. "/nope: No such file or directory", gfile.stat,
                    dir .. "/nope")
    assert.tf_error("NotFoundError", "gfile.listdir: " .. dir .. "/nope: No such file or directory", gfile.listdir,
                    dir .. "/nope")
  end)

  it("remove, rmtree, rename (overwrite), copy", function()
    support.spit(dir .. "/f", "F")
    support.spit(dir .. "/g", "G")
    assert.tf_error("AlreadyExistsError", "gfile.rename: " .. dir .. "/g: File exists", gfile.rename, dir .. "/f",
                    dir .. "/g")
    gfile.rename(dir .. "/f", dir .. "/g", true)
    assert.equal("F", support.slurp(dir .. "/g"))
    assert.is_false(gfile.exists(dir .. "/f"))
    gfile.rename(dir .. "/g", dir .. "/h", {overwrite = false})
    assert.equal("F", support.slurp(dir .. "/h"))
    assert.tf_error("NotFoundError", "gfile.rename: " .. dir .. "/g: No such file or directory", gfile.rename,
                    dir .. "/g", dir .. "/i")
    gfile.copy(dir .. "/h", dir .. "/k")
    assert.equal("F", support.slurp(dir .. "/k"))
    assert.tf_error("AlreadyExistsError", "gfile.copy: " .. dir .. "/k: file exists", gfile.copy, dir .. "/h",
                    dir .. "/k")
    gfile.remove(dir .. "/k")
    assert.is_false(gfile.exists(dir .. "/k"))
    assert.tf_error("NotFoundError", "gfile.remove: " .. dir .. "/k: No such file or directory", gfile.remove,
                    dir .. "/k")
    gfile.makedirs(dir .. "/t/u/v")
    support.spit(dir .. "/t/u/v/w", "w")
    support.spit(dir .. "/t/x", "x")
    local walked = {}
    for d, dirs, files in gfile.walk(dir .. "/t") do
      walked[#walked + 1] = d:sub(#dir + 2) .. ":" .. table.concat(dirs, ",") .. ":" .. table.concat(files, ",")
    end
    assert.same({"t:u:x", "t/u:v:", "t/u/v::w"}, walked)
    gfile.rmtree(dir .. "/t")
    assert.is_false(gfile.exists(dir .. "/t"))
  end)

  it("GFile reads, writes, iterates and closes", function()
    do
      local f <close> = gfile.GFile(dir .. "/l.txt", "w")
      f:write("one\n")
      f:write(tf.constant("two\nthree"))
    end   -- closed (flushed) here
    assert.equal("one\ntwo\nthree", support.slurp(dir .. "/l.txt"))
    local f = gfile.GFile(dir .. "/l.txt")
    assert.equal("one\n", f:readline())
    assert.equal("tw", f:read(2))
    assert.equal(6, f:tell())
    assert.equal("o\nthree", f:read())
    assert.equal("", f:read())
    assert.equal("", f:readline())
    f:seek(0)
    assert.same({"one\n", "two\n", "three"}, f:readlines())
    f:seek(4)
    local got = {}
    for line in f:lines() do got[#got + 1] = line end
    assert.same({"two\n", "three"}, got)
    f:seek(0)
    got = {}
    for line in f do got[#got + 1] = line end
    assert.same({"one\n", "two\n", "three"}, got)
    assert.equal(13, f:size())
    f:close()
    assert.tf_error("FailedPreconditionError", "GFile.read: " .. dir .. "/l.txt is closed", f.read, f)
    local a = gfile.GFile(dir .. "/l.txt", "a")
    a:write("!")
    a:close()
    assert.equal("one\ntwo\nthree!", support.slurp(dir .. "/l.txt"))
    assert.tf_error("NotFoundError", "gfile.GFile: " .. dir .. "/none: No such file or directory", gfile.GFile,
                    dir .. "/none")
    assert.tf_error("ValueError", "gfile.GFile: invalid mode 'x'", gfile.GFile, dir .. "/l.txt", "x")
  end)
end)
