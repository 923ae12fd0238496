#include "model/row_layout.h"

#include "gguf/quant_blocks.h"

#include <cstring>

namespace sinkscope {

namespace {
constexpr size_t kBlockBytes = sizeof(quant::BlockQ4_0);
}

bool canRegroupQ4_0(int64_t rows, int64_t blocks) {
    return rows > 0 && rows % kQ4_0x8Rows == 0 && blocks > 0 && blocks <= kQ4_0x8MaxBlocks;
}

size_t q4_0x8Offset(int64_t blocks, int64_t r, int64_t b) {
    const int64_t run = r / kQ4_0x8Rows;
    return static_cast<size_t>((run * blocks + b) * kQ4_0x8Rows + r % kQ4_0x8Rows) * kBlockBytes;
}

void regroupQ4_0(const uint8_t* src, int64_t rows, int64_t blocks, uint8_t* dst) {
    const size_t rowBytes = static_cast<size_t>(blocks) * kBlockBytes;
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t b = 0; b < blocks; ++b)
            std::memcpy(dst + q4_0x8Offset(blocks, r, b),
                        src + static_cast<size_t>(r) * rowBytes +
                            static_cast<size_t>(b) * kBlockBytes,
                        kBlockBytes);
}

} // namespace sinkscope
