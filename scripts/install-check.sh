#!/usr/bin/env bash
# Installation checks (issue 10): `cmake --install` into a fresh prefix, then
# an out-of-tree host (install/hello) built against the installed files with
# pkg-config, with find_package(luatf CONFIG) (shared and static targets) and
# with the link lines of examples/embed/README.md, run from another directory
# with no LUA_PATH (the Lua files are found where they were installed); then
# `luarocks make` of the rockspec into a tree, offline, and a smoke test of
# the installed rock from another directory. Needs a built build/ (or
# BUILD_DIR); ctest runs it as 'install_check' with --no-rock (the rock
# rebuilds the whole engine).
#   bash scripts/install-check.sh [--no-rock]
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
tmp=$(mktemp -d /tmp/ltf-install.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
unset LUA_PATH LUA_CPATH LUA_PATH_5_4 LUA_CPATH_5_4
prefix=$tmp/prefix
build=${BUILD_DIR:-build}
cmake --build "$build" -j2 >/dev/null
cmake --install "$build" --prefix "$prefix" >/dev/null
echo "install-check: installed into $prefix"

# pkg-config, shared libraries
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
cc "$root/install/hello/hello.c" -o "$tmp/hello-pc" $(pkg-config --cflags --libs luatf)
(cd "$tmp" && LD_LIBRARY_PATH=$prefix/lib ./hello-pc)
# pkg-config, static libraries
cc "$root/install/hello/hello.c" -o "$tmp/hello-static" $(pkg-config --cflags luatf) \
   "$prefix/lib/libltf_lua.a" "$prefix/lib/libltf.a" $(pkg-config --static --libs-only-l --libs-only-other luatf | sed 's/-lltf_lua -lltf//')
# (a static host has no library file to find the Lua files next to: it says where they are)
(cd "$tmp" && LUA_PATH_5_4="$prefix/share/lua/5.4/?.lua;$prefix/share/lua/5.4/?/init.lua;;" ./hello-static)
# CMake package: luatf::ltf_lua and luatf::ltf_lua_static, with nothing but
# the target named (they carry Lua and the engine's libraries)
cmake -S "$root/install/hello" -B "$tmp/hello-cmake" -DCMAKE_PREFIX_PATH="$prefix" >"$tmp/hello-cmake.log" 2>&1 &&
  cmake --build "$tmp/hello-cmake" >>"$tmp/hello-cmake.log" 2>&1 || { cat "$tmp/hello-cmake.log"; exit 1; }
(cd "$tmp" && ./hello-cmake/hello)
(cd "$tmp" && LUA_PATH_5_4="$prefix/share/lua/5.4/?.lua;$prefix/share/lua/5.4/?/init.lua;;" ./hello-cmake/hello_static)
# the link lines of examples/embed/README.md, as printed there (host.c: hello.c)
awk '/^```sh$/{on=1; n++; next} /^```$/{on=0} on{print > (dir "/readme-" n ".sh")}' dir="$tmp" \
  "$root/examples/embed/README.md"
nlines=0
for f in "$tmp"/readme-*.sh; do
  [ -e "$f" ] || break
  d=${f%.sh}; mkdir -p "$d"; cp "$root/install/hello/hello.c" "$d/host.c"
  (cd "$d" && PREFIX="$prefix" bash -e "$f") || { echo "install-check: examples/embed/README.md's link line failed:"; cat "$f"; exit 1; }
  (cd "$tmp" && LD_LIBRARY_PATH=$prefix/lib \
     LUA_PATH_5_4="$prefix/share/lua/5.4/?.lua;$prefix/share/lua/5.4/?/init.lua;;" "$d/a.out")
  nlines=$((nlines + 1))
done
[ "$nlines" -eq 2 ] || { echo "install-check: expected 2 link lines in examples/embed/README.md, found $nlines"; exit 1; }

if [ "${1:-}" != "--no-rock" ]; then
  tree=$tmp/rocks
  luarocks --lua-version 5.4 make --tree "$tree" rockspec/luatf-scm-1.rockspec >"$tmp/rock.log" 2>&1 || { cat "$tmp/rock.log"; exit 1; }
  (cd "$tmp" && LUA_PATH_5_4="$tree/share/lua/5.4/?.lua;$tree/share/lua/5.4/?/init.lua;;" \
     LUA_CPATH_5_4="$tree/lib/lua/5.4/?.so;;" lua5.4 "$root/spec/install/smoke.lua")
fi
echo "install-check: ok"
