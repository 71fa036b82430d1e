// Rank 1 never arrives at the barrier: rank 0 spins until it is killed.
#include "common.cuh"

int main(int argc, char **argv) { return deadlock_main(argc, argv, false); }
