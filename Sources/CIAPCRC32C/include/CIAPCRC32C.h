#ifndef CIAPCRC32C_H
#define CIAPCRC32C_H

#include <stddef.h>
#include <stdint.h>

/// Whether this processor computes CRC-32C in hardware (x86-64 SSE 4.2, or the Armv8 CRC32 extension).
int iap_crc32c_hardware_available(void);

/// Continues a CRC-32C (Castagnoli) over `count` bytes with the processor's instructions; `crc` is the running
/// value before its final inversion (start with 0xFFFFFFFF, invert the result). Call only when
/// iap_crc32c_hardware_available() returns 1.
uint32_t iap_crc32c_hardware(uint32_t crc, const void *bytes, size_t count);

#endif
