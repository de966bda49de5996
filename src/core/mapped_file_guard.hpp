// Mapped files that shrink under their reader.
//
// A tensor loaded from a file is its mapped pages. When another process
// truncates the file, touching a page past the new end raises SIGBUS, and
// by default the process dies without a word. Every mapping that map_file
// makes is registered here; a SIGBUS handler recognises an address inside
// one, maps a zero page over the lost page (the read then completes) and
// records the file offset. check_mapped_files(), called by the streaming
// paths after each piece they read, turns the record into E3001 naming
// the file and the offset, before any output is committed. A SIGBUS
// elsewhere goes to the handler that was there before (or kills as before).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace tessel::detail {

// Registers the mapping [base, base + length) of `name` from byte
// `file_offset`; returns its slot, or -1 when the table (4096 mappings) is
// full and this one goes unguarded.
int guard_mapping(const void* base, std::size_t length,
                  std::uint64_t file_offset, const std::string& name);
// Before the mapping is unmapped. A fault it recorded is kept for the next
// check.
void unguard_mapping(int slot);

// E3001 for a guarded file whose end was cut while `address` (which a
// system call could not read: EFAULT) lies inside its mapping; returns
// normally when the address is not in a guarded mapping.
void check_mapped_address(const void* address);

}  // namespace tessel::detail
