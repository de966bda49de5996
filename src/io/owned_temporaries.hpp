// Temporary files and directories that the next run can clean up safely.
//
// An output is written under a hidden name beside its target and renamed
// over it at the end (atomic_file.hpp, the CLI's staged directories). A
// process killed in between (SIGKILL, the OOM killer, a power cut) leaves
// that name behind, and nothing else would ever remove it: five killed
// conversions once left 2 GB. So every temporary is named with a marker
// and held under an exclusive flock(2) by the process writing it for as
// long as it lives. A later writer into the same directory removes every
// marked entry whose lock it can take: its owner is gone (the kernel drops
// a dead process's locks). An entry whose owner is alive is never touched.
#pragma once

#include <filesystem>
#include <string>

namespace tessel::io {

// The markers, between ".<target name>" and a random suffix.
inline constexpr const char* kTemporaryFileMarker = ".tessel-tmp-";
inline constexpr const char* kStagedDirectoryMarker = ".tessel-staged-";

// ".<target name><marker>" in the target's directory: mkstemp/mkdtemp add
// the suffix.
std::string temporary_template(const std::filesystem::path& target,
                               const char* marker);

// Takes the exclusive lock on the freshly created temporary `fd`. Returns
// false when a cleaner removed the entry between its creation and the
// lock (the caller closes `fd` and creates another).
bool own_temporary(int fd);
// The same for an O_TMPFILE file, which has no name yet to lose.
void lock_anonymous_temporary(int fd);

// Removes the marked entries of `dir` whose owners are gone; each directory
// is scanned once per process. Failures are ignored: cleaning up is a
// courtesy, never a reason to refuse the write.
void remove_stale_temporaries(const std::filesystem::path& dir);

}  // namespace tessel::io
