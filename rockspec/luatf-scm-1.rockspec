package = "luatf"
version = "scm-1"
source = {
  url = "git+file:///dev/null",  -- built in place with `luarocks make`
}
description = {
  summary = "TensorFlow 2's programming model for Lua 5.4: eager tensors, tapes, tf.fn",
  detailed = [[
luatf is a C engine with Lua 5.4 bindings: eager tensors with NumPy
broadcasting, gradient tapes, variables and traced functions (tf.fn).
]],
  license = "Apache-2.0",
}
dependencies = {
  "lua >= 5.4, < 5.5",
}
-- The CUDA module is built as scripts/setup.sh decides (CMakeLists.txt,
-- LTF_CUDA): where the CUDA toolkit is found and an NVIDIA driver is present;
-- LTF_CUDA=ON (or OFF) in the environment overrides. A rock builds the Lua
-- module alone (no tests, no C-host libraries): about a minute on 2 cores,
-- less with CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) (luarocks runs one job).
build = {
  type = "cmake",
  variables = {
    CMAKE_BUILD_TYPE = "Release",
    LTF_TESTS = "OFF",
    LTF_ROCK = "ON",
    LUA_INCDIR = "$(LUA_INCDIR)",
    LUA_LIBDIR = "$(LIBDIR)",
    LUA_LUADIR = "$(LUADIR)",
    CMAKE_INSTALL_PREFIX = "$(PREFIX)",
  },
}
