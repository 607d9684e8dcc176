/*
** bindings/mpi/mpi.c: tf/mpi.so, the MPI communicator for the collective
** ops (ltf_comm.h; docs/distribute_collectives.md). Built only when CMake
** finds MPI; lua/tf/distribute/collective.lua loads it on demand and hands
** its ltf_comm to the context (core.collective_set). It links MPI and Lua,
** not the engine: the engine calls it through the ltf_comm table.
**
** MPI is per process: MPI_Init once (the first init() of any lua_State),
** MPI_Finalize at exit. The communicator is a duplicate of MPI_COMM_WORLD
** with MPI_ERRORS_RETURN. The agreement exchange before each call (check)
** and barriers are nonblocking (MPI_I*) and polled: while waiting they check
** every LIVENESS_MS (20 ms) that the peers on this host are still running
** (their pids, exchanged at init), so a lost peer is an UnavailableError
** naming its rank within about 0.1 s instead of a hang (LTF_MPI_POLLED=1:
** the data calls too);
** peers on other hosts are covered by the timeout (LTF_MPI_TIMEOUT seconds,
** default 300) and by errors MPI itself returns. A rank that leaves (its
** script ended, os.exit) first sends its peers an exit notice, so one
** waiting for it in a collective stops (after LEFT_GRACE) rather than
** waiting for a process that is alive in its exit. The data calls are
** blocking MPI calls (MPI's tuned algorithms) made after the polled
** agreement exchange; a watchdog thread covers a loss inside one (it
** prints the error and ends the process). After a loss every later
** call fails at once with the same message, and exit skips MPI_Finalize
** (which would wait for the lost peer).
*/
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>
#include <mpi.h>
#include "lua.h"
#include "lauxlib.h"
#include "ltf_comm.h"

#define LIVENESS_MS 20
#define SIG_BYTES 256
#define NOTE_TAG 77
#define LEFT_GRACE 1.0   /* seconds a call may still complete after a peer's exit notice */

typedef struct peer { int pid; uint64_t host; } peer;

static struct {
    int inited;           /* MPI_Init done here */
    int started;          /* launched by an MPI starter (else a group of one, no MPI) */
    MPI_Comm comm;
    int rank, size;
    peer *peers;
    double timeout;
    char lost[512];       /* non-empty once a peer is lost: the message every later call returns */
    /* exit notices: a rank that leaves (its script ended, os.exit, an
    ** error) first tells every peer on 'note_comm' (tag NOTE_TAG), so a
    ** peer waiting for it in a collective stops instead of waiting for a
    ** process that is alive but in its exit; the exit barrier runs there too */
    MPI_Comm note_comm;
    MPI_Request note_req;
    int note_from;        /* the received notice's rank (buffer) */
    int left;             /* the first rank known to have left; -1 none */
    double left_at;
    int exiting;
    int die_in_call;      /* LTF_MPI_TEST_DIE_IN_CALL=r: rank r dies inside its next blocking all_reduce (specs) */
    int polled;           /* LTF_MPI_POLLED=1: every data call nonblocking and polled too */
    /* the watchdog thread: while the main thread is inside a blocking MPI
    ** call ('blocked_in' set, since 'blocked_at'), it checks the peers */
    pthread_t watchdog;
    const char *_Atomic blocked_in;
    _Atomic double blocked_at;
    ltf_comm api;
} S;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint64_t fnv(const char *s, size_t n) {
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

/* Whether process 'pid' (on this host) is gone: no such process, or a
** zombie waiting for its parent (mpirun's daemon) to reap it. */
static int pid_gone(int pid) {
    if (kill(pid, 0) != 0 && errno == ESRCH) return 1;
    char path[64], buf[256];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *p = strrchr(buf, ')');
    return p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X');
}

/* The peers on this host that are gone, as text into 'buf' ("rank 1 (pid
** 123) is lost..." or "ranks 0, 1 (pids 122, 123) are lost..."); returns
** the first such rank, -1 when none. Several at once: the first one lost
** cannot be told from those that left after it (a peer that saw the loss
** and exited), so all are named. */
static int lost_peers(char *buf, size_t size) {
    int first = -1, count = 0;
    char ranks[256] = "", pids[256] = "";
    for (int r = 0; r < S.size; r++)
        if (r != S.rank && S.peers && S.peers[r].host == S.peers[S.rank].host && S.peers[r].pid > 0 &&
            pid_gone(S.peers[r].pid)) {
            if (first < 0) first = r;
            size_t a = strlen(ranks), b = strlen(pids);
            if (a < sizeof ranks - 16) snprintf(ranks + a, sizeof ranks - a, "%s%d", count ? ", " : "", r);
            if (b < sizeof pids - 16) snprintf(pids + b, sizeof pids - b, "%s%d", count ? ", " : "", S.peers[r].pid);
            count++;
        }
    if (first >= 0 && buf) {
        if (count == 1) snprintf(buf, size, "rank %s (pid %s) is lost: it exited or was killed", ranks, pids);
        else snprintf(buf, size, "ranks %s (pids %s) are lost: they exited or were killed", ranks, pids);
    }
    return first;
}

static ltf_status fail(char *err, size_t errlen, ltf_status st, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static ltf_status fail(char *err, size_t errlen, ltf_status st, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return st;
}

static ltf_status mpi_fail(char *err, size_t errlen, const char *what, int rc) {
    char s[MPI_MAX_ERROR_STRING];
    int n = 0;
    if (MPI_Error_string(rc, s, &n) != MPI_SUCCESS) snprintf(s, sizeof s, "error %d", rc);
    char who[400];
    if (lost_peers(who, sizeof who) >= 0) {
        snprintf(S.lost, sizeof S.lost, "%.300s (MPI: %.150s)", who, s);
        return fail(err, errlen, LTF_ERR_UNAVAILABLE, "%s: %s", what, S.lost);
    }
    snprintf(S.lost, sizeof S.lost, "MPI failed: %s (a peer may be lost)", s);
    return fail(err, errlen, LTF_ERR_UNAVAILABLE, "%s: %s", what, S.lost);
}

/* Wait for 'req', watching the peers and the clock. */
static ltf_status wait_req(MPI_Request *req, const char *what, char *err, size_t errlen) {
    double t0 = now(), last = t0;
    for (unsigned spins = 0;; spins++) {
        int done = 0;
        int rc = MPI_Test(req, &done, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS) return mpi_fail(err, errlen, what, rc);
        if (done) return LTF_OK;
        if ((spins & 63) == 0) {
            double t = now();
            if (t - last >= LIVENESS_MS * 1e-3) {
                last = t;
                if (lost_peers(S.lost, sizeof S.lost) >= 0)
                    return fail(err, errlen, LTF_ERR_UNAVAILABLE, "%s: %s", what, S.lost);
                int got = 0;
                MPI_Status stt;
                while (!S.exiting && S.note_req != MPI_REQUEST_NULL && MPI_Test(&S.note_req, &got, &stt) == MPI_SUCCESS &&
                       got) {
                    if (S.left < 0) {
                        S.left = stt.MPI_SOURCE;
                        S.left_at = t;
                    }
                    MPI_Irecv(&S.note_from, 1, MPI_INT, MPI_ANY_SOURCE, NOTE_TAG, S.note_comm, &S.note_req);
                }
                /* a peer that left: this call may still complete (it was the
                ** peer's last), else it never will */
                if (!S.exiting && S.left >= 0 && t - (S.left_at > t0 ? S.left_at : t0) > LEFT_GRACE) {
                    snprintf(S.lost, sizeof S.lost,
                             "rank %d left the job (its script ended or exited) while this rank waits for it", S.left);
                    return fail(err, errlen, LTF_ERR_UNAVAILABLE, "%s: %s", what, S.lost);
                }
            }
            if (t - t0 > S.timeout) {
                snprintf(S.lost, sizeof S.lost,
                         "no progress for %.0f s (LTF_MPI_TIMEOUT): a peer on another host may be lost or stuck",
                         S.timeout);
                return fail(err, errlen, LTF_ERR_UNAVAILABLE, "%s: %s", what, S.lost);
            }
        }
        /* spin the first ~200 us (a peer a moment behind), then yield the
        ** core each round (ranks may outnumber cores: --oversubscribe) */
        if (spins > 4096 || (spins > 256 && (spins & 15) == 0 && now() - t0 > 200e-6)) {
            spins = spins > 4096 ? spins : 4097;
            sched_yield();
        }
    }
}

static ltf_status broken(const char *what, char *err, size_t errlen) {
    return fail(err, errlen, LTF_ERR_UNAVAILABLE, "%s: %s (an earlier collective failed)", what, S.lost);
}

/* The watchdog: a blocking MPI call cannot be interrupted, so when a peer
** is lost (or the call outlasts the timeout) while the main thread is in
** one, this thread prints the error, naming the peer, and ends the process
** (exit status 1); the Lua script gets no error object in that case. */
static void *watchdog_main(void *arg) {
    (void)arg;
    for (;;) {
        usleep(LIVENESS_MS * 1000);
        const char *what = atomic_load(&S.blocked_in);
        if (!what) continue;
        char who[400];
        int gone = lost_peers(who, sizeof who) >= 0;
        double waited = now() - atomic_load(&S.blocked_at);
        if (!gone && waited <= S.timeout) continue;
        if (!gone) snprintf(who, sizeof who, "no progress for %.0f s (LTF_MPI_TIMEOUT)", S.timeout);
        fprintf(stderr, "UnavailableError: %s: %s (tf/mpi.so: rank %d ends the process: the loss came inside a "
                "blocking MPI call, which cannot return an error)\n", what, who, S.rank);
        fflush(NULL);
        usleep(5 * LIVENESS_MS * 1000);
        _exit(1);
    }
    return NULL;
}

static void block_begin(const char *what) {
    atomic_store(&S.blocked_at, now());
    atomic_store(&S.blocked_in, what);
}
static void block_end(void) { atomic_store(&S.blocked_in, (const char *)NULL); }

static MPI_Datatype mpi_type(ltf_dtype dt) {
    switch (dt) {
    case LTF_DTYPE_FLOAT32: return MPI_FLOAT;
    case LTF_DTYPE_FLOAT64: return MPI_DOUBLE;
    case LTF_DTYPE_INT32: return MPI_INT32_T;
    case LTF_DTYPE_INT64: return MPI_INT64_T;
    case LTF_DTYPE_UINT8: return MPI_UINT8_T;
    default: return MPI_DATATYPE_NULL;
    }
}

static size_t type_size(ltf_dtype dt) {
    switch (dt) {
    case LTF_DTYPE_FLOAT64: case LTF_DTYPE_INT64: return 8;
    case LTF_DTYPE_UINT8: return 1;
    default: return 4;
    }
}

static MPI_Op mpi_op(ltf_reduce_op op) {
    return op == LTF_REDUCE_MAX ? MPI_MAX : op == LTF_REDUCE_MIN ? MPI_MIN : MPI_SUM;
}

#define CHECK_TYPE(what)                                                                          \
    MPI_Datatype t = mpi_type(dt);                                                                \
    if (t == MPI_DATATYPE_NULL)                                                                   \
        return fail(err, errlen, LTF_ERR_INVALID_ARGUMENT, "%s: dtype %d has no MPI type", what, (int)dt); \
    if (S.lost[0]) return broken(what, err, errlen)

static ltf_status c_check(void *ud, const char *what, const char *sig, char *err, size_t errlen) {
    if (S.lost[0]) return broken(what, err, errlen);
    size_t len = strlen(sig);
    uint64_t mine[2] = { (uint64_t)len, fnv(sig, len) };
    uint64_t *all = malloc(sizeof(uint64_t) * 2 * (size_t)S.size);
    if (!all) return fail(err, errlen, LTF_ERR_RESOURCE_EXHAUSTED, "%s: out of memory", what);
    MPI_Request req;
    int rc = MPI_Iallgather(mine, 2, MPI_UINT64_T, all, 2, MPI_UINT64_T, S.comm, &req);
    ltf_status st = rc != MPI_SUCCESS ? mpi_fail(err, errlen, what, rc) : wait_req(&req, what, err, errlen);
    int differ = 0;
    for (int r = 1; st == LTF_OK && r < S.size; r++) differ |= all[2 * r] != all[0] || all[2 * r + 1] != all[1];
    if (st != LTF_OK || !differ) {
        free(all);
        return st;
    }
    /* some text differs: gather them all and name the first rank whose text is not rank 0's */
    int *lens = malloc(sizeof(int) * (size_t)S.size), *offs = malloc(sizeof(int) * (size_t)S.size);
    size_t total = 0;
    for (int r = 0; r < S.size && lens && offs; r++) {
        uint64_t l = all[2 * r] > 65536 ? 65536 : all[2 * r];
        lens[r] = (int)l;
        offs[r] = (int)total;
        total += l;
    }
    char *texts = lens && offs ? malloc(total + 1) : NULL;
    if (!texts) {
        free(all), free(lens), free(offs);
        return fail(err, errlen, LTF_ERR_RESOURCE_EXHAUSTED, "%s: out of memory", what);
    }
    rc = MPI_Iallgatherv(sig, lens[S.rank], MPI_CHAR, texts, lens, offs, MPI_CHAR, S.comm, &req);
    st = rc != MPI_SUCCESS ? mpi_fail(err, errlen, what, rc) : wait_req(&req, what, err, errlen);
    if (st == LTF_OK) {
        int r = 1;
        while (r < S.size && all[2 * r] == all[0] && all[2 * r + 1] == all[1]) r++;
        /* show both from a little before the first differing byte */
        int n0 = lens[0], nr = lens[r], k = 0;
        const char *a = texts, *b = texts + offs[r];
        while (k < n0 && k < nr && a[k] == b[k]) k++;
        int from = k > 40 ? k - 40 : 0;
        int wa = n0 - from > 300 ? 300 : n0 - from, wb = nr - from > 300 ? 300 : nr - from;
        st = fail(err, errlen, LTF_ERR_INVALID_ARGUMENT, "%s: the ranks disagree: rank 0 has '%s%.*s%s', rank %d has '%s%.*s%s'",
                  what, from ? "..." : "", wa, a + from, n0 - from > wa ? "..." : "", r, from ? "..." : "", wb,
                  b + from, nr - from > wb ? "..." : "");
    }
    free(all), free(lens), free(offs), free(texts);
    return st;
}

static ltf_status c_all_reduce(void *ud, const void *send, void *recv, int64_t count, ltf_dtype dt, ltf_reduce_op op,
                               char *err, size_t errlen) {
    CHECK_TYPE("all_reduce");
    size_t es = type_size(dt);
    int in_place = send == recv;
    for (int64_t off = 0; off < count || (count == 0 && off == 0);) {
        int64_t n = count - off > (1 << 30) ? (1 << 30) : count - off;
        const void *sb = in_place ? MPI_IN_PLACE : (const char *)send + off * es;
        if (!S.polled) {
            if (S.die_in_call == S.rank) raise(SIGKILL);   /* the lost-worker spec: a loss inside the call */
            block_begin("all_reduce");
            int rc = MPI_Allreduce(sb, (char *)recv + off * es, (int)n, t, mpi_op(op), S.comm);
            block_end();
            if (rc != MPI_SUCCESS) return mpi_fail(err, errlen, "all_reduce", rc);
        } else {
            MPI_Request req;
            int rc = MPI_Iallreduce(sb, (char *)recv + off * es, (int)n, t, mpi_op(op), S.comm, &req);
            if (rc != MPI_SUCCESS) return mpi_fail(err, errlen, "all_reduce", rc);
            ltf_status st = wait_req(&req, "all_reduce", err, errlen);
            if (st != LTF_OK) return st;
        }
        off += n;
        if (count == 0) break;
    }
    return LTF_OK;
}

static ltf_status c_broadcast(void *ud, void *buf, int64_t count, ltf_dtype dt, int root, char *err, size_t errlen) {
    CHECK_TYPE("broadcast");
    size_t es = type_size(dt);
    for (int64_t off = 0; off < count || (count == 0 && off == 0);) {
        int64_t n = count - off > (1 << 30) ? (1 << 30) : count - off;
        if (!S.polled) {
            block_begin("broadcast");
            int rc = MPI_Bcast((char *)buf + off * es, (int)n, t, root, S.comm);
            block_end();
            if (rc != MPI_SUCCESS) return mpi_fail(err, errlen, "broadcast", rc);
        } else {
            MPI_Request req;
            int rc = MPI_Ibcast((char *)buf + off * es, (int)n, t, root, S.comm, &req);
            if (rc != MPI_SUCCESS) return mpi_fail(err, errlen, "broadcast", rc);
            ltf_status st = wait_req(&req, "broadcast", err, errlen);
            if (st != LTF_OK) return st;
        }
        off += n;
        if (count == 0) break;
    }
    return LTF_OK;
}

static ltf_status c_all_gather(void *ud, const void *send, void *recv, int64_t count, ltf_dtype dt, char *err,
                               size_t errlen) {
    CHECK_TYPE("all_gather");
    if (count > INT_MAX) return fail(err, errlen, LTF_ERR_INVALID_ARGUMENT, "all_gather: more than 2^31-1 elements per rank");
    if (!S.polled) {
        block_begin("all_gather");
        int rc = MPI_Allgather(send, (int)count, t, recv, (int)count, t, S.comm);
        block_end();
        return rc == MPI_SUCCESS ? LTF_OK : mpi_fail(err, errlen, "all_gather", rc);
    }
    MPI_Request req;
    int rc = MPI_Iallgather(send, (int)count, t, recv, (int)count, t, S.comm, &req);
    if (rc != MPI_SUCCESS) return mpi_fail(err, errlen, "all_gather", rc);
    return wait_req(&req, "all_gather", err, errlen);
}

static ltf_status c_reduce_scatter(void *ud, const void *send, void *recv, int64_t count, ltf_dtype dt,
                                   ltf_reduce_op op, char *err, size_t errlen) {
    CHECK_TYPE("reduce_scatter");
    if (count > INT_MAX) return fail(err, errlen, LTF_ERR_INVALID_ARGUMENT, "reduce_scatter: more than 2^31-1 elements per rank");
    if (!S.polled) {
        block_begin("reduce_scatter");
        int rc = MPI_Reduce_scatter_block(send, recv, (int)count, t, mpi_op(op), S.comm);
        block_end();
        return rc == MPI_SUCCESS ? LTF_OK : mpi_fail(err, errlen, "reduce_scatter", rc);
    }
    MPI_Request req;
    int rc = MPI_Ireduce_scatter_block(send, recv, (int)count, t, mpi_op(op), S.comm, &req);
    if (rc != MPI_SUCCESS) return mpi_fail(err, errlen, "reduce_scatter", rc);
    return wait_req(&req, "reduce_scatter", err, errlen);
}

static ltf_status c_barrier(void *ud, char *err, size_t errlen) {
    if (S.lost[0]) return broken("barrier", err, errlen);
    MPI_Request req;
    int rc = MPI_Ibarrier(S.comm, &req);
    if (rc != MPI_SUCCESS) return mpi_fail(err, errlen, "barrier", rc);
    return wait_req(&req, "barrier", err, errlen);
}

static void at_exit(void) {
    int fin = 0;
    MPI_Finalized(&fin);
    if (!S.inited || fin) return;
    char err[600];
    MPI_Request req;
    S.exiting = 1;
    /* tell the peers this rank leaves (one waiting for it in a collective
    ** then stops), then MPI_Finalize's wait for every peer comes as a
    ** barrier that watches them (on note_comm, apart from the collectives a
    ** peer may still be in); leave without finalizing when it fails */
    for (int r = 0; r < S.size && !S.lost[0]; r++)
        if (r != S.rank) {
            MPI_Request q;
            if (MPI_Isend(&S.rank, 1, MPI_INT, r, NOTE_TAG, S.note_comm, &q) == MPI_SUCCESS) MPI_Request_free(&q);
        }
    if (!S.lost[0] && (MPI_Ibarrier(S.note_comm, &req) != MPI_SUCCESS || wait_req(&req, "exit", err, sizeof err) != LTF_OK) &&
        !S.lost[0])
        snprintf(S.lost, sizeof S.lost, "the exit barrier failed");
    if (S.lost[0]) {
        fprintf(stderr, "tf/mpi.so: rank %d leaves without MPI_Finalize: %s\n", S.rank, S.lost);
        fflush(NULL);
        /* linger a few polls, so that the other survivors see the first
        ** loss before this exit (they name every peer found gone) */
        usleep(5 * LIVENESS_MS * 1000);
        _exit(1);
    }
    if (S.note_req != MPI_REQUEST_NULL) {
        MPI_Cancel(&S.note_req);
        MPI_Request_free(&S.note_req);
    }
    MPI_Comm_free(&S.comm);
    MPI_Finalize();
}

/* Which pids this process can check: the kernel's boot id (one per
** machine boot, also inside containers) and this process's pid namespace
** (containers on one machine have their own), hashed; the host name when
** neither can be read. Peers with the same key are checked by pid. */
static uint64_t pid_space(void) {
    char buf[512] = "";
    size_t n = 0;
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (f) {
        n = fread(buf, 1, 64, f);
        fclose(f);
    }
    ssize_t k = readlink("/proc/self/ns/pid", buf + n, sizeof buf - n - 1);
    if (k > 0) n += (size_t)k;
    if (n == 0) {
        gethostname(buf, sizeof buf - 1);
        n = strlen(buf);
    }
    return fnv(buf, n);
}

/* Whether an MPI starter launched this process (mpirun, srun with PMI/PMIx,
** MPICH's hydra); LTF_MPI=1 forces MPI_Init (a singleton), LTF_MPI=0 never. */
static int launched(void) {
    const char *f = getenv("LTF_MPI");
    if (f && *f) return strcmp(f, "0") != 0;
    static const char *const vars[] = { "OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE", "MPI_LOCALNRANKS", NULL };
    for (int i = 0; vars[i]; i++)
        if (getenv(vars[i])) return 1;
    return 0;
}

/* mpi.init() -> rank, size, comm (light userdata; nil when not launched by MPI) */
static int l_init(lua_State *L) {
    if (!S.inited && !S.started) {
        if (!launched()) {
            lua_pushinteger(L, 0);
            lua_pushinteger(L, 1);
            lua_pushnil(L);
            return 3;
        }
        int flag = 0, provided;
        MPI_Initialized(&flag);
        if (!flag && MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS)
            return luaL_error(L, "MPI_Init failed");
        S.inited = !flag;
        S.started = 1;
        MPI_Comm_dup(MPI_COMM_WORLD, &S.comm);
        MPI_Comm_set_errhandler(S.comm, MPI_ERRORS_RETURN);
        MPI_Comm_dup(S.comm, &S.note_comm);
        S.left = -1;
        MPI_Irecv(&S.note_from, 1, MPI_INT, MPI_ANY_SOURCE, NOTE_TAG, S.note_comm, &S.note_req);
        MPI_Comm_rank(S.comm, &S.rank);
        MPI_Comm_size(S.comm, &S.size);
        const char *to = getenv("LTF_MPI_TIMEOUT");
        S.timeout = to && atof(to) > 0 ? atof(to) : 300.0;
        const char *die = getenv("LTF_MPI_TEST_DIE_IN_CALL");
        S.die_in_call = die && *die ? atoi(die) : -1;
        const char *pol = getenv("LTF_MPI_POLLED");
        S.polled = pol && *pol && strcmp(pol, "0") != 0;
        if (!S.polled && pthread_create(&S.watchdog, NULL, watchdog_main, NULL) != 0) S.polled = 1;
        S.peers = calloc((size_t)S.size, sizeof(peer));
        peer me = { (int)getpid(), pid_space() };
        if (S.peers) MPI_Allgather(&me, (int)sizeof me, MPI_BYTE, S.peers, (int)sizeof me, MPI_BYTE, S.comm);
        S.api = (ltf_comm){ LTF_COMM_ABI, S.rank, S.size, NULL, "mpi", c_check, c_all_reduce, c_broadcast,
                            c_all_gather, c_reduce_scatter, c_barrier };
        atexit(at_exit);
    }
    lua_pushinteger(L, S.rank);
    lua_pushinteger(L, S.size);
    lua_pushlightuserdata(L, &S.api);
    return 3;
}

/* mpi.info() -> table: library version, timeout, lost message */
static int l_info(lua_State *L) {
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int n = 0;
    MPI_Get_library_version(v, &n);
    lua_createtable(L, 0, 4);
    lua_pushlstring(L, v, (size_t)n > 0 ? strcspn(v, "\n") : 0);
    lua_setfield(L, -2, "library");
    lua_pushnumber(L, S.timeout);
    lua_setfield(L, -2, "timeout");
    lua_pushboolean(L, S.started);
    lua_setfield(L, -2, "started");
    if (S.lost[0]) {
        lua_pushstring(L, S.lost);
        lua_setfield(L, -2, "lost");
    }
    return 1;
}

/* mpi.wtime(): CLOCK_MONOTONIC seconds (comparable between processes of a host) */
static int l_wtime(lua_State *L) {
    lua_pushnumber(L, now());
    return 1;
}

__attribute__((visibility("default"))) int luaopen_tf_mpi(lua_State *L) {
    /* stay loaded until the process ends: lua_close unloads C modules, but
    ** MPI, the watchdog thread and the exit handler outlive any lua_State */
    Dl_info info;
    if (dladdr((void *)luaopen_tf_mpi, &info) && info.dli_fname) dlopen(info.dli_fname, RTLD_NOW | RTLD_NODELETE);
    static const luaL_Reg fns[] = { {"init", l_init}, {"info", l_info}, {"wtime", l_wtime}, {NULL, NULL} };
    luaL_newlib(L, fns);
    return 1;
}
