--- tf.io.gfile: the file system as TensorFlow's gfile module has it (local
-- paths): exists, glob, listdir, makedirs, mkdir, remove, rmtree, rename,
-- stat, copy, isdir, walk, and GFile (read, write, readline, readlines,
-- lines, seek, tell, flush, close; `for line in f do`, `local f <close> =`).
-- The primitives are tf.core.internal.fs_* (bindings/io.c). Errors name
-- the path: NotFoundError for a missing one. See docs/io.md.
return function(tf)
  local internal = tf.core.internal
  local gfile = tf.io.gfile or {}
  tf.io.gfile = gfile

  local function raise(level, kind, fmt, ...)
    tf.errors.raise(kind, string.format(fmt, ...), level + 1)
  end

  local function path_arg(op, p, level)
    if type(p) ~= "string" then
      if tf.is_tensor(p) then return p:item() end
      raise((level or 2) + 1, "TypeError", "gfile.%s: path must be a string, got %s", op, type(p))
    end
    return p
  end

  -- r, message, kind from a primitive: raise with the op's name
  local function check(op, ok, msg, kind)
    if ok == nil then raise(3, kind, "gfile.%s: %s", op, msg) end
    return ok
  end

  function gfile.exists(path)
    return internal.fs_stat(path_arg("exists", path)) ~= nil
  end

  function gfile.isdir(path)
    local s = internal.fs_stat(path_arg("isdir", path))
    return s ~= nil and s.is_directory
  end

  --- {length =, mtime_nsec =, is_directory =} (TensorFlow's FileStatistics).
  function gfile.stat(path)
    path = path_arg("stat", path)
    return check("stat", internal.fs_stat(path))
  end

  --- Entry names of a directory (sorted; no "." or "..").
  function gfile.listdir(path)
    path = path_arg("listdir", path)
    local s = internal.fs_stat(path)
    if s and not s.is_directory then raise(2, "NotFoundError", "gfile.listdir: %s: not a directory", path) end
    return check("listdir", internal.fs_listdir(path))
  end

  --- Paths matching a pattern (or each of a list of patterns), sorted.
  function gfile.glob(pattern)
    local pats = type(pattern) == "table" and not tf.is_tensor(pattern) and pattern or {pattern}
    local out, seen = {}, {}
    for _, p in ipairs(pats) do
      for _, m in ipairs(internal.fs_glob(path_arg("glob", p))) do
        if not seen[m] then seen[m] = true; out[#out + 1] = m end
      end
    end
    table.sort(out)
    return out
  end

  function gfile.mkdir(path)
    path = path_arg("mkdir", path)
    check("mkdir", internal.fs_mkdir(path))
  end

  --- Make a directory and its missing parents; an existing directory is fine.
  function gfile.makedirs(path)
    path = path_arg("makedirs", path)
    local prefix = path:sub(1, 1) == "/" and "/" or ""
    local cur = prefix
    for part in path:gmatch("[^/]+") do
      cur = (cur == "" or cur == "/") and cur .. part or cur .. "/" .. part
      local s = internal.fs_stat(cur)
      if s == nil then
        local ok, msg, kind = internal.fs_mkdir(cur)
        if ok == nil and kind ~= "AlreadyExistsError" then raise(2, kind, "gfile.makedirs: %s", msg) end
      elseif not s.is_directory then
        raise(2, "FailedPreconditionError", "gfile.makedirs: %s: exists and is not a directory", cur)
      end
    end
  end

  --- Delete a file (a directory: rmtree).
  function gfile.remove(path)
    path = path_arg("remove", path)
    check("remove", internal.fs_remove(path))
  end

  --- Delete a directory and everything under it.
  function gfile.rmtree(path)
    path = path_arg("rmtree", path)
    local s = check("rmtree", internal.fs_stat(path))
    if not s.is_directory then
      check("rmtree", internal.fs_remove(path))
      return
    end
    for _, name in ipairs(check("rmtree", internal.fs_listdir(path))) do
      local p = path .. "/" .. name
      local st = internal.fs_stat(p)
      if st and st.is_directory then gfile.rmtree(p) else check("rmtree", internal.fs_remove(p)) end
    end
    check("rmtree", internal.fs_rmdir(path))
  end

  --- Rename (move) src to dst; an existing dst is an error unless overwrite.
  -- gfile.rename(src, dst [, overwrite] [, {overwrite = false}])
  function gfile.rename(src, dst, overwrite)
    if type(overwrite) == "table" then overwrite = overwrite.overwrite end
    src, dst = path_arg("rename", src), path_arg("rename", dst)
    check("rename", internal.fs_rename(src, dst, overwrite and true or false))
  end

  --- Copy a file; an existing dst is an error unless overwrite.
  function gfile.copy(src, dst, overwrite)
    if type(overwrite) == "table" then overwrite = overwrite.overwrite end
    src, dst = path_arg("copy", src), path_arg("copy", dst)
    local s = check("copy", internal.fs_stat(src))
    if s.is_directory then raise(2, "FailedPreconditionError", "gfile.copy: %s: is a directory", src) end
    if not overwrite and internal.fs_stat(dst) then
      raise(2, "AlreadyExistsError", "gfile.copy: %s: file exists", dst)
    end
    local fi = assert(io.open(src, "rb"))
    local data = fi:read("a")
    fi:close()
    local fo, err = io.open(dst, "wb")
    if not fo then raise(2, "NotFoundError", "gfile.copy: %s", err) end
    fo:write(data)
    fo:close()
  end

  --- Walk a directory tree top-down: an iterator of (dirpath, dirnames, filenames).
  function gfile.walk(top)
    top = path_arg("walk", top)
    local stack = {top}
    return function()
      local d = table.remove(stack, 1)
      if d == nil then return nil end
      local names = internal.fs_listdir(d) or {}
      local dirs, files = {}, {}
      for _, n in ipairs(names) do
        local s = internal.fs_stat(d .. "/" .. n)
        if s and s.is_directory then dirs[#dirs + 1] = n else files[#files + 1] = n end
      end
      for i = #dirs, 1, -1 do table.insert(stack, 1, d .. "/" .. dirs[i]) end
      return d, dirs, files
    end
  end

  -- {==== GFile
  local GFile = {}
  GFile.__index = GFile
  GFile.__name = "tf.io.gfile.GFile"

  local MODES = {r = "rb", rb = "rb", w = "wb", wb = "wb", a = "ab", ab = "ab", ["r+"] = "r+b", ["w+"] = "w+b",
                 ["a+"] = "a+b", ["rb+"] = "r+b", ["wb+"] = "w+b", ["ab+"] = "a+b"}

  --- Open a file: mode "r" (default), "w", "a" ("b" and "+" accepted).
  function gfile.GFile(path, mode)
    if type(mode) == "table" then mode = mode.mode end
    mode = mode or "r"
    path = path_arg("GFile", path)
    local m = MODES[mode]
    if not m then raise(2, "ValueError", "gfile.GFile: invalid mode '%s'", tostring(mode)) end
    local f, err = io.open(path, m)
    if not f then
      local kind = err and err:find("No such file") and "NotFoundError" or "PermissionDeniedError"
      if kind ~= "NotFoundError" and err and err:find("Is a directory") then kind = "FailedPreconditionError" end
      raise(2, kind == "PermissionDeniedError" and "FailedPreconditionError" or kind, "gfile.GFile: %s: %s", path,
            (err or ""):gsub("^[^:]*: ", ""))
    end
    return setmetatable({name = path, mode = mode, _f = f}, GFile)
  end
  gfile.Open = gfile.GFile

  local function live(self, op)
    if not self._f then raise(3, "FailedPreconditionError", "GFile.%s: %s is closed", op, self.name) end
    return self._f
  end

  --- n bytes (all the rest when n is nil or negative); "" at the end.
  function GFile:read(n)
    local f = live(self, "read")
    if n == nil or n < 0 then return f:read("a") end
    return f:read(n) or ""
  end

  --- The next line with its "\n" ("" at the end).
  function GFile:readline()
    return live(self, "readline"):read("L") or ""
  end

  function GFile:readlines()
    local f, out = live(self, "readlines"), {}
    for l in f:lines("L") do out[#out + 1] = l end
    return out
  end

  --- Iterator over the lines, each with its "\n": `for line in f:lines() do`.
  function GFile:lines()
    local f = live(self, "lines")
    return function() return f:read("L") end
  end

  -- `for line in f do`: the file is its own iterator
  function GFile:__call()
    return live(self, "next"):read("L")
  end

  function GFile:write(s)
    if tf.is_tensor(s) then s = s:item() end
    live(self, "write"):write(s)
  end

  function GFile:seek(offset, whence)
    local w = ({[0] = "set", [1] = "cur", [2] = "end"})[whence or 0] or whence
    return live(self, "seek"):seek(w, offset or 0)
  end

  function GFile:tell() return live(self, "tell"):seek("cur", 0) end

  function GFile:size()
    local s = internal.fs_stat(self.name)
    return s and s.length
  end

  function GFile:flush() live(self, "flush"):flush() end

  function GFile:close()
    if self._f then self._f:close(); self._f = nil end
  end
  GFile.__close = GFile.close
  GFile.__gc = GFile.close
  -- }====
end
