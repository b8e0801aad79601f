// Allocation counting for benchmarks: a binary that links this library has every global operator
// new and delete replaced by counting ones (malloc and free underneath), so a benchmark can check
// that a hot path allocates nothing. Counts are per thread, so a benchmark thread sees only its own
// allocations.
#ifndef SCOPEDFS_POLICY_COUNTED_ALLOCATIONS_H_
#define SCOPEDFS_POLICY_COUNTED_ALLOCATIONS_H_

#include <cstdint>

namespace scopedfs::policy {

// How many times operator new was called on this thread so far.
uint64_t ThreadAllocations();

}  // namespace scopedfs::policy

#endif  // SCOPEDFS_POLICY_COUNTED_ALLOCATIONS_H_
