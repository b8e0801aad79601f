// Status propagation macros: abseil 20220623 ships none.
#ifndef SCOPEDFS_POLICY_STATUS_MACROS_H_
#define SCOPEDFS_POLICY_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define SCOPEDFS_CONCAT_INNER_(a, b) a##b
#define SCOPEDFS_CONCAT_(a, b) SCOPEDFS_CONCAT_INNER_(a, b)

// Returns the status of `expr` from the enclosing function if it is not OK.
#define RETURN_IF_ERROR(expr)                            \
  do {                                                   \
    ::absl::Status scopedfs_status_ = (expr);            \
    if (!scopedfs_status_.ok()) return scopedfs_status_; \
  } while (false)

// Evaluates `rexpr` (a StatusOr); returns its status if not OK, else moves its value into `lhs`.
#define ASSIGN_OR_RETURN(lhs, rexpr) \
  ASSIGN_OR_RETURN_IMPL_(SCOPEDFS_CONCAT_(scopedfs_statusor_, __LINE__), lhs, rexpr)
#define ASSIGN_OR_RETURN_IMPL_(tmp, lhs, rexpr)  \
  auto tmp = (rexpr);                            \
  if (!tmp.ok()) return std::move(tmp).status(); \
  lhs = std::move(tmp).value()

#endif  // SCOPEDFS_POLICY_STATUS_MACROS_H_
