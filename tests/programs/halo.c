/* halo.c — a user's 1-D heat stencil: each rank owns N cells, swaps one
 * halo cell with each neighbour by two-sided messages, then updates its
 * cells. Rank 0 prints the slowest rank's time and the check's verdict. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef N
#define N 65536
#endif
#ifndef STEPS
#define STEPS 50
#endif

static void update(const double *u, double *v, int n)
{
	for (int i = 1; i <= n; i++)
		v[i] = u[i] + 0.25 * (u[i - 1] - 2 * u[i] + u[i + 1]);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	double *u = calloc(N + 2, sizeof *u), *v = calloc(N + 2, sizeof *v);
	for (int i = 1; i <= N; i++)
		u[i] = 1.0;
	int left = rank > 0 ? rank - 1 : MPI_PROC_NULL;
	int right = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
	MPI_Barrier(MPI_COMM_WORLD);
	double t0 = MPI_Wtime();
	for (int s = 0; s < STEPS; s++) {
		MPI_Request req[4];
		MPI_Irecv(&u[0], 1, MPI_DOUBLE, left, 0, MPI_COMM_WORLD, &req[0]);
		MPI_Irecv(&u[N + 1], 1, MPI_DOUBLE, right, 1, MPI_COMM_WORLD, &req[1]);
		MPI_Isend(&u[1], 1, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, &req[2]);
		MPI_Isend(&u[N], 1, MPI_DOUBLE, right, 0, MPI_COMM_WORLD, &req[3]);
		MPI_Waitall(4, req, MPI_STATUSES_IGNORE);
		if (left == MPI_PROC_NULL)
			u[0] = 1.0;
		if (right == MPI_PROC_NULL)
			u[N + 1] = 1.0;
		update(u, v, N);
		double *t = u;
		u = v;
		v = t;
	}
	double ms = (MPI_Wtime() - t0) * 1e3, slowest;
	MPI_Reduce(&ms, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	/* A constant field stays constant. */
	double err = 0;
	for (int i = 1; i <= N; i++)
		err = fmax(err, fabs(u[i] - 1.0));
	double worst;
	MPI_Reduce(&err, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	if (rank == 0) {
		printf("Time: %.4f ms\n", slowest);
		printf("Verification: %s\n", worst < 1e-12 ? "PASS" : "FAIL");
	}
	free(u);
	free(v);
	MPI_Finalize();
	return 0;
}
