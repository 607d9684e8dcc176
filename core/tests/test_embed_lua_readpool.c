/*
** test_embed_lua_readpool.c: two lua_States in one process, each on its own
** thread, read TFRecord files through interleave(..., {num_parallel_calls})
** at the same time (bindings/readpool.c: each iterator owns its pool; the
** per-state tf.data.readio table is not shared). Each state's records must
** be exactly its own files' records in TensorFlow's order, the same as the
** sequential interleave in that state (TextLineDataset streamed with
** buffer_size too; a map with num_parallel_calls gives the right sum), and
** after both states are closed no reader thread is left. A file of about 9
** read-ahead chunks is read batched, with a corrupt record (the Lua side's
** CRC check stops its reader: the records before it, then the error; with
** skip_corrupt all but it) and taken from early. Run under ASan by scripts/sanitize.sh.
*/
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <lua.h>
#include <lauxlib.h>
#include <lualib.h>
#include "check.h"
#include "ltf_lua.h"

#define NSTATES 2
#define ROUNDS 5

/* K: the state's number; writes 3 files of its own, reads them interleaved
** many times on 2 threads and sequentially; 'result' is "ok" or the first difference */
static const char script[] =
    "local tf = require('tf')\n"
    "if not tf.io or not tf.io.TFRecordWriter then require('tf.io_tfrecord')(tf) end\n"
    "local files = {}\n"
    "for f = 1, 3 do\n"
    "  files[f] = DIR .. '/s' .. K .. '-f' .. f .. '.tfrecord'\n"
    "  local w = tf.io.TFRecordWriter(files[f])\n"
    "  for r = 1, 3000 * f do w:write('s' .. K .. 'f' .. f .. 'r' .. r) end\n"
    "  w:close()\n"
    "end\n"
    "local function read(par)\n"
    "  local opts = {cycle_length = 2, block_length = 3, num_parallel_calls = par}\n"
    "  local ds = tf.data.Dataset.from_tensor_slices(tf.constant(files))\n"
    "    :interleave(function(f) return tf.data.TFRecordDataset(f) end, opts)\n"
    "  local out = {}\n"
    "  for x in ds:iter() do out[#out + 1] = x:item() end\n"
    "  return out\n"
    "end\n"
    "local want = read(nil)\n"
    "result = 'ok'\n"
    "if #want ~= 18000 or want[1] ~= 's' .. K .. 'f1r1' or want[4] ~= 's' .. K .. 'f2r1' then\n"
    "  result = 'sequential order: ' .. #want .. ' ' .. tostring(want[1]) .. ' ' .. tostring(want[4])\n"
    "end\n"
    "for round = 1, ROUNDS do\n"
    "  local got = read(2)\n"
    "  if #got ~= #want then result = 'round ' .. round .. ': ' .. #got .. ' records'; break end\n"
    "  for i = 1, #want do\n"
    "    if got[i] ~= want[i] then result = 'round ' .. round .. ' record ' .. i .. ': ' .. got[i]; break end\n"
    "  end\n"
    "  collectgarbage()\n"
    "end\n"
    "local txt = DIR .. '/s' .. K .. '.txt'\n"
    "local tf_ = io.open(txt, 'w')\n"
    "for r = 1, 2000 do tf_:write('s', K, 'line', r, '\\n') end\n"
    "tf_:close()\n"
    "local function lines(bs, par)\n"
    "  local ds = tf.data.Dataset.from_tensor_slices(tf.constant({txt, txt})):interleave(function(f)\n"
    "    return tf.data.TextLineDataset(f, {buffer_size = bs}) end, {cycle_length = 2, num_parallel_calls = par})\n"
    "  local out = {}\n"
    "  for x in ds:iter() do out[#out + 1] = x:item() end\n"
    "  return table.concat(out, ',')\n"
    "end\n"
    "if result == 'ok' and lines(nil, nil) ~= lines(100, 2) then result = 'text lines differ' end\n"
    "local sum = 0\n"
    "for y in tf.data.Dataset.range(1, 301):map(function(x) return x * K end, {num_parallel_calls = 2}):iter() do\n"
    "  sum = sum + y:item()\n"
    "end\n"
    "if result == 'ok' and sum ~= 45150 * K then result = 'parallel map sum ' .. sum end\n"
    "local big, bad = DIR .. '/s' .. K .. '-big.tfrecord', DIR .. '/s' .. K .. '-bad.tfrecord'\n"
    "local w = tf.io.TFRecordWriter(big)\n"
    "for r = 1, 20000 do w:write(string.format('%06d', r) .. string.rep('x', 94)) end\n"
    "w:close()\n"
    "local n = 0\n"
    "for x in tf.data.TFRecordDataset(big):batch(1000):iter() do n = n + x.shape[1] end\n"
    "if result == 'ok' and n ~= 20000 then result = 'read-ahead: ' .. n .. ' records' end\n"
    "local fh = io.open(big, 'rb'); local bytes = fh:read('a'); fh:close()\n"
    "local at = 14999 * 116 + 12 + 3\n"
    "fh = io.open(bad, 'wb'); fh:write(bytes:sub(1, at), 'Z', bytes:sub(at + 2)); fh:close()\n"
    "n = 0\n"
    "local ok, err = pcall(function() for _ in tf.data.TFRecordDataset(bad):iter() do n = n + 1 end end)\n"
    "if result == 'ok' and (ok or n ~= 14999 or not tostring(err.message):find('corrupted record at ' .. 14999 * 116, 1, true)) then\n"
    "  result = 'corrupt record: ' .. n .. ' ' .. tostring(err and err.message)\n"
    "end\n"
    "n = 0\n"
    "for x in tf.data.TFRecordDataset(bad, {skip_corrupt = true}):batch(700):iter() do n = n + x.shape[1] end\n"
    "if result == 'ok' and n ~= 19999 then result = 'skip_corrupt: ' .. n .. ' records' end\n"
    "n = 0\n"
    "for _ in tf.data.TFRecordDataset(big):take(3):iter() do n = n + 1 end\n"
    "if result == 'ok' and n ~= 3 then result = 'take(3): ' .. n end\n"
    "collectgarbage()\n"
    "os.remove(big); os.remove(bad)\n"
    "os.remove(txt)\n"
    "for _, f in ipairs(files) do os.remove(f) end\n";

typedef struct job {
    int k;
    const char *dir;
    char result[256];
} job;

static void *run(void *arg) {
    job *j = arg;
    snprintf(j->result, sizeof j->result, "did not run");
    lua_State *L = luaL_newstate();
    luaL_openlibs(L);
    ltf_ctx *ctx = ltf_ctx_new();
    ltf_ctx_set_num_threads(ctx, 1);
    if (ltf_lua_open(L, ctx) != LTF_OK) goto done;
    lua_pushinteger(L, j->k);
    lua_setglobal(L, "K");
    lua_pushinteger(L, ROUNDS);
    lua_setglobal(L, "ROUNDS");
    lua_pushstring(L, j->dir);
    lua_setglobal(L, "DIR");
    if (luaL_dostring(L, script) != LUA_OK) {
        snprintf(j->result, sizeof j->result, "error: %s", luaL_tolstring(L, -1, NULL));
        goto done;
    }
    lua_getglobal(L, "result");
    snprintf(j->result, sizeof j->result, "%s", lua_tostring(L, -1) ? lua_tostring(L, -1) : "no result");
done:
    lua_close(L);
    ltf_ctx_release(ctx);
    return NULL;
}

/* threads of this process (/proc/self/task entries) */
static int thread_count(void) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    int n = -1;
    if (!f) return -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "Threads: %d", &n) == 1) break;
    fclose(f);
    return n;
}

static void *nothing(void *arg) { return arg; }

int main(void) {
    char dir[] = "/tmp/luatf-readpool-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    /* a first thread made and joined: a sanitizer's runtime starts its own helper thread then */
    pthread_t warm;
    CHECK(pthread_create(&warm, NULL, nothing, NULL) == 0);
    pthread_join(warm, NULL);
    int before = thread_count();
    job jobs[NSTATES];
    pthread_t th[NSTATES];
    for (int k = 0; k < NSTATES; k++) {
        jobs[k] = (job){.k = k + 1, .dir = dir};
        CHECK(pthread_create(&th[k], NULL, run, &jobs[k]) == 0);
    }
    for (int k = 0; k < NSTATES; k++) pthread_join(th[k], NULL);
    for (int k = 0; k < NSTATES; k++) {
        if (strcmp(jobs[k].result, "ok") != 0) fprintf(stderr, "state %d: %s\n", k + 1, jobs[k].result);
        CHECK(strcmp(jobs[k].result, "ok") == 0);
    }
    int after = thread_count();
    if (before >= 0) CHECK(after == before);   /* no reader thread outlives its state */
    rmdir(dir);
    printf("%d states, %d rounds each: same records and order as sequential; threads %d before, %d after\n", NSTATES,
           ROUNDS, before, after);
    CHECK_DONE();
}
