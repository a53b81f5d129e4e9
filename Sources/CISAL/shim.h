#include <stdint.h>
#include <isa-l/crc.h>
