/* hostile: look the driver's functions up itself, through the runtime,
 * as the seed did for cuTensorMapEncodeTiled before its frame gave it
 * cuco_tensor_map_encode: here cuStreamWaitValue32, the stream memory
 * wait that on an H200 ran a step's work in the referee's frozen gap
 * (tests/hostile/rmsnorm/wait-for-poison.c). The object check refuses
 * the driver's API past the runtime to a refereed workload, whatever the
 * program would do with it.
 * rename: cuco_prepare
 * expect: compile suspect object: imports cudaGetDriverEntryPointByVersion
 */
extern "C" void *cuco_prepare(const cuco_problem *p)
{
	void *wait_value = nullptr;
	cudaDriverEntryPointQueryResult q;
	CUCO_CUDA(cudaGetDriverEntryPointByVersion("cuStreamWaitValue32", &wait_value, 12000, cudaEnableDefault, &q));
	if (!wait_value)
		cuco_die(__FILE__, __LINE__, "no cuStreamWaitValue32", "cudaGetDriverEntryPointByVersion");
	return cuco_prepare_real(p);
}
