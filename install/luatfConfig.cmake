# luatf's CMake package: find_package(luatf CONFIG) gives
#   luatf::ltf             the engine, shared (core/include/ltf.h)
#   luatf::ltf_lua         the Lua bindings, shared, for hosts that embed Lua 5.4 (ltf_lua.h)
#   luatf::ltf_static      libltf.a
#   luatf::ltf_lua_static  libltf_lua.a
# Each target carries its link dependencies (PCRE2, zlib, threads, libm,
# libdl; OpenBLAS is not linked: the engine dlopens it on first use); the
# bindings' targets also link Lua 5.4 through luatf::lua: the Lua library
# found here (LUATF_LUA_LIBRARY), or the host's own Lua
# target or library when the host sets LUATF_LUA_LIBRARY first (one copy of
# Lua per program). Also luatf_LUADIR, where the Lua files (tf/*.lua) are.
include(CMakeFindDependencyMacro)
find_dependency(Threads)
find_dependency(ZLIB)
if(NOT TARGET luatf::lua)
  find_library(LUATF_LUA_LIBRARY NAMES lua5.4 lua54 lua-5.4)
  if(NOT LUATF_LUA_LIBRARY)
    set(luatf_FOUND FALSE)
    set(luatf_NOT_FOUND_MESSAGE "luatf: the Lua 5.4 library was not found (apt-get install liblua5.4-dev, or set LUATF_LUA_LIBRARY)")
    return()
  endif()
  add_library(luatf::lua INTERFACE IMPORTED)
  set_target_properties(luatf::lua PROPERTIES INTERFACE_LINK_LIBRARIES "${LUATF_LUA_LIBRARY}")
endif()
include("${CMAKE_CURRENT_LIST_DIR}/luatfTargets.cmake")
get_filename_component(_luatf_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
set(luatf_LUADIR "${_luatf_prefix}/share/lua/5.4")
