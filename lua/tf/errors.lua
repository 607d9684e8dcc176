--- Error objects: tables with `kind` and `message` (DESIGN section 2).
-- `tf.errors.InvalidArgumentError` etc. are the kind names, so
-- `err.kind == tf.errors.InvalidArgumentError` reads well in handlers.
return function(tf)
  local core = tf.core
  local errors = tf.errors
  for _, kind in ipairs({"InvalidArgumentError", "TypeError", "ValueError", "NotFoundError",
                         "OutOfRangeError", "ResourceExhaustedError", "FailedPreconditionError",
                         "UnimplementedError", "DataLossError", "InternalError", "RuntimeError", "UnknownError",
                         "AlreadyExistsError", "UnavailableError"}) do
    errors[kind] = kind
  end

  --- Raise an error object of `kind` with `message`, blamed on the caller
  -- `level` frames up (default: the caller of the function that raises).
  function errors.raise(kind, message, level)
    core.raise(kind, message, (level or 1) + 1)
  end

  --- A new error object of `kind` with `message` (not raised), blamed on
  -- the caller `level` frames up (default: the caller of new).
  function errors.new(kind, message, level)
    local _, e = pcall(core.raise, kind, message, (level or 1) + 2)
    return e
  end

  --- True when `e` is an error object (optionally of `kind`).
  function errors.is_error(e, kind)
    return getmetatable(e) == core.Error and (kind == nil or e.kind == kind)
  end
end
