-- scripts/make_digit_folders.lua: write MNIST digits as PNG files in class
-- folders (OUT/0/..., OUT/9/...) for image_dataset_from_directory
-- (examples/image_folder.lua). The digits come from the copy shipped in
-- data/mnist-binarized (or the IDX directory MNIST_DATA), the first
-- PER_CLASS of each class from the training set; no download.
-- Usage: lua5.4 scripts/make_digit_folders.lua OUT [PER_CLASS (default 30)]
local tf = require("tf")
local out = assert(arg[1], "usage: lua5.4 scripts/make_digit_folders.lua OUT [PER_CLASS]")
local per_class = tonumber(arg[2] or "30")
local train = tf.keras.datasets.mnist.load_data(os.getenv("MNIST_DATA"))
local images, labels = train[1], train[2]:totable()
local count = {}
for d = 0, 9 do
  count[d] = 0
  tf.io.gfile.makedirs(string.format("%s/%d", out, d))
end
local written = 0
for i, d in ipairs(labels) do
  if count[d] < per_class then
    count[d] = count[d] + 1
    local img = tf.expand_dims(images[i], -1)            -- (28, 28, 1) uint8
    tf.io.write_file(string.format("%s/%d/%05d.png", out, d, i), tf.io.encode_png(img))
    written = written + 1
    if written == 10 * per_class then break end
  end
end
print(string.format("wrote %d PNG files (%d per class) under %s", written, per_class, out))
