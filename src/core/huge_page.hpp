// The large page of x86-64 Linux: 2 MiB, one page-table entry where 4 KiB
// pages take 512. Memory that is streamed (large allocations, mapped
// weights, files being written) is laid out in whole ones so that the
// kernel can back it with them (transparent huge pages, 2 MiB page-cache
// folios); elsewhere the size is only a granule.
#pragma once

#include <cstddef>

namespace tessel::detail {

inline constexpr std::size_t kHugePageBytes = std::size_t{2} << 20;

}  // namespace tessel::detail
