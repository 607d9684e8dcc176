-- examples/image_folder.lua: an image classifier trained from a folder of
-- PNG files, one subfolder per class, read by
-- tf.keras.utils.image_dataset_from_directory. The folders are written
-- first by scripts/make_digit_folders.lua (MNIST digits from the copy
-- shipped in data/, no download).
-- Environment: IMAGE_FOLDER_PER_CLASS (default 60), IMAGE_FOLDER_EPOCHS (8),
-- IMAGE_FOLDER_DIR (default: a fresh temporary directory).
local tf = require("tf")
tf.random.set_seed(1)
local per_class = tonumber(os.getenv("IMAGE_FOLDER_PER_CLASS") or "60")
local epochs = tonumber(os.getenv("IMAGE_FOLDER_EPOCHS") or "8")
local dir = os.getenv("IMAGE_FOLDER_DIR")
local tmp
if not dir then
  local p = io.popen("mktemp -d /tmp/luatf-digits-XXXXXX")
  dir = p:read("l")
  p:close()
  tmp = dir
end
local script = debug.getinfo(1, "S").source:match("^@(.*)examples/[^/]*$") or ""
assert(os.execute(string.format("lua5.4 %sscripts/make_digit_folders.lua %s %d", script, dir, per_class)))

-- 80% to train, 20% to validate; grayscale 28x28; labels 1..10 (class
-- names "0".."9" sorted, so label k is digit k - 1)
local train, val = tf.keras.utils.image_dataset_from_directory(dir, {
  color_mode = "grayscale", image_size = {28, 28}, batch_size = 32,
  validation_split = 0.2, subset = "both", seed = 7})
print("classes: " .. table.concat(train.class_names, " "))
print(string.format("%d training files, %d validation files", #train.file_paths, #val.file_paths))

local model = tf.keras.Sequential{
  tf.keras.layers.Rescaling{1 / 255},
  tf.keras.layers.Flatten{},
  tf.keras.layers.Dense{64, activation = "relu"},
  tf.keras.layers.Dense{10},
}
model:compile{optimizer = tf.keras.optimizers.Adam{learning_rate = 0.003},
              loss = tf.keras.losses.SparseCategoricalCrossentropy{from_logits = true},
              metrics = {"accuracy"}}
local h = model:fit(train, {epochs = epochs, validation_data = val, verbose = 0})
local loss = h.history.loss
print(string.format("loss: first epoch %.4f, last epoch %.4f", loss[1], loss[#loss]))
local acc = h.history.val_accuracy
print(string.format("validation accuracy: %.3f", acc[#acc]))
if tmp then os.execute("rm -rf '" .. tmp .. "'") end
