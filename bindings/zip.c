/*
** zip.c: zlib's CRC-32 (the checksum of zip members) for the .keras
** container, which lua/tf/keras/saving_zip.lua reads and writes in Lua
** (string.pack/unpack, bounds-checked there). No parsing happens here.
*/
#include <zlib.h>
#include "ltfL.h"

/* core.zip_crc32(string [, crc]) -> integer: the CRC-32 (zip's, ISO 3309) of
** the string, continuing from crc (default 0). */
static int l_zip_crc32(lua_State *L) {
    size_t n;
    const char *s = luaL_checklstring(L, 1, &n);
    lua_Integer c0 = luaL_optinteger(L, 2, 0);
    if (c0 < 0 || c0 > 0xffffffffLL) return luaL_argerror(L, 2, "a CRC-32 is in [0, 2^32)");
    uLong crc = (uLong)c0;
    while (n > 0) {
        uInt k = n > (size_t)1 << 30 ? (uInt)1 << 30 : (uInt)n;
        crc = crc32(crc, (const Bytef *)s, k);
        s += k;
        n -= k;
    }
    lua_pushinteger(L, (lua_Integer)(crc & 0xffffffffUL));
    return 1;
}

static const luaL_Reg zip_fns[] = {
    {"zip_crc32", l_zip_crc32},
    {NULL, NULL}
};

void ltfL_open_zip(lua_State *L) { ltfL_register(L, zip_fns, LTFL_INTERNAL); }
