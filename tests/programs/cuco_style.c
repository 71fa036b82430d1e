/* cuco_style.c — an MPI program that prints exactly what CUCo's workloads
 * print: a block per rank, in rank order, with a Time line per timed
 * repetition and CUCo's phase lines, then rank 0's verdict after a
 * reduction of every rank's check. It scales each rank's slice of a vector,
 * all-gathers the slices and sums them. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef ELEMS
#define ELEMS 32768
#endif
#ifndef REPS
#define REPS 5
#endif

static void scale(float *x, int n, float f)
{
	for (int i = 0; i < n; i++)
		x[i] = (float)(i % 7) * f;
}

static double total(const float *x, int n)
{
	double s = 0;
	for (int i = 0; i < n; i++)
		s += x[i];
	return s;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	float *all = malloc((size_t)ELEMS * size * sizeof *all);
	float *mine = all + (size_t)rank * ELEMS;
	double ms[REPS], compute[REPS], comm[REPS], sum = 0;
	for (int rep = 0; rep < REPS; rep++) {
		MPI_Barrier(MPI_COMM_WORLD);
		double t0 = MPI_Wtime();
		scale(mine, ELEMS, 1.0f + rank);
		double t1 = MPI_Wtime();
		MPI_Allgather(MPI_IN_PLACE, 0, MPI_FLOAT, all, ELEMS, MPI_FLOAT, MPI_COMM_WORLD);
		double t2 = MPI_Wtime();
		sum = total(all, ELEMS * size);
		double t3 = MPI_Wtime();
		ms[rep] = (t3 - t0) * 1e3;
		compute[rep] = ((t1 - t0) + (t3 - t2)) * 1e3;
		comm[rep] = (t2 - t1) * 1e3;
	}
	double want = 0;
	for (int r = 0; r < size; r++)
		for (int i = 0; i < ELEMS; i++)
			want += (float)(i % 7) * (1.0f + r);
	int ok = sum == want, all_ok;
	MPI_Reduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, 0, MPI_COMM_WORLD);
	for (int r = 0; r < size; r++) {
		if (r == rank) {
			printf("\n--- RESULTS (Rank %d: %d elements) ---\n", rank, ELEMS);
			for (int rep = 0; rep < REPS; rep++)
				printf("Time: %.4f ms\n", ms[rep]);
			printf("Phase: compute = %.4f ms\n", compute[REPS - 1]);
			printf("Phase: allgather = %.4f ms\n", comm[REPS - 1]);
			fflush(stdout);
		}
		MPI_Barrier(MPI_COMM_WORLD);
	}
	if (rank == 0)
		printf("Verification: %s (max error: %.6f)\n", all_ok ? "PASS" : "FAIL", all_ok ? 0.0 : 1.0);
	free(all);
	MPI_Finalize();
	return 0;
}
