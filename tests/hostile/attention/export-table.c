/* hostile: reach the driver past the runtime through cudaGetExportTable,
 * the runtime's own door to the driver's private function tables (by a
 * table's UUID), which the object check does not name: it refuses
 * cudaGetDriverEntryPoint* and cuGetProcAddress* to a refereed workload
 * (own-driver-lookup.c) because the driver's stream memory waits start
 * queued work in the referee's frozen gap (rmsnorm/wait-for-poison.c).
 * Whether a table holds such a wait is not known here: the case only
 * asks for one (a UUID of no table, so the call fails harmlessly) and
 * then computes honestly, so it passes. The hole is the import: the
 * driver's API past the runtime is one class, whatever door it comes by.
 * rename: cuco_prepare
 * expect: compile suspect object: imports cudaGetExportTable
 */
extern "C" void *cuco_prepare(const cuco_problem *p)
{
	const void *table = nullptr;
	cudaUUID_t id;
	memset(&id, 0x5a, sizeof id);
	if (cudaGetExportTable(&table, &id) != cudaSuccess)
		(void)cudaGetLastError();
	return cuco_prepare_real(p);
}
