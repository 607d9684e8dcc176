/* bench/mpi_allreduce.c: the bare MPI_Allreduce peer of bench/allreduce.lua
** (bench/allreduce.sh): float32 SUM of 1 MB and 100 MB buffers between the
** ranks of `mpirun -np 2`; prints "bare_allreduce <bytes> <median seconds>"
** per size (median of 'reps' timed calls after a warm-up, each call
** separated by a barrier as the Lua side's calls are by their own
** agreement exchange). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const size_t sizes[2] = { (size_t)1 << 20, (size_t)100 << 20 };
    const int reps[2] = { argc > 1 ? atoi(argv[1]) : 50, argc > 2 ? atoi(argv[2]) : 7 };
    for (int s = 0; s < 2; s++) {
        size_t n = sizes[s] / sizeof(float);
        float *a = malloc(sizes[s]), *b = malloc(sizes[s]);
        double *t = malloc(sizeof(double) * (size_t)reps[s]);
        for (size_t i = 0; i < n; i++) a[i] = (float)(rank + 1);
        MPI_Allreduce(a, b, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);   /* warm-up */
        for (int k = 0; k < reps[s]; k++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            MPI_Allreduce(a, b, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
            t[k] = MPI_Wtime() - t0;
        }
        qsort(t, (size_t)reps[s], sizeof(double), cmp);
        if (rank == 0) printf("bare_allreduce %zu %.6f\n", sizes[s], t[reps[s] / 2]);
        free(a), free(b), free(t);
    }
    MPI_Finalize();
    return 0;
}
