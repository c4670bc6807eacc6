// CRC-32C with the processor's instructions, for the file store's record checksums. The Swift side keeps a table
// implementation and uses this one only when iap_crc32c_hardware_available() says the processor has them.
#include "CIAPCRC32C.h"

#include <string.h>

#if defined(__x86_64__)

#include <cpuid.h>

int iap_crc32c_hardware_available(void) {
    unsigned int eax, ebx, ecx, edx;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) {
        return 0;
    }
    return (ecx & bit_SSE4_2) != 0;
}

__attribute__((target("sse4.2")))
uint32_t iap_crc32c_hardware(uint32_t crc, const void *data, size_t count) {
    const uint8_t *bytes = data;
    uint64_t value = crc;
    while (count >= 8) {
        uint64_t word;
        memcpy(&word, bytes, 8);
        value = __builtin_ia32_crc32di(value, word);
        bytes += 8;
        count -= 8;
    }
    uint32_t small = (uint32_t)value;
    while (count > 0) {
        small = __builtin_ia32_crc32qi(small, *bytes);
        bytes += 1;
        count -= 1;
    }
    return small;
}

#elif defined(__aarch64__) && defined(__linux__)

#include <sys/auxv.h>
#include <asm/hwcap.h>

int iap_crc32c_hardware_available(void) {
    return (getauxval(AT_HWCAP) & HWCAP_CRC32) != 0;
}

__attribute__((target("crc")))
uint32_t iap_crc32c_hardware(uint32_t crc, const void *data, size_t count) {
    const uint8_t *bytes = data;
    while (count >= 8) {
        uint64_t word;
        memcpy(&word, bytes, 8);
        crc = __builtin_arm_crc32cd(crc, word);
        bytes += 8;
        count -= 8;
    }
    while (count > 0) {
        crc = __builtin_arm_crc32cb(crc, *bytes);
        bytes += 1;
        count -= 1;
    }
    return crc;
}

#else

int iap_crc32c_hardware_available(void) {
    return 0;
}

uint32_t iap_crc32c_hardware(uint32_t crc, const void *data, size_t count) {
    (void)data;
    (void)count;
    return crc;
}

#endif
