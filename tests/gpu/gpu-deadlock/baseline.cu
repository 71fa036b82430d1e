// Every rank meets at the barrier: runs and reports.
#include "common.cuh"

int main(int argc, char **argv) { return deadlock_main(argc, argv, true); }
