#include <stddef.h>
#include <stdint.h>

/* The test function libFuzzer calls with each input; every fuzz target defines it with
 * @_cdecl("LLVMFuzzerTestOneInput"). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* libFuzzer's entry for programs that have their own main (LLVM 13 and later; in
 * libclang_rt.fuzzer, which `-sanitize=fuzzer` links). */
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*test_one_input)(const uint8_t *data, size_t size));
