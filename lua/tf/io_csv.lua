--- tf.io.decode_csv (docs/data.md "CSV"). lua/tf/io.lua (the tf.io module)
-- calls this module's function with tf when it loads; it may also be called
-- directly with tf and the table to fill.
return function(tf, target)
  local io_ = target or rawget(tf, "io")
  if io_ == nil then
    io_ = {}
    rawset(tf, "io", io_)
  end
  --- tf.io.decode_csv(records, record_defaults [, {field_delim=",", use_quote_delim=true,
  -- na_value="", select_cols=}]): one tensor per column (multiple return
  -- values), each of the records' shape and the column default's dtype.
  function io_.decode_csv(records, record_defaults, opts)
    local data = tf.data
    return data._decode_csv(records, record_defaults, opts)
  end
  return io_
end
