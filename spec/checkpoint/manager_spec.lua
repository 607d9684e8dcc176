-- tf.train.CheckpointManager and tf.train.latest_checkpoint
local tmpdir = require("support").tmpdir
local tf = require("tf")

local function exists(p)
  local f = io.open(p, "rb")
  if f then f:close() return true end
  return false
end

describe("tf.train.CheckpointManager", function()
  local dir
  before_each(function() dir = tmpdir() end)
  after_each(function() os.execute("rm -rf '" .. dir .. "'") end)

  it("saves ckpt-N, keeps max_to_keep newest (oldest first), deletes only its own files", function()
    local x = tf.Variable(0.0)
    local ckpt = tf.train.Checkpoint{x = x}
    -- files it did not write, one of them with a name like its own
    for _, name in ipairs({"ckpt-notes", "other-1", "ckpt-1.bak"}) do
      local f = io.open(dir .. "/" .. name, "w"); f:write("keep"); f:close()
    end
    local m = tf.train.CheckpointManager(ckpt, dir, {max_to_keep = 2})
    assert.is_nil(m.latest_checkpoint)
    for i = 1, 4 do
      x:assign(i)
      assert.equal(dir .. "/ckpt-" .. i, m:save())
    end
    assert.same({dir .. "/ckpt-3", dir .. "/ckpt-4"}, m.checkpoints)
    assert.equal(dir .. "/ckpt-4", m.latest_checkpoint)
    assert.equal(dir .. "/ckpt-4", tf.train.latest_checkpoint(dir))
    assert.equal(dir .. "/ckpt-4", tf.train.latest_checkpoint(dir .. "/"))
    assert.is_false(exists(dir .. "/ckpt-1"))
    assert.is_false(exists(dir .. "/ckpt-2"))
    assert.is_true(exists(dir .. "/ckpt-3"))
    for _, name in ipairs({"ckpt-notes", "other-1", "ckpt-1.bak"}) do assert.is_true(exists(dir .. "/" .. name), name) end
    -- restore the latest, x is 4; the manager's checkpoints restore too
    x:assign(0)
    ckpt:restore(m.latest_checkpoint):assert_consumed()
    assert.equal(4, x:item())
    ckpt:restore(m.checkpoints[1])
    assert.equal(3, x:item())
    -- a new manager over the directory takes the list over
    local m2 = tf.train.CheckpointManager(tf.train.Checkpoint{x = x}, dir, {max_to_keep = 2})
    assert.same({dir .. "/ckpt-3", dir .. "/ckpt-4"}, m2.checkpoints)
  end)

  it("names files with checkpoint_name and keeps all without max_to_keep", function()
    local ckpt = tf.train.Checkpoint{v = tf.Variable(1.0)}
    local m = tf.train.CheckpointManager(ckpt, dir .. "/sub/dir", {checkpoint_name = "model"})
    for _ = 1, 3 do m:save() end
    assert.same({dir .. "/sub/dir/model-1", dir .. "/sub/dir/model-2", dir .. "/sub/dir/model-3"}, m.checkpoints)
    assert.equal(dir .. "/sub/dir/model-3", tf.train.latest_checkpoint(dir .. "/sub/dir"))
    assert.equal(dir .. "/sub/dir/model-7", m:save(7))
    assert.equal(3, ckpt.save_counter:item())
  end)

  it("preserves checkpoints keep_checkpoint_every_n_hours apart instead of deleting them", function()
    local ckpt = tf.train.Checkpoint{v = tf.Variable(1.0)}
    -- 0 hours: every checkpoint that leaves the kept window is preserved
    local m = tf.train.CheckpointManager(ckpt, dir, {max_to_keep = 1, keep_checkpoint_every_n_hours = 0})
    for _ = 1, 3 do m:save() end
    assert.same({dir .. "/ckpt-3"}, m.checkpoints)
    assert.is_true(exists(dir .. "/ckpt-1"))
    assert.is_true(exists(dir .. "/ckpt-2"))
    -- a long period: rotated away as usual
    local m2 = tf.train.CheckpointManager(tf.train.Checkpoint{v = tf.Variable(1.0)}, dir .. "/b",
      {max_to_keep = 1, keep_checkpoint_every_n_hours = 10000})
    for _ = 1, 3 do m2:save() end
    assert.is_false(exists(dir .. "/b/ckpt-1"))
  end)

  it("writes the state file in TensorFlow's text format, any file name round-tripping", function()
    local ckpt = tf.train.Checkpoint{v = tf.Variable(1.0)}
    local m = tf.train.CheckpointManager(ckpt, dir, {max_to_keep = 2})
    m:save()
    m:save()
    local f = io.open(dir .. "/checkpoint", "rb")
    local text = f:read("a")
    f:close()
    assert.truthy(text:find('^model_checkpoint_path: "ckpt%-2"\nall_model_checkpoint_paths: "ckpt%-1"\nall_model_checkpoint_paths: "ckpt%-2"\n'), text)
    assert.truthy(text:find("\nall_model_checkpoint_timestamps: %d"), text)
    local name = 'we"ird\\name\n\195\169\1'
    local m2 = tf.train.CheckpointManager(ckpt, dir .. "/n", {checkpoint_name = name})
    assert.equal(dir .. "/n/" .. name .. "-3", m2:save())
    assert.equal(dir .. "/n/" .. name .. "-3", tf.train.latest_checkpoint(dir .. "/n"))
    assert.same({dir .. "/n/" .. name .. "-3"}, tf.train.CheckpointManager(ckpt, dir .. "/n").checkpoints)
  end)

  it("checks its arguments", function()
    local ckpt = tf.train.Checkpoint{v = tf.Variable(1.0)}
    assert.tf_error("TypeError", "expected a tf.train.Checkpoint", function() tf.train.CheckpointManager({}, dir) end)
    assert.tf_error("ValueError", "max_to_keep", function() tf.train.CheckpointManager(ckpt, dir, {max_to_keep = 0}) end)
    assert.tf_error("TypeError", "unknown option 'max_keep'", function() tf.train.CheckpointManager(ckpt, dir, {max_keep = 1}) end)
  end)

  it("reports a corrupted state file (DataLossError)", function()
    local f = io.open(dir .. "/checkpoint", "w"); f:write("{garbage"); f:close()
    assert.tf_error("DataLossError", "state file", function() tf.train.latest_checkpoint(dir) end)
  end)
end)
