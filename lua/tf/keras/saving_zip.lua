--- The zip container of .keras files (PKWARE APPNOTE 6.3): written with
-- "stored" members (no compression: the weights are float bytes that
-- deflate barely shrinks), read with stored or deflated members (deflate
-- inflated by zlib through tf.io.decode_compressed), no zip64, no
-- encryption. Everything is parsed with string.unpack on a Lua string, and
-- every offset and length is checked against the bytes before use, so a
-- truncated or hostile file is an error, never a bad read. The CRC-32 of each
-- member is zlib's (core.zip_crc32) and is checked on read.
return function(tf)
  local core = tf.core
  local sfmt = string.format
  local M = {}

  local function crc32(s) return core.internal.zip_crc32(s) end

  -- MS-DOS time and date of `t` (os.time), as zip stores them
  local function dos_time(t)
    local d = os.date("!*t", t)
    local time = (d.hour << 11) | (d.min << 5) | (d.sec // 2)
    local date = ((math.max(d.year, 1980) - 1980) << 9) | (d.month << 5) | d.day
    return time, date
  end

  --- The bytes of a zip archive holding `members` (an array of {name, data}),
  -- in that order, stored.
  function M.write(members, when)
    local out, central, at = {}, {}, 0
    local time, date = dos_time(when or os.time())
    for _, m in ipairs(members) do
      local name, data = m[1], m[2]
      if #data > 0xfffffffe or at > 0xfffffffe then
        error("zip: a member or the archive is over 4 GiB (zip64 is not written)")
      end
      local crc = crc32(data)
      local head = string.pack("<I4I2I2I2I2I2I4I4I4I2I2", 0x04034b50, 20, 0x0800, 0, time, date, crc, #data,
        #data, #name, 0)
      out[#out + 1] = head
      out[#out + 1] = name
      out[#out + 1] = data
      central[#central + 1] = string.pack("<I4I2I2I2I2I2I2I4I4I4I2I2I2I2I2I4I4", 0x02014b50, 0x0314, 20, 0x0800, 0,
        time, date, crc, #data, #data, #name, 0, 0, 0, 0, 0x81a4 << 16, at) .. name
      at = at + #head + #name + #data
    end
    local cd = table.concat(central)
    out[#out + 1] = cd
    out[#out + 1] = string.pack("<I4I2I2I2I2I4I4I2", 0x06054b50, 0, 0, #members, #members, #cd, at, 0)
    return table.concat(out)
  end

  --- Read archive `bytes`: returns {name -> data} and the names in central
  -- directory order. Errors (strings, "zip: ...") on anything malformed.
  function M.read(bytes)
    local n = #bytes
    if n < 22 then error("zip: the file is too short to be a zip archive (" .. n .. " bytes)", 0) end
    if bytes:sub(1, 4) ~= "PK\3\4" and bytes:sub(1, 4) ~= "PK\5\6" then
      error("zip: the file is not a zip archive (it does not start with a zip signature)", 0)
    end
    -- the end of central directory record: the last signature within the
    -- final 22 + 65535 bytes (its comment is at most 65535)
    local eocd
    for p = n - 21, math.max(1, n - 21 - 65535), -1 do
      if bytes:byte(p) == 0x50 and bytes:sub(p, p + 3) == "PK\5\6" then
        local clen = string.unpack("<I2", bytes, p + 20)
        if p + 21 + clen == n then eocd = p; break end
      end
    end
    if not eocd then error("zip: no end of central directory record (the file is truncated or not a zip archive)", 0) end
    local _, disk, cddisk, ndisk, count, cdsize, cdoff = string.unpack("<I4I2I2I2I2I4I4", bytes, eocd)
    if disk ~= 0 or cddisk ~= 0 or ndisk ~= count then error("zip: multi-disk archives are not supported", 0) end
    if count == 0xffff or cdsize == 0xffffffff or cdoff == 0xffffffff then
      error("zip: zip64 archives are not supported", 0)
    end
    if cdoff + cdsize > eocd - 1 then error("zip: the central directory lies outside the file (truncated?)", 0) end
    local files, names = {}, {}
    local p = cdoff + 1
    for i = 1, count do
      if p + 46 - 1 > cdoff + cdsize then error(sfmt("zip: central directory entry %d is truncated", i), 0) end
      local sig, _, _, flags, method, _, _, crc, csize, usize, nlen, xlen, clen, _, _, _, loff =
        string.unpack("<I4I2I2I2I2I2I2I4I4I4I2I2I2I2I2I4I4", bytes, p)
      if sig ~= 0x02014b50 then error(sfmt("zip: central directory entry %d has a bad signature", i), 0) end
      if p + 46 + nlen + xlen + clen - 1 > cdoff + cdsize then
        error(sfmt("zip: central directory entry %d is truncated", i), 0)
      end
      local name = bytes:sub(p + 46, p + 45 + nlen)
      p = p + 46 + nlen + xlen + clen
      if flags & 1 ~= 0 then error(sfmt("zip: member '%s' is encrypted", name), 0) end
      if csize == 0xffffffff or usize == 0xffffffff or loff == 0xffffffff then
        error("zip: zip64 archives are not supported", 0)
      end
      if files[name] then error(sfmt("zip: member '%s' appears twice", name), 0) end
      -- the member's local header, then its data
      if loff + 30 > cdoff then error(sfmt("zip: member '%s' lies outside the file", name), 0) end
      local lsig, _, _, _, _, _, _, _, _, lnlen, lxlen = string.unpack("<I4I2I2I2I2I2I4I4I4I2I2", bytes, loff + 1)
      if lsig ~= 0x04034b50 then error(sfmt("zip: member '%s' has a bad local header signature", name), 0) end
      local d0 = loff + 30 + lnlen + lxlen
      if d0 + csize > cdoff then error(sfmt("zip: member '%s' is truncated", name), 0) end
      local data = bytes:sub(d0 + 1, d0 + csize)
      if method == 8 then
        -- raw deflate: wrapped as a gzip member (whose trailer zlib checks:
        -- the CRC-32 and size from the directory)
        local gz = "\31\139\8\0\0\0\0\0\0\255" .. data .. string.pack("<I4I4", crc, usize)
        local ok, res = pcall(function() return tf.io.decode_compressed(gz, "GZIP"):item() end)
        if not ok then error(sfmt("zip: member '%s': corrupt deflate data (%s)", name, tostring(res)), 0) end
        data = res
      elseif method ~= 0 then
        error(sfmt("zip: member '%s' uses compression method %d (only stored and deflate are read)", name, method), 0)
      end
      if #data ~= usize then error(sfmt("zip: member '%s' has %d bytes, its header says %d", name, #data, usize), 0) end
      if crc32(data) ~= crc then error(sfmt("zip: member '%s' fails its CRC-32 check (the file is corrupt)", name), 0) end
      files[name] = data
      names[#names + 1] = name
    end
    return files, names
  end

  return M
end
