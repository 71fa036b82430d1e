/* objcheck.c — the candidate's object, checked before it is linked
 * (docs/trust.md, "The candidate's object").
 *
 * DESIGN
 * A candidate's code is compiled alone, to a relocatable x86-64 object,
 * and the trusted frame (main, timing, the referee's channel) is compiled
 * apart and linked with it. A link is a meeting of names: whatever the
 * object defines globally can take the place of a name the frame or a
 * library means, and whatever it imports it can call. So the object is
 * judged by its names, its initializers and its instructions, from the
 * file itself — what the compiler made, after every macro, trigraph and
 * token paste, which a scan of the text cannot see the same way:
 *
 * 1. Definitions. Refused: a name a linked library exports (read from
 *    the dynamic symbol tables of this machine's libraries and of those
 *    they need: clock_gettime, MPI_Wtime, malloc, cublasGemmEx; nvcc links
 *    the CUDA runtime statically, where a definition of cudaMemcpy would
 *    take the frame's calls or break the link), or a name the frame
 *    defines; a weak definition outside a COMDAT group; an ifunc (its
 *    resolver runs while the program loads); a common or versioned
 *    (.symver) symbol. Then nothing outside the object may bind to what it
 *    defines but the family's entry points: C++'s vague linkage (inline
 *    functions, template instances and their statics, each a COMDAT group
 *    the linker keeps once by name) is renamed (RENAMED), so that the
 *    candidate keeps its own copy and neither the frame's copy nor a
 *    library's export of that name is bound to it (an executable's
 *    definition would take a library's own calls: this is why a C++
 *    inline that libstdc++ also exports is accepted, renamed, where a C
 *    one is refused); every other global is made local (objcopy -G).
 * 2. Nothing runs before or after main on its own: an entry of .init_array,
 *    .fini_array, .preinit_array, .ctors or .dtors, or code in .init or
 *    .fini, is refused — but for the functions a compiler makes itself,
 *    held to their shape instruction by instruction (the initializers
 *    table): nvcc's module registration in every .cu object (as -O3 and
 *    -fno-inline make it; a workload built at -O0 calls through a
 *    pointer there, which no shape check can follow, and is refused), and
 *    <iostream>'s std::ios_base::Init, which GCC before 13 makes in every
 *    file that includes it. A candidate's constructor, or a C++ global
 *    with a dynamic initializer, beside them is an entry more, or a call
 *    or reference they never make. A candidate's macros cannot reach
 *    nvcc's registration (it is compiled after cudafe++ has expanded
 *    them), and cudafe++ 13 drops `#pragma GCC optimize` with a warning.
 * 3. Imports: every undefined name must be on the family's allowlist (the
 *    imports table: first matching row decides; a row may also require
 *    that a library exports the name, so "what libm exports" is a row).
 *    Refusals name the function that uses the import.
 * 4. Instructions (objdump -d, every executable section): no syscall,
 *    sysenter, int (int $0x80), and no far transfer (lcall, ljmp, lret,
 *    iret: into 32-bit mode, whose system calls differ); no bytes objdump
 *    shows as data, no data symbol among the code; no direct jump or
 *    rip-relative reference into the middle of an instruction (how a
 *    syscall hides inside another instruction's bytes). Sections the
 *    linker would make executable unseen are refused: writable and
 *    executable, a code section's name without the executable flag, a
 *    missing or executable .note.GNU-stack, LTO bytecode (code made at
 *    link time).
 *
 * What this does not do. It cannot tell inline assembly as such: the
 * object keeps no mark of it, so what is refused is what assembly could
 * add that compiled C, C++ and CUDA never contain (the instructions and
 * sections above). A jump through a register or a return address it
 * computes can still reach a syscall hidden in some instruction's bytes,
 * or in a library's code; a candidate can still read and write any memory
 * of its process, the frame's included. The seccomp filter and the
 * referee outside the process are the guarantees; this check is defence
 * in depth that makes the easy routes fail loudly, with the name at fault.
 *
 * The tools. objdump and objcopy parse the candidate's bytes, which may aim
 * at a bug of their parsers: they run as a compile does (the stage user,
 * its sandbox and filter), within a time and an output bound, past which
 * the object is refused naming the bound (binutils()).
 *
 * Every refusal is one line, "object: ...", that names the symbol, section
 * or instruction and why; the evaluator files it under `suspect`. The
 * check is deterministic: the same object gives the same first refusal
 * (structure, then definitions, initializers, imports, instructions, each
 * in the file's order). Its cost per candidate is one read of the object,
 * one objdump and one objcopy (docs/trust.md gives the figures); the
 * libraries' names are read once per evaluator (eval_objrules_new). */
#include "eval/eval_int.h"

#include <ctype.h>
#include <elf.h>
#include <errno.h>
#include <fnmatch.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TOOL_S 60.0          /* the most objdump or objcopy may take on one object */
#define TOOL_OUTPUT_MB 256   /* the most output objdump may give about one */

/* ---- the tables ---------------------------------------------------------------------- */

enum {
	FAM_CPU = 1 << CUCO_FAMILY_CPU_MPI,
	FAM_CUDA = 1 << CUCO_FAMILY_CUDA,
	FAM_NCCL = 1 << CUCO_FAMILY_CUDA_NCCL,
	FAM_ALL = FAM_CPU | FAM_CUDA | FAM_NCCL,
	FAM_GPU = FAM_CUDA | FAM_NCCL,   /* nvcc: C++, the CUDA runtime */
	FAM_MPI = FAM_CPU | FAM_NCCL,
	REFEREED = 1 << 30,              /* a row for refereed workloads only */
};

/* Where a library is looked for: the system's folders, the MPI wrapper's
 * -L folders, CUDA's, NCCL's (then CUDA's and the system's). */
enum { AT_SYSTEM, AT_MPI, AT_CUDA, AT_NCCL };

/* The libraries a family's programs link, whose names a candidate may not
 * define. The libraries each of them needs are read too. */
#define OBJ_LIBS(X) \
	X(LIBC,    "libc.so.6",       AT_SYSTEM, FAM_ALL,  "libc") \
	X(LIBM,    "libm.so.6",       AT_SYSTEM, FAM_ALL,  "libm") \
	X(PTHREAD, "libpthread.so.0", AT_SYSTEM, FAM_ALL,  "libpthread") \
	X(GCC_S,   "libgcc_s.so.1",   AT_SYSTEM, FAM_ALL,  "the compiler's runtime (libgcc_s)") \
	X(STDCXX,  "libstdc++.so.6",  AT_SYSTEM, FAM_GPU,  "libstdc++") \
	X(MPI,     "libmpi.so",       AT_MPI,    FAM_MPI,  "Open MPI's libmpi") \
	X(CUDART,  "libcudart.so",    AT_CUDA,   FAM_GPU,  "the CUDA runtime") \
	X(CUBLAS,  "libcublas.so",    AT_CUDA,   FAM_GPU,  "cuBLAS") \
	X(NCCL,    "libnccl.so.2",    AT_NCCL,   FAM_NCCL, "NCCL")

enum lib_id {
	LIB_NONE = -2,   /* an import row that asks no library */
	LIB_FRAME = -1,  /* the frame's objects */
#define ID(id, file, at, fams, what) LIB_##id,
	OBJ_LIBS(ID)
#undef ID
	LIB_TABLE        /* libraries past the table: those they need */
};

static const struct {
	const char *file;
	int at, families;
	const char *what;
} lib_table[] = {
#define ROW(id, file, at, fams, what) { file, at, fams, what },
	OBJ_LIBS(ROW)
#undef ROW
};

/* How an import row asks the library: any name it exports, a function,
 * an object. */
enum { AS_ANY, AS_CODE, AS_DATA };
enum { ALLOW, REFUSE };

#define H_FILES "file, pipe or device I/O: a candidate computes in memory and prints to stdout"
#define H_UNCOUNTED "calls the host-call counter does not see"
#define H_AFTER "runs code after main (a static object with a destructor registers one: keep such " \
	"state where setup and teardown hold it)"

/* What a candidate may import: the first row whose pattern (fnmatch, with
 * @(a|b) for alternatives) matches the name decides, where the row's
 * library, if it names one, exports the name as asked. A name no row
 * allows is refused. Each row says why. */
#define OBJ_IMPORTS(X) \
	/* refused, though broader rows below would allow them */ \
	X(REFUSE, "syscall", NONE, AS_ANY, FAM_ALL, "makes any system call by its number") \
	X(REFUSE, "io_uring_*", NONE, AS_ANY, FAM_ALL, "io_uring: system calls made by the kernel, out of " \
		"the filter's sight") \
	X(REFUSE, "@(dlopen|dlmopen|dlsym|dlvsym|dlinfo|dladdr|dladdr1|dlerror|dl_iterate_phdr|_dl_*)", \
		NONE, AS_ANY, FAM_ALL, "loads code or looks up symbols at run time (the frame's, the libraries')") \
	X(REFUSE, "@(mmap|mmap64|munmap|mremap|mprotect|pkey_*|memfd_create|shm_open|shm_unlink|" \
		"remap_file_pages)", NONE, AS_ANY, FAM_ALL, \
		"maps memory or changes its protection (executable memory, shared files)") \
	X(REFUSE, "@(open|open64|openat|openat64|__open*|creat|creat64|fopen|fopen64|freopen*|fdopen|" \
		"tmpfile*|mkstemp*|mkostemp*|opendir|fdopendir|readdir*|scandir*|read|__read*|pread*|__pread*|" \
		"readv|preadv*|write|pwrite*|writev|pwritev*|fread|__fread*|fgets|__fgets*|fgetc|getc|getchar|" \
		"getline|getdelim|scanf|fscanf|__isoc99_scanf|__isoc99_fscanf|__isoc23_scanf|__isoc23_fscanf|" \
		"stat|stat64|fstat*|lstat*|__xstat*|__fxstat*|__lxstat*|statx|access|faccessat*|readlink*|" \
		"__readlink*|unlink*|rename*|mkdir*|rmdir|chdir|fchdir|chmod|fchmod*|chown|truncate*|" \
		"ftruncate*|link|linkat|symlink*|dup|dup2|dup3|fcntl*|ioctl|close|fclose|sendfile*|splice|" \
		"tee|vmsplice|copy_file_range|dprintf|vdprintf|closedir|rewinddir|seekdir|telldir|dirfd)", NONE, AS_ANY, FAM_ALL, H_FILES) \
	X(REFUSE, "@(socket|socketpair|connect|bind|listen|accept|accept4|send|sendto|sendmsg|sendmmsg|" \
		"recv|recvfrom|recvmsg|recvmmsg|__recv*|getaddrinfo|gethostbyname*|getsockopt|setsockopt|" \
		"shutdown|getpeername|getsockname)", NONE, AS_ANY, FAM_ALL, "sockets") \
	X(REFUSE, "@(fork|vfork|_Fork|clone|clone3|__clone*|exec*|fexecve|posix_spawn*|system|popen|" \
		"pclose|daemon|wait|waitpid|waitid|wait3|wait4)", NONE, AS_ANY, FAM_ALL, \
		"starts programs or processes, or waits for them") \
	X(REFUSE, "@(getenv|secure_getenv|__secure_getenv|environ|__environ|_environ|setenv|unsetenv|" \
		"putenv|clearenv)", NONE, AS_ANY, FAM_ALL, "reads or changes the environment") \
	X(REFUSE, "@(signal|sigaction|__sysv_signal|bsd_signal|sigset|kill|killpg|raise|tgkill|tkill|" \
		"sigqueue|pthread_kill|pthread_sigqueue|alarm|setitimer|timer_create|sigaltstack|signalfd*)", \
		NONE, AS_ANY, FAM_ALL, "signals, to this process or others, and timers that raise them") \
	X(REFUSE, "@(ptrace|process_vm_readv|process_vm_writev|process_madvise|pidfd_*)", NONE, AS_ANY, \
		FAM_ALL, "reads or changes other processes") \
	X(REFUSE, "@(prctl|arch_prctl|setrlimit*|prlimit*|setpriority|set*uid|set*gid|setgroups|setsid|" \
		"setpgid|setns|unshare|chroot|personality|capset|sched_setaffinity|sched_setscheduler|" \
		"sched_setparam|mlock*|munlock*)", NONE, AS_ANY, FAM_ALL, \
		"changes the process's attributes, limits or privileges") \
	X(REFUSE, "@(keyctl|add_key|request_key)", NONE, AS_ANY, FAM_ALL, "the kernel's keyrings") \
	X(REFUSE, "@(atexit|__cxa_atexit|on_exit|at_quick_exit|__cxa_thread_atexit*|pthread_atfork|" \
		"__register_atfork)", NONE, AS_ANY, FAM_ALL, H_AFTER) \
	X(REFUSE, "PMPI_*", NONE, AS_ANY, FAM_MPI, "MPI's profiling interface: " H_UNCOUNTED) \
	X(REFUSE, "pnccl*", NONE, AS_ANY, FAM_NCCL, "NCCL's profiling names: " H_UNCOUNTED) \
	X(REFUSE, "MPI_File_*", NONE, AS_ANY, FAM_MPI, "MPI-IO: files") \
	X(REFUSE, "@(MPI_Comm_spawn*|MPI_Open_port|MPI_Close_port|MPI_Comm_accept|MPI_Comm_connect|" \
		"MPI_Comm_join|MPI_Comm_disconnect|MPI_Publish_name|MPI_Unpublish_name|MPI_Lookup_name)", \
		NONE, AS_ANY, FAM_MPI, "starts processes outside the job, or connects to them") \
	X(REFUSE, "@(*filebuf*|*fstream*|*__basic_file*|*filesystem*|_ZSt3cin|_ZSt4wcin)", NONE, \
		AS_ANY, FAM_GPU, "files and standard input, through libstdc++") \
	X(REFUSE, "main", NONE, AS_ANY, FAM_ALL, "calls the frame's main") \
	X(REFUSE, "@(cudaGetDriverEntryPoint*|cuGetProcAddress*|cudaGetExportTable|cuGetExportTable)", NONE, \
		AS_ANY, FAM_GPU | REFEREED, "the driver's API past the runtime: its stream memory waits start " \
		"queued work in the referee's frozen gap, where no probe sees it") \
	X(REFUSE, "@(cudaGraphDebugDotPrint|cudaLogsDumpToFile|cudaLibraryLoadFromFile)", NONE, AS_ANY, \
		FAM_GPU, H_FILES " (the CUDA runtime's own calls that write or read a file)") \
	/* allowed */ \
	X(ALLOW, "@(malloc|calloc|realloc|reallocarray|free|aligned_alloc|posix_memalign|memalign|mem*|" \
		"str*|wmem*|wcs*|bcopy|bzero|explicit_bzero|atoi|atol|atoll|atof|__isoc23_strto*|qsort|" \
		"qsort_r|bsearch|abs|labs|llabs|div|ldiv|lldiv|snprintf|sprintf|vsnprintf|vsprintf|asprintf|" \
		"vasprintf|sscanf|vsscanf|__isoc99_sscanf|__isoc99_vsscanf|__isoc23_sscanf|" \
		"__isoc23_vsscanf|to*|is*|__ctype_b_loc|__ctype_tolower_loc|__ctype_toupper_loc|rand|rand_r|" \
		"srand|random|srandom|random_r|srandom_r|*rand48|*rand48_r|getrandom|" \
		"@(__memcpy|__memmove|__mempcpy|__memset|__stpcpy|__stpncpy|__strcat|__strcpy|__strncat|" \
		"__strncpy|__snprintf|__sprintf|__vsnprintf|__vsprintf|__explicit_bzero)_chk|" \
		"__stack_chk_fail|__errno_location|__assert_fail|__assert_perror_fail|abort|exit|_exit|" \
		"_Exit|quick_exit)", NONE, AS_ANY, FAM_ALL, "memory, strings and numbers") \
	X(ALLOW, "@(clock|clock_gettime|clock_getres|gettimeofday|time|nanosleep|clock_nanosleep|usleep|" \
		"sleep|sched_yield|sched_getcpu|sched_getaffinity|sysconf|get_nprocs|get_nprocs_conf|getpid|" \
		"gettid|localtime*|gmtime*|strftime|difftime|mktime)", NONE, AS_ANY, FAM_ALL, \
		"clocks, sleep and the machine's size (the verdict's clock is not the candidate's)") \
	X(ALLOW, "*", LIBM, AS_CODE, FAM_ALL, "math: what libm exports") \
	X(ALLOW, "@(printf|vprintf|fprintf|vfprintf|puts|fputs|fputs_unlocked|putchar|putchar_unlocked|" \
		"putc|putc_unlocked|_IO_putc|fputc|fputc_unlocked|fwrite|fwrite_unlocked|fflush|" \
		"fflush_unlocked|perror|setvbuf|setbuf|setlinebuf|__printf_chk|__fprintf_chk|__vprintf_chk|" \
		"__vfprintf_chk|__overflow|stdout|stderr)", NONE, AS_ANY, FAM_ALL, \
		"output to stdout and stderr") \
	X(ALLOW, "@(pthread_*|__pthread_key_create|sem_init|sem_destroy|sem_wait|sem_trywait|" \
		"sem_timedwait|sem_clockwait|sem_post|sem_getvalue|thrd_*|mtx_*|cnd_*|tss_*|call_once)", \
		NONE, AS_ANY, FAM_ALL, "threads and their locks") \
	X(ALLOW, "@(__atomic_*|__sync_*|__cpu_model|__cpu_indicator_init|__cpu_features2|" \
		"__tls_get_addr|__libc_single_threaded|_GLOBAL_OFFSET_TABLE_|__dso_handle)", NONE, AS_ANY, \
		FAM_ALL, "atomics and the compiler's runtime") \
	X(ALLOW, "*", GCC_S, AS_CODE, FAM_ALL, "the compiler's runtime: what libgcc_s exports") \
	X(ALLOW, "MPI_*", MPI, AS_CODE, FAM_MPI, "MPI") \
	X(ALLOW, "ompi_*", MPI, AS_DATA, FAM_MPI, "Open MPI's predefined handles " \
		"(MPI_COMM_WORLD is &ompi_mpi_comm_world)") \
	X(ALLOW, "*", CUDART, AS_ANY, FAM_GPU, "the CUDA runtime") \
	X(ALLOW, "*", NCCL, AS_ANY, FAM_NCCL, "NCCL") \
	X(ALLOW, "*", CUBLAS, AS_ANY, FAM_GPU, "cuBLAS") \
	X(ALLOW, "@(_Z*|__cxa_*|__gxx_personality_v0|__dynamic_cast)", STDCXX, AS_ANY, FAM_GPU, \
		"the C++ runtime: what libstdc++ exports") \
	X(ALLOW, "*", FRAME, AS_ANY, FAM_ALL, "the frame's functions")

static const struct import_row {
	int verdict;
	const char *pattern;
	int lib, as, families;
	const char *help;
} import_table[] = {
#define ROW(verdict, pattern, lib, as, fams, help) { verdict, pattern, LIB_##lib, as, fams, help },
	OBJ_IMPORTS(ROW)
#undef ROW
};

/* The functions a compiler makes that run before or after main, and may
 * stay (GPU families: nvcc's host code is C++), each held to its row: its
 * name (a local function; fnmatch); its kind: an .init_array entry (one of
 * each row at most), a helper only those call, or what one hands to
 * atexit; the undefined names it may call or take the address of; whether
 * it may take the address of code in the object, and of data other than
 * zero-initialized (.bss); the function it must hand to atexit, if it
 * calls atexit. Found with nvcc 13 (`nvcc -c` on workloads/rmsnorm/seed.cu
 * without main, at -O3 and with -fno-inline: -O0 calls through a pointer,
 * which no shape check can follow) and GCC 12's <iostream>;
 * tests/eval/fixtures/objcheck/cuda has them. Any function of these names
 * is held to its row, whether an entry names it or not. */
enum { INIT_ENTRY, INIT_HELPER, INIT_AT_EXIT };
#define OBJ_INITIALIZERS(X) \
	X(INIT_ENTRY, "_ZL24__sti____cudaRegisterAllv", "@(__cudaRegister*|atexit)", true, true, \
		"_ZL26__cudaUnregisterBinaryUtilv", "nvcc's module registration") \
	X(INIT_HELPER, "_ZL31__nv_cudaEntityRegisterCallbackPPv", "__cudaRegister*", true, true, NULL, \
		"nvcc's registration of the module's kernels") \
	X(INIT_HELPER, "_ZL22____nv_dummy_param_refPv", "", false, true, NULL, "nvcc's placeholder") \
	X(INIT_AT_EXIT, "_ZL26__cudaUnregisterBinaryUtilv", "__cudaUnregisterFatBinary", false, true, NULL, \
		"nvcc's module unregistration") \
	X(INIT_ENTRY, "_GLOBAL__sub_I_*", "@(_ZNSt8ios_base4InitC1Ev|_ZNSt8ios_base4InitD1Ev|__cxa_atexit|" \
		"__dso_handle)", false, false, NULL, "<iostream>'s std::ios_base::Init")

static const struct init_row {
	int kind;
	const char *name, *refs;
	bool code, data;
	const char *at_exit, *what;
} init_table[] = {
#define ROW(kind, name, refs, code, data, at_exit, what) { kind, name, refs, code, data, at_exit, what },
	OBJ_INITIALIZERS(ROW)
#undef ROW
};

/* Instructions no compiled C, C++ or CUDA host code contains: a
 * mnemonic, or the start of every mnemonic of a kind (objdump writes
 * lretq, iretq, sysretq). */
#define H_FAR "changes the code segment (into 32-bit mode, whose system calls differ)"
#define OBJ_INSNS(X) \
	X("syscall",  false, "a raw system call") \
	X("sysenter", false, "a raw system call") \
	X("int",      false, "a software interrupt (int $0x80: a 32-bit system call)") \
	X("int1",     false, "a debug interrupt") \
	X("into",     false, "an overflow interrupt") \
	X("sysexit",  true,  "a privileged return from a system call") \
	X("sysret",   true,  "a privileged return from a system call") \
	X("lcall",    true,  "a far call that " H_FAR) \
	X("ljmp",     true,  "a far jump that " H_FAR) \
	X("lret",     true,  "a far return that " H_FAR) \
	X("iret",     true,  "an interrupt return that " H_FAR)

static const struct { const char *mnemonic; bool prefix; const char *why; } insn_table[] = {
#define ROW(m, prefix, why) { m, prefix, why },
	OBJ_INSNS(ROW)
#undef ROW
};

/* ---- the rules ------------------------------------------------------------------------ */

typedef struct lib {
	char path[PATH_MAX];
	char name[96];    /* "libc"; a library others need: its soname */
	char what[256];   /* for messages: "libc (libc.so.6)", "libopen-pal.so.40, which Open MPI's libmpi needs" */
	eval_elf elf;
} lib;

/* A name a library or the frame defines. */
typedef struct known {
	const char *name;
	int lib;          /* index into libs, or LIB_FRAME */
	bool data;        /* an object, not a function */
} known;

struct eval_objrules {
	cuco_family family;
	bool refereed;
	char **entries;
	int nentries;
	lib *libs;        /* the table's (LIB_TABLE of them, path "" where a family has none), then those they need */
	int nlibs;
	known *names;     /* sorted by name */
	int nnames;
	eval_obj *frame;
	int nframe;
	char objdump[PATH_MAX], objcopy[PATH_MAX];
	const eval_sandbox *sandbox;  /* how the tools run: eval_objspec */
	const eval_filter *filter;
	double tool_s;
};

static int by_name(const void *a, const void *b)
{
	const known *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	return c ? c : x->lib - y->lib;
}

/* The first entry of names with this name, or NULL. */
static const known *find(const eval_objrules *r, const char *name)
{
	size_t lo = 0, hi = (size_t)r->nnames;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (strcmp(r->names[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < (size_t)r->nnames && strcmp(r->names[lo].name, name) == 0 ? &r->names[lo] : NULL;
}

/* Whether lib defines name, as asked. */
static bool lib_has(const eval_objrules *r, int lib_id, int as, const char *name)
{
	const known *k = find(r, name);
	for (; k && k < r->names + r->nnames && strcmp(k->name, name) == 0; k++)
		if (k->lib == lib_id && (as == AS_ANY || (as == AS_DATA) == k->data))
			return true;
	return false;
}

static void add_name(eval_objrules *r, const char *name, int lib_id, bool data)
{
	r->names = cuco_xrealloc(r->names, (size_t)(r->nnames + 1) * sizeof *r->names);
	r->names[r->nnames++] = (known){ name, lib_id, data };
}

static bool is_dir_file(const char *dir, const char *file, char *out, size_t size)
{
	return snprintf(out, size, "%s/%s", dir, file) < (int)size && access(out, R_OK) == 0;
}

static const char *const system_dirs[] = { "/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
	"/lib64", "/usr/lib64", "/lib", "/usr/lib", "/usr/local/lib" };

static bool in_dirs(char *const *dirs, int n, const char *file, char *out, size_t size)
{
	for (int i = 0; i < n; i++)
		if (is_dir_file(dirs[i], file, out, size))
			return true;
	return false;
}

/* The folders the MPI wrapper's link line names (-L). */
static int mpi_dirs(const char *mpicc, char ***dirs, int *n, cuco_err *err)
{
	char *argv[] = { (char *)mpicc, "--showme:link", NULL };
	cuco_buf out = { 0 };
	if (!mpicc || !*mpicc || eval_query(argv, 30, &out) != 0) {
		cuco_buf_free(&out);
		return cuco_errf(err, CUCO_EENV, "objcheck: `%s --showme:link` failed: Open MPI's "
			"libraries cannot be found", mpicc && *mpicc ? mpicc : "mpicc");
	}
	cuco_argv words = { 0 };
	cuco_argv_push_words(&words, out.data ? out.data : "");
	for (size_t i = 0; i < words.n; i++)
		if (strncmp(words.v[i], "-L", 2) == 0 && words.v[i][2]) {
			*dirs = cuco_xrealloc(*dirs, (size_t)(*n + 1) * sizeof **dirs);
			(*dirs)[(*n)++] = cuco_xstrdup(words.v[i] + 2);
		}
	cuco_argv_free(&words);
	cuco_buf_free(&out);
	return CUCO_OK;
}

/* Where a table library is: its path, or CUCO_EENV naming where it was
 * looked for. */
static int locate(const eval_objspec *spec, int id, char *const *mpi, int nmpi, char *out, size_t size,
	cuco_err *err)
{
	const char *file = lib_table[id].file;
	const char *cuda = spec->cuda_home && *spec->cuda_home ? spec->cuda_home : "/usr/local/cuda";
	const char *nccl = spec->nccl_home && *spec->nccl_home ? spec->nccl_home : cuda;
	char buf[3][PATH_MAX];
	char *homes[3] = { buf[0], buf[1], buf[2] };
	int at = lib_table[id].at;
	if (at == AT_MPI && in_dirs(mpi, nmpi, file, out, size))
		return CUCO_OK;
	if (at == AT_NCCL) {
		snprintf(buf[0], sizeof buf[0], "%s/lib", nccl);
		snprintf(buf[1], sizeof buf[1], "%s/lib64", nccl);
		if (in_dirs(homes, 2, file, out, size))
			return CUCO_OK;
	}
	if (at == AT_CUDA || at == AT_NCCL) {
		snprintf(buf[0], sizeof buf[0], "%s/lib64", cuda);
		snprintf(buf[1], sizeof buf[1], "%s/lib", cuda);
		snprintf(buf[2], sizeof buf[2], "%s/targets/x86_64-linux/lib", cuda);
		if (in_dirs(homes, 3, file, out, size))
			return CUCO_OK;
	}
	if (in_dirs((char *const *)system_dirs, (int)(sizeof system_dirs / sizeof *system_dirs), file, out,
		size))
		return CUCO_OK;
	return cuco_errf(err, CUCO_EENV, "objcheck: %s (%s) is not in %s nor the system's library "
		"folders%s", file, lib_table[id].what,
		at == AT_MPI ? "the folders `mpicc --showme:link` names" : at == AT_SYSTEM ? "-" : cuda,
		at == AT_CUDA || at == AT_NCCL ? " (set CUCO_CUDA_HOME or CUCO_NCCL_HOME)" : "");
}

/* A library's names; needed_by: the one that needs it, -1 for the table's. */
static int load_lib(eval_objrules *r, const char *path, const char *name, int needed_by, cuco_err *err)
{
	r->libs = cuco_xrealloc(r->libs, (size_t)(r->nlibs + 1) * sizeof *r->libs);
	lib *l = &r->libs[r->nlibs];
	memset(l, 0, sizeof *l);
	cuco_strlcpy(l->path, path, sizeof l->path);
	cuco_strlcpy(l->name, name, sizeof l->name);
	if (needed_by < 0)
		snprintf(l->what, sizeof l->what, "%s (%s)", name, *path ? strrchr(path, '/') + 1 : "-");
	else
		snprintf(l->what, sizeof l->what, "%s, which %s needs", name, r->libs[needed_by].name);
	r->nlibs++;
	return *path ? eval_elf_read(path, &l->elf, err) : CUCO_OK;
}

/* The libraries the loaded ones need, by soname: in the folder of the one
 * that needs it (where $ORIGIN runpaths point), else the system's. One
 * that cannot be found is left out: the program's own link would fail. */
static int load_needed(eval_objrules *r, cuco_err *err)
{
	for (int i = 0; i < r->nlibs && r->nlibs < 256; i++)
		for (int k = 0; k < r->libs[i].elf.nneeded; k++) {
			const char *soname = r->libs[i].elf.needed[k];
			bool have = false;
			for (int j = 0; j < r->nlibs && !have; j++)
				have = *r->libs[j].path && strcmp(strrchr(r->libs[j].path, '/') + 1, soname) == 0;
			char dir[PATH_MAX], path[PATH_MAX];
			cuco_strlcpy(dir, r->libs[i].path, sizeof dir);
			char *own[] = { dirname(dir) };
			if (have || !(in_dirs(own, 1, soname, path, sizeof path)
				|| in_dirs((char *const *)system_dirs, (int)(sizeof system_dirs / sizeof *system_dirs),
					soname, path, sizeof path)))
				continue;
			int rc = load_lib(r, path, soname, i, err);
			if (rc != CUCO_OK)
				return rc;
		}
	return CUCO_OK;
}

static int load_frame(eval_objrules *r, char *const *frame, cuco_err *err)
{
	for (int i = 0; frame && frame[i]; i++) {
		r->frame = cuco_xrealloc(r->frame, (size_t)(r->nframe + 1) * sizeof *r->frame);
		int rc = eval_obj_read(frame[i], &r->frame[r->nframe], err);
		if (rc != CUCO_OK)
			return rc;
		const eval_obj *o = &r->frame[r->nframe++];
		for (int k = 1; k < o->nsymbols; k++) {
			const eval_obj_symbol *s = &o->symbols[k];
			if (s->bind != STB_LOCAL && s->shndx != SHN_UNDEF && *s->name && s->type != STT_SECTION
				&& s->type != STT_FILE)
				add_name(r, s->name, LIB_FRAME, s->type == STT_OBJECT || s->type == STT_TLS);
		}
	}
	return CUCO_OK;
}

int eval_objrules_new(const eval_objspec *spec, eval_objrules **out, cuco_err *err)
{
	*out = NULL;
	eval_objrules *r = cuco_xcalloc(1, sizeof *r);
	r->family = spec->family;
	r->refereed = spec->refereed;
	r->sandbox = spec->sandbox;
	r->filter = spec->filter;
	r->tool_s = spec->tool_s > 0 ? spec->tool_s : TOOL_S;
	cuco_argv entries = { 0 };
	cuco_argv_push_words(&entries, spec->entries ? spec->entries : "");
	r->entries = entries.v;
	r->nentries = (int)entries.n;
	char **mpi = NULL;
	int nmpi = 0, rc = CUCO_OK, fam = 1 << spec->family;
	if (r->nentries == 0)
		rc = cuco_errf(err, CUCO_EUSAGE, "objcheck: no entry points: the frame calls none of the "
			"candidate's functions");
	else if (!cuco_which("objdump", r->objdump, sizeof r->objdump)
		|| !cuco_which("objcopy", r->objcopy, sizeof r->objcopy))
		rc = cuco_errf(err, CUCO_EENV, "objcheck: objdump and objcopy (binutils) are not on PATH");
	if (rc == CUCO_OK && (fam & FAM_MPI))
		rc = mpi_dirs(spec->mpicc, &mpi, &nmpi, err);
	for (int id = 0; rc == CUCO_OK && id < LIB_TABLE; id++) {
		char path[PATH_MAX] = "";
		if (lib_table[id].families & fam)
			rc = locate(spec, id, mpi, nmpi, path, sizeof path, err);
		if (rc == CUCO_OK)
			rc = load_lib(r, path, lib_table[id].what, -1, err);
	}
	for (int i = 0; i < nmpi; i++)
		free(mpi[i]);
	free(mpi);
	if (rc == CUCO_OK)
		rc = load_needed(r, err);
	for (int i = 0; rc == CUCO_OK && i < r->nlibs; i++) {
		const eval_elf *e = &r->libs[i].elf;
		for (int k = 0; k < e->nexported; k++)
			add_name(r, e->exported[k], i, false);
		for (int k = 0; k < e->nexported_data; k++)
			add_name(r, e->exported_data[k], i, true);
	}
	if (rc == CUCO_OK)
		rc = load_frame(r, spec->frame, err);
	if (rc != CUCO_OK) {
		eval_objrules_free(r);
		return rc;
	}
	qsort(r->names, (size_t)r->nnames, sizeof *r->names, by_name);
	*out = r;
	return CUCO_OK;
}

void eval_objrules_free(eval_objrules *r)
{
	if (!r)
		return;
	for (int i = 0; i < r->nentries; i++)
		free(r->entries[i]);
	free(r->entries);
	for (int i = 0; i < r->nlibs; i++)
		eval_elf_free(&r->libs[i].elf);
	free(r->libs);
	for (int i = 0; i < r->nframe; i++)
		eval_obj_free(&r->frame[i]);
	free(r->frame);
	free(r->names);
	free(r);
}

/* ---- one object ------------------------------------------------------------------------ */

typedef struct vetted {
	int symbol;                 /* the function */
	const struct init_row *row;
} vetted;

typedef struct check {
	const eval_objrules *r;
	const eval_obj *o;
	eval_objcheck_fn fn;
	void *arg;
	bool stop;                  /* fn asked for no more */
	vetted vet[8];              /* the compiler's initializers found, and what they hand to atexit */
	int nvet;
	int *rel_order;             /* relocations by section and offset */
} check;

/* A refusal told to fn, with whether it is only of a name defined
 * nowhere (check_import). */
static void tell(check *c, const char *function, bool undefined, const char *line)
{
	if (!c->stop)
		c->stop = !c->fn(line, function ? function : "", undefined, c->arg);
}

static void say(check *c, const char *function, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void say(check *c, const char *function, const char *fmt, ...)
{
	if (c->stop)
		return;
	char line[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	tell(c, function, false, line);
}

static bool match(const char *pattern, const char *name)
{
	return fnmatch(pattern, name, FNM_EXTMATCH) == 0;
}

static bool executable(const eval_obj *o, unsigned shndx)
{
	return shndx < (unsigned)o->nsections && (o->sections[shndx].flags & SHF_EXECINSTR);
}

/* The name as the linker sees it for binding: without a .symver suffix. */
static void base_name(const char *name, char *out, size_t size)
{
	snprintf(out, size, "%.*s", (int)strcspn(name, "@"), name);
}

/* What a relocation points at: its symbol, or for a section symbol the
 * function or object there (addend, plus 4 when the field ends the
 * instruction, as PC-relative ones do); -1 when none. */
static int reloc_target(const eval_obj *o, const eval_obj_reloc *rel)
{
	const eval_obj_symbol *s = &o->symbols[rel->symbol];
	if (s->type != STT_SECTION)
		return (int)rel->symbol;
	bool pc = rel->type == R_X86_64_PC32 || rel->type == R_X86_64_PLT32;
	int64_t off = rel->addend + (pc ? 4 : 0);
	return off < 0 ? -1 : eval_obj_symbol_at(o, s->shndx, (uint64_t)off);
}

/* ---- sections ---- */

static bool init_section(const eval_obj_section *s)
{
	static const char *const names[] = { ".init_array", ".fini_array", ".preinit_array", ".ctors",
		".dtors" };
	if (s->type == SHT_INIT_ARRAY || s->type == SHT_FINI_ARRAY || s->type == SHT_PREINIT_ARRAY)
		return true;
	for (size_t i = 0; i < sizeof names / sizeof *names; i++)
		if (strncmp(s->name, names[i], strlen(names[i])) == 0)
			return true;
	return false;
}

static void check_sections(check *c)
{
	const eval_obj *o = c->o;
	bool stack = false;
	for (int i = 1; i < o->nsections; i++) {
		const eval_obj_section *s = &o->sections[i];
		bool code_name = strcmp(s->name, ".text") == 0 || strncmp(s->name, ".text.", 6) == 0;
		if (strcmp(s->name, ".init") == 0 || strcmp(s->name, ".fini") == 0)
			say(c, NULL, "object: section %s: code the linker puts into %s, run %s main", s->name,
				s->name[2] == 'n' ? "_init" : "_fini", s->name[2] == 'n' ? "before" : "after");
		else if ((s->flags & SHF_WRITE) && (s->flags & SHF_EXECINSTR))
			say(c, NULL, "object: section %s is writable and executable: code written at run time",
				s->name);
		else if (code_name && !(s->flags & SHF_EXECINSTR) && s->size > 0)
			say(c, NULL, "object: section %s has a code section's name but not the executable "
				"flag: the linker would put its bytes among the code, unseen by the instruction check",
				s->name);
		else if (strncmp(s->name, ".gnu.lto_", 9) == 0)
			say(c, NULL, "object: section %s holds LTO bytecode: code made at link time, which "
				"this check cannot see", s->name);
		if (strcmp(s->name, ".note.GNU-stack") == 0)
			stack = !(s->flags & SHF_EXECINSTR);
	}
	if (!stack)
		say(c, NULL, "object: .note.GNU-stack is missing or asks for an executable stack: code "
			"written to the stack could run");
}

/* ---- definitions ---- */

static bool is_entry(const eval_objrules *r, const char *name)
{
	for (int i = 0; i < r->nentries; i++)
		if (strcmp(r->entries[i], name) == 0)
			return true;
	return false;
}

static void check_definition(check *c, const eval_obj_symbol *s)
{
	const eval_obj *o = c->o;
	const eval_objrules *r = c->r;
	bool comdat = s->shndx < o->nsections && o->sections[s->shndx].comdat;
	char base[512];
	base_name(s->name, base, sizeof base);
	const known *k = find(r, base);
	if (s->type == STT_GNU_IFUNC)
		say(c, s->name, "object: defines %s as an ifunc: its resolver runs while the program "
			"loads, before main", s->name);
	else if (s->shndx == SHN_COMMON)
		say(c, s->name, "object: %s is a common symbol (.comm, -fcommon): merged at link time "
			"with any definition of that name", s->name);
	else if (strchr(s->name, '@'))
		say(c, s->name, "object: defines %s, a versioned name (.symver): it would bind where the "
			"library's version is meant", s->name);
	else if (k && k->lib >= 0 && !(comdat && strncmp(s->name, "_Z", 2) == 0))
		say(c, s->name, "object: defines %s, a name of %s: the frame's and the libraries' calls "
			"to it would run the candidate's code", s->name, r->libs[k->lib].what);
	else if (k && k->lib == LIB_FRAME && !comdat && !is_entry(r, s->name))
		/* An entry point the frame gives a weak default (cuco_prepare,
		 * cuco_mpi_thread) is the program's to define. */
		say(c, s->name, "object: defines %s, a name the frame defines: the frame's calls to it "
			"would run the candidate's code", s->name);
	else if (comdat && strpbrk(s->name, "= \t"))
		say(c, s->name, "object: defines \"%s\", a name no compiler makes", s->name);
	else if (s->bind == STB_WEAK && !comdat)
		say(c, s->name, "object: defines %s weakly (outside a C++ COMDAT group): a name either "
			"side of the link may take", s->name);
}

static void check_symbols(check *c)
{
	const eval_obj *o = c->o;
	for (int k = 1; k < o->nsymbols; k++) {
		const eval_obj_symbol *s = &o->symbols[k];
		bool defined = s->shndx != SHN_UNDEF;
		if (s->type == STT_GNU_IFUNC && s->bind == STB_LOCAL)
			say(c, s->name, "object: defines %s as an ifunc: its resolver runs while the program "
				"loads, before main", s->name);
		else if (defined && s->bind != STB_LOCAL && *s->name)
			check_definition(c, s);
		if (s->type == STT_OBJECT && executable(o, s->shndx))
			say(c, s->name, "object: %s is data in the executable section %s: bytes the "
				"instruction check would not decode", s->name, o->sections[s->shndx].name);
	}
}

/* ---- initializers ---- */

static const struct init_row *init_row_of(const check *c, const eval_obj_symbol *s)
{
	if (!((1 << c->r->family) & FAM_GPU) || s->bind != STB_LOCAL || s->type != STT_FUNC)
		return NULL;
	for (size_t i = 0; i < sizeof init_table / sizeof *init_table; i++)
		if (match(init_table[i].name, s->name))
			return &init_table[i];
	return NULL;
}

static const char *when(const struct init_row *row)
{
	return row->kind == INIT_AT_EXIT ? "after" : "before";
}

/* Every function of the object a row names: held to it from here on. */
static void vet_all(check *c)
{
	const eval_obj *o = c->o;
	for (int k = 1; k < o->nsymbols; k++) {
		const struct init_row *row = init_row_of(c, &o->symbols[k]);
		if (row && c->nvet == (int)(sizeof c->vet / sizeof *c->vet))
			say(c, o->symbols[k].name, "object: more functions named as a compiler's initializers "
				"than any compiler makes");
		else if (row)
			c->vet[c->nvet++] = (vetted){ k, row };
	}
}

static const vetted *vetted_fn(const check *c, int symbol)
{
	for (int i = 0; i < c->nvet; i++)
		if (c->vet[i].symbol == symbol)
			return &c->vet[i];
	return NULL;
}

/* Each entry of an initializer section: the start of a vetted entry
 * function, of a row not seen before, or a refusal. */
static void check_inits(check *c)
{
	const eval_obj *o = c->o;
	bool used[sizeof init_table / sizeof *init_table] = { false };
	vet_all(c);
	for (int i = 1; i < o->nsections; i++) {
		const eval_obj_section *s = &o->sections[i];
		if (!init_section(s))
			continue;
		const char *at = strstr(s->name, "fini") || strstr(s->name, "dtors") || s->type == SHT_FINI_ARRAY
			? "after" : "before";
		bool plain = strcmp(s->name, ".init_array") == 0 && s->type == SHT_INIT_ARRAY;
		for (uint64_t off = 0; off < s->size; off += 8) {
			int target = -1;
			bool at_start = false;  /* the entry is the function's address, not inside it */
			for (int k = 0; k < o->nrelocs; k++) {
				const eval_obj_reloc *rel = &o->relocs[k];
				if (rel->section != (uint32_t)i || rel->offset != off || rel->type != R_X86_64_64)
					continue;
				target = reloc_target(o, rel);
				bool by_section = o->symbols[rel->symbol].type == STT_SECTION;
				at_start = target >= 0 && (by_section ? o->symbols[target].value == (uint64_t)rel->addend
					: rel->addend == 0);
			}
			const vetted *v = plain && at_start ? vetted_fn(c, target) : NULL;
			size_t row = v ? (size_t)(v->row - init_table) : 0;
			if (v && v->row->kind == INIT_ENTRY && !used[row]) {
				used[row] = true;
				continue;
			}
			const eval_obj_symbol *fn = target >= 0 ? &o->symbols[target] : NULL;
			say(c, fn ? fn->name : NULL, "object: section %s runs %s %s main (a constructor, a "
				"destructor, or a C++ global with a dynamic initializer): code the frame does not "
				"call", s->name, fn && *fn->name ? fn->name : "code", at);
		}
	}
}

/* The vetted function whose bytes hold (section, offset), or NULL. */
static const vetted *vetted_at(const check *c, uint32_t section, uint64_t offset)
{
	for (int i = 0; i < c->nvet; i++) {
		const eval_obj_symbol *s = &c->o->symbols[c->vet[i].symbol];
		if (s->shndx == section && offset >= s->value && offset - s->value < s->size)
			return &c->vet[i];
	}
	return NULL;
}

/* What a vetted function's relocations point at: names of its row, code
 * and data as the row allows. */
static void check_vetted_refs(check *c)
{
	const eval_obj *o = c->o;
	for (int k = 0; k < o->nrelocs; k++) {
		const eval_obj_reloc *rel = &o->relocs[k];
		const vetted *v = vetted_at(c, rel->section, rel->offset);
		if (!v)
			continue;
		const eval_obj_symbol *t = &o->symbols[rel->symbol];
		const char *fn = o->symbols[v->symbol].name;
		bool code = executable(o, t->shndx);
		bool bss = t->shndx < o->nsections && o->sections[t->shndx].type == SHT_NOBITS;
		if (t->shndx == SHN_UNDEF ? !match(v->row->refs, t->name)
			: code ? !v->row->code : !(v->row->data || bss))
			say(c, fn, "object: %s runs %s main and does more than %s: it refers to %s", fn,
				when(v->row), v->row->what, *t->name ? t->name
				: t->shndx < o->nsections ? o->sections[t->shndx].name : "an absolute address");
	}
}

/* ---- imports ---- */

#define UNDEFINED "defined nowhere: no library of this family nor the frame has it, so the " \
	"link would fail"

static const struct import_row *import_rule(const eval_objrules *r, const char *name)
{
	for (size_t i = 0; i < sizeof import_table / sizeof *import_table; i++) {
		const struct import_row *row = &import_table[i];
		if ((row->families & (1 << r->family)) && (!(row->families & REFEREED) || r->refereed)
			&& match(row->pattern, name)
			&& (row->lib == LIB_NONE || lib_has(r, row->lib, row->as, name)))
			return row;
	}
	return NULL;
}

static void check_import(check *c, int symbol)
{
	const eval_obj *o = c->o;
	const eval_obj_symbol *s = &o->symbols[symbol];
	char name[512];
	base_name(s->name, name, sizeof name);
	const struct import_row *row = import_rule(c->r, name);
	if (row && row->verdict == ALLOW)
		return;
	/* Each function that uses it, once, but those of a vetted initializer
	 * that names it. A name neither a library of the family nor the frame
	 * defines is the program's mistake (a function it calls and no longer
	 * defines), which the link would refuse: said as that. */
	bool undefined = !row && !find(c->r, name);
	const char *help = row ? row->help : undefined ? UNDEFINED : "not among the names a "
		"candidate of this family may use (objcheck.c)";
	char line[512];
	bool used = false;
	int last = -2;
	for (int k = 0; k < o->nrelocs && !c->stop; k++) {
		const eval_obj_reloc *rel = &o->relocs[k];
		if (rel->symbol != (uint32_t)symbol)
			continue;
		used = true;
		const vetted *v = vetted_at(c, rel->section, rel->offset);
		int user = eval_obj_symbol_at(o, rel->section, rel->offset);
		if ((v && match(v->row->refs, name)) || user == last)
			continue;
		last = user;
		const char *where = user >= 0 ? o->symbols[user].name : o->sections[rel->section].name;
		snprintf(line, sizeof line, "object: imports %s (in %s): %s", s->name, where, help);
		tell(c, where, undefined, line);
	}
	if (!used) {
		snprintf(line, sizeof line, "object: imports %s: %s", s->name, help);
		tell(c, NULL, undefined, line);
	}
}

static void check_imports(check *c)
{
	const eval_obj *o = c->o;
	for (int k = 1; k < o->nsymbols && !c->stop; k++) {
		const eval_obj_symbol *s = &o->symbols[k];
		if (s->shndx == SHN_UNDEF && s->bind != STB_LOCAL && *s->name)
			check_import(c, k);
	}
}

/* ---- instructions ---- */

/* objdump's view of the executable sections, line by line. */
typedef struct pass {
	check *c;
	int cursor;               /* the last section objdump showed, in the file's order */
	int section;              /* the one being read; 0: none */
	int shown;                /* executable sections with bytes it showed */
	char function[256];       /* the last <symbol>: header */
	unsigned char *start;     /* a bit per byte: an instruction starts there */
	struct jump { uint64_t from, to; char function[256]; } *jumps;
	int njumps;
	/* the instruction read last, judged once the next one shows where it ends */
	bool pending;
	uint64_t at;
	char text[512];
	bool rdi_ok;              /* in a vetted function: %rdi holds what it may hand to atexit */
} pass;

static int by_place(const void *a, const void *b, void *arg)
{
	const eval_obj *o = arg;
	const eval_obj_reloc *x = &o->relocs[*(const int *)a], *y = &o->relocs[*(const int *)b];
	if (x->section != y->section)
		return x->section < y->section ? -1 : 1;
	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* The relocations of a section in [from, to): indices into o->relocs. */
static int relocs_in(const check *c, uint32_t section, uint64_t from, uint64_t to, int *out, int max)
{
	const eval_obj *o = c->o;
	int lo = 0, hi = o->nrelocs, n = 0;
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		const eval_obj_reloc *r = &o->relocs[c->rel_order[mid]];
		if (r->section < section || (r->section == section && r->offset < from))
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < o->nrelocs && n < max; lo++) {
		const eval_obj_reloc *r = &o->relocs[c->rel_order[lo]];
		if (r->section != section || r->offset >= to)
			break;
		out[n++] = c->rel_order[lo];
	}
	return n;
}

/* The words of an instruction's text before any <symbol> or # comment. */
static int words(const char *text, char w[][64], int max)
{
	int n = 0;
	const char *end = text + strcspn(text, "<#");
	for (const char *p = text; p < end && n < max;) {
		p += strspn(p, " \t,");
		size_t len = strcspn(p, " \t,<#");
		if (!len)
			break;
		snprintf(w[n++], sizeof w[0], "%.*s", (int)len, p);
		p += len;
	}
	return n;
}

static bool prefix_word(const char *w)
{
	static const char *const prefixes[] = { "lock", "rep", "repz", "repnz", "repe", "repne", "notrack",
		"bnd", "data16", "data32", "addr16", "addr32", "cs", "ds", "es", "fs", "gs", "ss", "xacquire",
		"xrelease", "{vex}", "{vex3}", "{evex}", "{disp32}", "{disp8}" };
	if (strncmp(w, "rex", 3) == 0)
		return true;
	return cuco_name_index(prefixes, sizeof prefixes / sizeof *prefixes, w) >= 0;
}

static int refused_insn(const char *w)
{
	for (size_t i = 0; i < sizeof insn_table / sizeof *insn_table; i++)
		if (insn_table[i].prefix ? strncmp(w, insn_table[i].mnemonic, strlen(insn_table[i].mnemonic)) == 0
			: strcmp(w, insn_table[i].mnemonic) == 0)
			return (int)i;
	return -1;
}

/* One decoded instruction, as judge() read it. */
typedef struct insn {
	const char *mnem, *dest;  /* the mnemonic; the last operand (AT&T: the destination) */
	bool branch;
	bool has;                 /* a target the assembler resolved: `to` in this section */
	uint64_t to;
	const int *rels;          /* the relocations in its bytes */
	int nrels;
} insn;

/* An instruction of a vetted function. It jumps within itself, calls a
 * name (which check_vetted_refs holds to its row) through a relocation,
 * or calls the start of another vetted function; and it hands atexit
 * only what its row says, loaded into %rdi by a lea the linker resolves. */
static void vetted_insn(pass *p, const vetted *v, const insn *in)
{
	check *c = p->c;
	const eval_obj *o = c->o;
	const eval_obj_symbol *self = &o->symbols[v->symbol];
	const char *callee = NULL;
	int target = -1;
	uint64_t dsec = (uint64_t)p->section, doff = in->to;  /* where a branch goes */
	bool known = in->has;
	for (int i = 0; i < in->nrels; i++) {
		const eval_obj_reloc *rel = &o->relocs[in->rels[i]];
		const eval_obj_symbol *s = &o->symbols[rel->symbol];
		if (s->shndx == SHN_UNDEF) {
			callee = s->name;
			continue;
		}
		target = reloc_target(o, rel);
		dsec = s->shndx;
		doff = (s->type == STT_SECTION ? 0 : s->value) + (uint64_t)(rel->addend + 4);
		known = true;
	}
	if (in->branch && !callee) {
		bool within = known && dsec == self->shndx && doff >= self->value && doff - self->value < self->size;
		int to = known ? eval_obj_symbol_at(o, (uint32_t)dsec, doff) : -1;
		if (!within && !(to >= 0 && vetted_fn(c, to) && o->symbols[to].value == doff))
			say(c, self->name, "object: %s runs %s main and does more than %s: its %s at %s+0x%llx "
				"goes to code of the object", self->name, when(v->row), v->row->what, in->mnem,
				o->sections[p->section].name, (unsigned long long)p->at);
	} else if (in->branch && strcmp(callee, "atexit") == 0 && !p->rdi_ok) {
		say(c, self->name, "object: %s runs %s main and does more than %s: it hands atexit a "
			"function other than %s, to run after main", self->name, when(v->row), v->row->what,
			v->row->at_exit ? v->row->at_exit : "its own");
	} else if (!in->branch && (strcmp(in->dest, "%rdi") == 0 || strcmp(in->dest, "%edi") == 0)) {
		p->rdi_ok = strcmp(in->mnem, "lea") == 0 && target >= 0 && v->row->at_exit
			&& strcmp(o->symbols[target].name, v->row->at_exit) == 0;
	}
	if (in->branch && strncmp(in->mnem, "call", 4) == 0)
		p->rdi_ok = false;
}

static void note_jump(pass *p, uint64_t to)
{
	p->jumps = cuco_xrealloc(p->jumps, (size_t)(p->njumps + 1) * sizeof *p->jumps);
	struct jump *j = &p->jumps[p->njumps++];
	*j = (struct jump){ .from = p->at, .to = to };
	cuco_strlcpy(j->function, p->function, sizeof j->function);
}

/* The instruction read last, now that `end` shows where it ends. */
static void judge(pass *p, uint64_t end)
{
	check *c = p->c;
	if (!p->pending || c->stop)
		return;
	p->pending = false;
	const eval_obj *o = c->o;
	const char *sec = o->sections[p->section].name;
	if (strcmp(p->text, "...") == 0 || strstr(p->text, "(bad)")) {
		say(c, p->function, "object: %s+0x%llx (in %s): bytes that do not decode as instructions: "
			"data among the code, or an instruction hidden in it", sec, (unsigned long long)p->at,
			p->function);
		return;
	}
	char w[8][64];
	int n = words(p->text, w, 8), m = 0;
	while (m < n && prefix_word(w[m]))
		m++;
	for (int k = m; k < n; k++) {
		int bad = refused_insn(w[k]);
		if (bad >= 0) {
			say(c, p->function, "object: instruction %s at %s+0x%llx (in %s): %s", p->text, sec,
				(unsigned long long)p->at, p->function, insn_table[bad].why);
			return;
		}
	}
	const char *mnem = m < n ? w[m] : "";
	bool branch = mnem[0] == 'j' || strncmp(mnem, "call", 4) == 0 || strncmp(mnem, "loop", 4) == 0
		|| strcmp(mnem, "xbegin") == 0;
	/* A direct target: the first operand as a bare hex offset; else a
	 * rip-relative operand's, from objdump's comment. Either must start
	 * an instruction of the section. */
	char *endp = NULL;
	uint64_t to = 0;
	bool has = false;
	if (branch && m + 1 < n && isxdigit((unsigned char)w[m + 1][0])) {
		to = strtoull(w[m + 1], &endp, 16);
		has = endp && !*endp;
	}
	const char *hash = strstr(p->text, "# ");
	if (!has && hash) {
		to = strtoull(hash + 2, &endp, 16);
		has = endp && endp != hash + 2;
	}
	int rels[8];
	int nrels = relocs_in(c, (uint32_t)p->section, p->at, end, rels, 8);
	if (has && !nrels)
		note_jump(p, to);
	const vetted *v = vetted_at(c, (uint32_t)p->section, p->at);
	if (!v)
		return;
	const eval_obj_symbol *s = &o->symbols[v->symbol];
	insn in = { mnem, n > m + 1 ? w[n - 1] : "", branch, has, to, rels, nrels };
	if (!branch && has && !nrels && (to < s->value || to >= s->value + s->size))
		say(c, s->name, "object: %s runs %s main and does more than %s: it refers to %s+0x%llx",
			s->name, when(v->row), v->row->what, sec, (unsigned long long)to);
	else
		vetted_insn(p, v, &in);
}

/* End of a section: every direct jump and rip-relative reference the
 * assembler resolved lands where an instruction starts. */
static void finish_section(pass *p)
{
	check *c = p->c;
	if (!p->section)
		return;
	const eval_obj_section *s = &c->o->sections[p->section];
	judge(p, s->size);
	for (int i = 0; i < p->njumps && !c->stop; i++) {
		const struct jump *j = &p->jumps[i];
		if (j->to == s->size || (j->to < s->size && (p->start[j->to / 8] & (1u << (j->to % 8)))))
			continue;
		say(c, j->function, "object: %s+0x%llx (in %s) jumps or points to %s+0x%llx, %s: code "
			"hidden in another instruction's bytes", s->name, (unsigned long long)j->from, j->function,
			s->name, (unsigned long long)j->to, j->to < s->size ? "inside an instruction"
			: "past the section's end");
	}
	free(p->start);
	free(p->jumps);
	p->start = NULL;
	p->jumps = NULL;
	p->njumps = 0;
	p->section = 0;
}

/* "Disassembly of section NAME:": the next executable section in the
 * file's order, which is objdump's. */
static void next_section(pass *p, const char *name)
{
	finish_section(p);
	const eval_obj *o = p->c->o;
	for (int i = p->cursor + 1; i < o->nsections; i++)
		if (executable(o, (unsigned)i) && strcmp(o->sections[i].name, name) == 0) {
			p->cursor = p->section = i;
			p->shown++;
			p->start = cuco_xcalloc(o->sections[i].size / 8 + 2, 1);
			p->function[0] = '\0';
			return;
		}
	say(p->c, NULL, "object: objdump shows a section %s this check did not expect", name);
}

static void on_objdump(const char *line, size_t len, void *arg)
{
	pass *p = arg;
	const char *head = "Disassembly of section ";
	(void)len;
	if (strncmp(line, head, strlen(head)) == 0) {
		char name[256];
		snprintf(name, sizeof name, "%.*s", (int)strcspn(line + strlen(head), ":"), line + strlen(head));
		next_section(p, name);
		return;
	}
	const char *lt = strchr(line, '<');
	if (!p->section || p->c->stop)
		return;
	if (isxdigit((unsigned char)line[0]) && lt && strstr(line, ">:")) {
		judge(p, strtoull(line, NULL, 16));  /* the last instruction ends where this symbol starts */
		snprintf(p->function, sizeof p->function, "%.*s", (int)strcspn(lt + 1, ">"), lt + 1);
		p->rdi_ok = false;
		return;
	}
	char *end;
	uint64_t at = strtoull(line, &end, 16);
	if (end == line || *end != ':' || end[1] != '\t')
		return;
	judge(p, at);
	if (at < p->c->o->sections[p->section].size)
		p->start[at / 8] |= (unsigned char)(1u << (at % 8));
	p->pending = true;
	p->at = at;
	snprintf(p->text, sizeof p->text, "%s", end + 2);
}

/* A binutils command on the object, each line of its output (both
 * streams) to on_line. It reads the file `in` of the folder dir and
 * writes its file `out` (NULL: none), a placeholder made here. The object
 * is the candidate's and may aim at a bug of the tool's parser: the tool
 * runs as a compile does (the stage user, its sandbox and filter, where
 * the rules have them), within r->tool_s and TOOL_OUTPUT_MB. CUCO_EDATA,
 * the object's fault, naming the tool and its bound: it could not read
 * the object, hung on it, or wrote without end about it; CUCO_EENV when it
 * could not run (exit status 126 or 127: not found, not started). */
static int binutils(const eval_objrules *r, char *const *argv, const char *dir, const char *in,
	const char *out, eval_line_fn on_line, void *arg, cuco_err *err)
{
	const char *tool = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	char tools[PATH_MAX], placeholder[PATH_MAX + 64];
	cuco_strlcpy(tools, argv[0], sizeof tools);
	snprintf(placeholder, sizeof placeholder, "%s/%s", dir, out ? out : "");
	int rc = out ? eval_sandbox_placeholder(r->sandbox, placeholder, err) : CUCO_OK;
	if (rc != CUCO_OK)
		return rc;
	/* The tool's own folder is shown too: a binutils off the system's. */
	eval_sandbox_view v = { .workdir = dir, .files = { { in, false }, { out, true } },
		.layers = { { dirname(tools), EVAL_SHOW } }, .seccomp = r->filter && eval_filter_available() };
	char **box = r->sandbox ? eval_sandbox_argv(r->sandbox, &v) : NULL;
	eval_limits lim = { .wall_s = r->tool_s, .grace_s = 1, .fsize_mb = 1024, .max_procs = 8,
		.log_cap = 0, .out_cap = (size_t)TOOL_OUTPUT_MB << 20, .pass_env = cuco_env_get()->pass_env,
		.sandbox = box, .filter = r->filter,
		.user = r->sandbox ? &r->sandbox->user : NULL };
	eval_stage st;
	rc = eval_stage_run(argv, dir, "/dev/null", &lim, on_line, arg, &st, err);
	eval_sandbox_argv_free(box);
	if (rc != CUCO_OK)
		return rc;
	char last[200];
	eval_first_line(st.tail, last, sizeof last);
	if (st.too_much_output)
		return cuco_errf(err, CUCO_EDATA, "%s wrote more than %d MiB about it (the tools' bound)", tool,
			TOOL_OUTPUT_MB);
	if (st.timed_out)
		return cuco_errf(err, CUCO_EDATA, "%s did not finish within %.0f s (the tools' bound: a parser "
			"the object makes hang)", tool, r->tool_s);
	if (st.exit_code == 126 || st.exit_code == 127)  /* not started: the machine's fault */
		return cuco_errf(err, CUCO_EENV, "%s could not run: %s", tool, last);
	if (st.exit_code != 0 || st.signal)
		return cuco_errf(err, CUCO_EDATA, "%s cannot read it (%s %d): %s", tool,
			st.signal ? "signal" : "exit status", st.signal ? st.signal : st.exit_code, last);
	return CUCO_OK;
}

static void check_instructions(check *c, const char *path, cuco_err *err, int *rc)
{
	pass p = { .c = c };
	char *argv[] = { (char *)c->r->objdump, "-d", "-w", "-z", "--no-show-raw-insn", (char *)path, NULL };
	char dir[PATH_MAX];
	cuco_strlcpy(dir, path, sizeof dir);
	cuco_err why = { 0 };
	*rc = binutils(c->r, argv, dirname(dir), strrchr(path, '/') + 1, NULL, on_objdump, &p, &why);
	if (*rc == CUCO_EDATA)  /* the object is at fault: unreadable, or past a bound */
		say(c, NULL, "object: %s", why.msg);
	else if (*rc != CUCO_OK)
		*err = why;
	*rc = *rc == CUCO_EDATA ? CUCO_OK : *rc;
	finish_section(&p);
	int expected = 0;
	for (int i = 1; i < c->o->nsections; i++)
		expected += executable(c->o, (unsigned)i) && c->o->sections[i].size > 0
			&& c->o->sections[i].type != SHT_NOBITS;
	if (*rc == CUCO_OK && p.shown < expected)
		say(c, NULL, "object: objdump showed %d of its %d executable sections: what it did not show "
			"went unchecked", p.shown, expected);
}

/* ---- the entry points -------------------------------------------------------------------- */

int eval_objcheck_scan(const char *obj, const eval_objrules *r, eval_objcheck_fn fn, void *arg,
	cuco_err *err)
{
	char path[PATH_MAX];
	if (!realpath(obj, path))
		return cuco_errf(err, CUCO_EENV, "%s: %s", obj, strerror(errno));
	eval_obj o;
	cuco_err why = { 0 };
	check c = { .r = r, .o = &o, .fn = fn, .arg = arg };
	int rc = eval_obj_read(path, &o, &why);
	if (rc == CUCO_EDATA) {
		say(&c, NULL, "object: %s", why.msg);
		return CUCO_OK;
	} else if (rc != CUCO_OK) {
		*err = why;
		return rc;
	}
	if (o.machine != EM_X86_64)
		rc = cuco_errf(err, CUCO_EENV, "%s: objcheck reads x86-64 objects only (ELF machine %u)",
			obj, o.machine);
	c.rel_order = cuco_xcalloc((size_t)o.nrelocs + 1, sizeof *c.rel_order);
	for (int i = 0; i < o.nrelocs; i++)
		c.rel_order[i] = i;
	qsort_r(c.rel_order, (size_t)o.nrelocs, sizeof *c.rel_order, by_place, &o);
	if (rc == CUCO_OK) {
		check_sections(&c);
		check_symbols(&c);
		check_inits(&c);
		check_vetted_refs(&c);
		check_imports(&c);
		if (!c.stop)
			check_instructions(&c, path, err, &rc);
	}
	free(c.rel_order);
	eval_obj_free(&o);
	return rc;
}

/* The first refusal, and whether every one names only what is defined
 * nowhere. */
typedef struct refusals {
	cuco_buf first;
	bool defence;  /* one is a defence's, not a name defined nowhere */
} refusals;

static bool note(const char *why, const char *function, bool undefined, void *arg)
{
	(void)function;
	refusals *f = arg;
	if (!f->first.len)
		cuco_buf_puts(&f->first, why);
	f->defence |= !undefined;
	return !f->defence;
}

/* What becomes of the object's names: C++'s vague linkage (every COMDAT
 * group's signature and every global of a COMDAT section) is renamed, so
 * that no other object's group of that name can stand in for the
 * candidate's or take it; then every global but the entry points is made
 * local. The object is read again to see that it is so. */
#define RENAMED "cuco.candidate."

static bool renamed(const eval_obj *o, int k)
{
	const eval_obj_symbol *s = &o->symbols[k];
	for (int i = 1; i < o->nsections; i++)
		if (o->sections[i].type == SHT_GROUP && o->sections[i].info == (uint32_t)k)
			return true;
	return s->bind != STB_LOCAL && s->shndx != SHN_UNDEF && s->shndx < o->nsections
		&& o->sections[s->shndx].comdat;
}

/* objcopy writes the object rewritten beside it, as the stage user where
 * there is one: taken as cuco's own (a copy) before it replaces obj. */
static int take(const char *local, const char *obj, cuco_err *err)
{
	int fd = eval_cache_own(local);
	int rc = fd >= 0 && rename(local, obj) == 0 ? CUCO_OK
		: cuco_errf(err, CUCO_EENV, "%s: %s", fd < 0 ? local : obj, strerror(errno));
	if (fd >= 0)
		close(fd);
	return rc;
}

static int localize(const char *obj, const eval_objrules *r, cuco_err *err)
{
	eval_obj o;
	char path[PATH_MAX], dir[PATH_MAX], local[PATH_MAX + 8];
	if (!realpath(obj, path))
		return cuco_errf(err, CUCO_EENV, "%s: %s", obj, strerror(errno));
	obj = path;
	cuco_strlcpy(dir, path, sizeof dir);
	snprintf(local, sizeof local, "%s.local", path);
	int rc = eval_obj_read(obj, &o, err);
	if (rc != CUCO_OK)
		return rc;
	cuco_argv argv = { 0 };
	cuco_buf seen = { 0 };
	cuco_argv_push(&argv, r->objcopy);
	for (int i = 0; i < r->nentries; i++) {
		cuco_argv_push(&argv, "-G");
		cuco_argv_push(&argv, r->entries[i]);
	}
	for (int k = 1; k < o.nsymbols; k++) {
		const char *name = o.symbols[k].name;
		if (*name && !is_entry(r, name) && renamed(&o, k) && cuco_buf_add_once(&seen, name)) {
			char word[1200];
			snprintf(word, sizeof word, "%s=" RENAMED "%s", name, name);
			cuco_argv_push(&argv, "--redefine-sym");
			cuco_argv_push(&argv, word);
		}
	}
	cuco_argv_push(&argv, obj);
	cuco_argv_push(&argv, local);
	eval_obj_free(&o);
	rc = binutils(r, argv.v, dirname(dir), strrchr(obj, '/') + 1, strrchr(local, '/') + 1, NULL, NULL, err);
	cuco_argv_free(&argv);
	cuco_buf_free(&seen);
	if (rc == CUCO_OK)
		rc = take(local, obj, err);
	unlink(local);
	if (rc == CUCO_OK)
		rc = eval_obj_read(obj, &o, err);
	for (int k = 1; rc == CUCO_OK && k < o.nsymbols; k++) {
		const eval_obj_symbol *s = &o.symbols[k];
		if (s->bind != STB_LOCAL && s->shndx != SHN_UNDEF && *s->name && !is_entry(r, s->name)
			&& strncmp(s->name, RENAMED, strlen(RENAMED)) != 0)
			rc = cuco_errf(err, CUCO_EENV, "%s: objcopy left %s global", obj, s->name);
	}
	eval_obj_free(&o);
	return rc;
}

int eval_objcheck(const char *obj, const eval_objrules *r, char *why, size_t size, bool *unlinkable,
	cuco_err *err)
{
	refusals found = { 0 };
	why[0] = '\0';
	*unlinkable = false;
	int rc = eval_objcheck_scan(obj, r, note, &found, err);
	if (rc == CUCO_OK && found.first.len) {
		cuco_strlcpy(why, found.first.data, size);
		*unlinkable = !found.defence;
	} else if (rc == CUCO_OK) {
		cuco_err failed = { 0 };
		rc = localize(obj, r, &failed);
		if (rc == CUCO_EDATA)
			snprintf(why, size, "object: %s", failed.msg);
		else if (rc != CUCO_OK)
			*err = failed;
		rc = rc == CUCO_EDATA ? CUCO_OK : rc;
	}
	cuco_buf_free(&found.first);
	return rc;
}

/* The names a family's frame calls in the program (workloads/common/
 * cuco_step.h, workloads/gpu-common/cuco_gpu_step.h): they stay global in
 * the candidate's object, every other of its globals is made local. */
const char *eval_frame_entries(cuco_family family)
{
	switch (family) {
	case CUCO_FAMILY_CPU_MPI: return "cuco_setup cuco_step cuco_teardown cuco_mpi_thread";
	case CUCO_FAMILY_CUDA: return "cuco_launch cuco_prepare";
	case CUCO_FAMILY_CUDA_NCCL: break;  /* no frame yet */
	case CUCO_FAMILY_COUNT: break;
	}
	return "";
}
