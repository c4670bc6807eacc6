#ifndef CIAP_FUZZER_DRIVER_H
#define CIAP_FUZZER_DRIVER_H

#include <stddef.h>
#include <stdint.h>

/// libFuzzer's entry for programs that have their own `main` (see LLVM's libFuzzer documentation,
/// "Using libFuzzer as a library"). It is defined by the fuzzer runtime that `-sanitize=fuzzer` links, so only
/// the fuzzing build may call it.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*UserCb)(const uint8_t *Data, size_t Size));

#endif
