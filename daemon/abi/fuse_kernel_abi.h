// The few FUSE kernel ABI pieces libfuse 3.14 does not know: passthrough negotiation in the INIT
// reply, backing-file ioctls, the open reply that carries a backing id, and FUSE over io_uring
// (protocol 7.42: the ring entry's header and the commands). Layouts follow
// include/uapi/linux/fuse.h; static_asserts pin every size and offset we touch.
#ifndef SCOPEDFS_DAEMON_ABI_FUSE_KERNEL_ABI_H_
#define SCOPEDFS_DAEMON_ABI_FUSE_KERNEL_ABI_H_

#include <linux/ioctl.h>

#include <cstddef>
#include <cstdint>

namespace scopedfs::daemon::abi {

inline constexpr uint32_t kOpcodeInit = 26;
inline constexpr uint32_t kOpcodeOpen = 14;
inline constexpr uint32_t kOpcodeCreate = 35;
// FUSE_TMPFILE (O_TMPFILE, protocol 7.37): a CREATE whose name is "/" (the kernel's name for the
// nameless dentry) and whose flags carry O_TMPFILE. libfuse 3.14 does not know it.
inline constexpr uint32_t kOpcodeTmpfile = 51;
// Opcodes the request counters tell apart (Stats::CountRequest).
inline constexpr uint32_t kOpcodeLookup = 1;
inline constexpr uint32_t kOpcodeGetattr = 3;
inline constexpr uint32_t kOpcodeSetxattr = 21;
inline constexpr uint32_t kOpcodeGetxattr = 22;
inline constexpr uint32_t kOpcodeListxattr = 23;
inline constexpr uint32_t kOpcodeRemovexattr = 24;
inline constexpr uint32_t kOpcodeFlush = 25;
inline constexpr uint32_t kOpcodeOpendir = 27;
inline constexpr uint32_t kOpcodeReaddir = 28;
inline constexpr uint32_t kOpcodeReleasedir = 29;
inline constexpr uint32_t kOpcodeReaddirplus = 44;
// FUSE_INTERRUPT; its unique is the interrupted request's with FUSE_INT_REQ_BIT set (requests'
// uniques are even).
inline constexpr uint32_t kOpcodeInterrupt = 36;
inline constexpr uint64_t kInterruptUniqueBit = 1;

// fuse_init_out.flags bits.
inline constexpr uint32_t kInitExt = 1u << 30;         // FUSE_INIT_EXT: flags2 is valid
inline constexpr uint32_t kWritebackCache = 1u << 16;  // FUSE_WRITEBACK_CACHE: incompatible
// FUSE_HANDLE_KILLPRIV_V2: the server clears suid/sgid/caps itself, so the kernel sets SB_NOSEC
// and stops asking for security.capability before every write (one round trip per write
// otherwise, also for passthrough writes).
inline constexpr uint32_t kHandleKillprivV2 = 1u << 28;
// FUSE_POSIX_ACL: the kernel enforces POSIX ACLs and caches them per inode (implies
// default_permissions).
inline constexpr uint32_t kPosixAcl = 1u << 20;
// FUSE_DONT_MASK: the kernel passes the mode and the umask apart, so the server can leave the
// umask out where a default ACL replaces it.
inline constexpr uint32_t kDontMask = 1u << 6;
// FUSE_DO_READDIRPLUS, FUSE_READDIRPLUS_AUTO: READDIRPLUS instead of READDIR.
inline constexpr uint32_t kDoReaddirplus = 1u << 13;
inline constexpr uint32_t kReaddirplusAuto = 1u << 14;
// FUSE_POSIX_LOCKS: the server implements POSIX record locks, and releases a closing owner's
// locks at FLUSH (the kernel does not: fuse_setlk ignores FL_CLOSE_POSIX).
inline constexpr uint32_t kPosixLocks = 1u << 1;
// fuse_init_out.flags2 bits (the upper half of the 64-bit flags).
inline constexpr uint32_t kPassthroughFlag2 = 1u << (37 - 32);  // FUSE_PASSTHROUGH
// FUSE_OVER_IO_URING: offered by the kernel only while /sys/module/fuse/parameters/enable_uring
// is Y; answered, the kernel holds new requests back until every queue has an entry registered.
inline constexpr uint32_t kOverIoUringFlag2 = 1u << (41 - 32);
// FUSE_MAX_PAGES: fuse_init_out.max_pages is valid.
inline constexpr uint32_t kMaxPages = 1u << 22;

// fuse_open_out.open_flags bits.
inline constexpr uint32_t kFopenDirectIo = 1u << 0;
inline constexpr uint32_t kFopenKeepCache = 1u << 1;
// FOPEN_CACHE_DIR: the kernel keeps the listing in the directory's page cache.
inline constexpr uint32_t kFopenCacheDir = 1u << 3;
inline constexpr uint32_t kFopenPassthrough = 1u << 7;

struct InHeader {  // fuse_in_header
  uint32_t len;
  uint32_t opcode;
  uint64_t unique;
  uint64_t nodeid;
  uint32_t uid;
  uint32_t gid;
  uint32_t pid;
  uint16_t total_extlen;
  uint16_t padding;
};
static_assert(sizeof(InHeader) == 40);

struct InitIn {  // fuse_init_in (7.36+)
  uint32_t major;
  uint32_t minor;
  uint32_t max_readahead;
  uint32_t flags;
  uint32_t flags2;
  uint32_t unused[11];
};
static_assert(sizeof(InitIn) == 64);

struct OutHeader {  // fuse_out_header
  uint32_t len;
  int32_t error;
  uint64_t unique;
};
static_assert(sizeof(OutHeader) == 16);

struct InitOut {  // fuse_init_out (7.40)
  uint32_t major;
  uint32_t minor;
  uint32_t max_readahead;
  uint32_t flags;
  uint16_t max_background;
  uint16_t congestion_threshold;
  uint32_t max_write;
  uint32_t time_gran;
  uint16_t max_pages;
  uint16_t map_alignment;
  uint32_t flags2;
  uint32_t max_stack_depth;  // "unused[0]" in libfuse 3.14's copy of the header
  uint32_t unused[6];
};
static_assert(sizeof(InitOut) == 64);
static_assert(offsetof(InitOut, flags2) == 32);
static_assert(offsetof(InitOut, max_stack_depth) == 36);

struct OpenOut {  // fuse_open_out (7.40): padding became backing_id
  uint64_t fh;
  uint32_t open_flags;
  int32_t backing_id;
};
static_assert(sizeof(OpenOut) == 16);

struct BackingMap {  // fuse_backing_map
  int32_t fd;
  uint32_t flags;
  uint64_t padding;
};
static_assert(sizeof(BackingMap) == 16);

inline constexpr unsigned long kDevIocBackingOpen = _IOW(229, 1, BackingMap);
inline constexpr unsigned long kDevIocBackingClose = _IOW(229, 2, uint32_t);

// FUSE over io_uring. Each ring entry registers two buffers: this header, and a payload buffer of
// at least the connection's max payload (max(8 KiB, max_write, max_pages * page size)). A request
// arrives as its fuse_in_header in in_out, its first argument (the per-opcode struct, at most
// 128 bytes; zero-sized for the opcodes whose first argument is a name) in op_in, and the rest
// of its arguments in the payload; a reply is committed as its fuse_out_header in in_out and its
// body in the payload, with payload_sz saying how long.
inline constexpr size_t kUringInOutHeaderSize = 128;  // FUSE_URING_IN_OUT_HEADER_SZ
inline constexpr size_t kUringOpInSize = 128;         // FUSE_URING_OP_IN_OUT_SZ

struct UringEntInOut {  // fuse_uring_ent_in_out
  uint64_t flags;
  uint64_t commit_id;  // the request's unique, echoed in UringCmdReq.commit_id
  uint32_t payload_sz;
  uint32_t padding;
  uint64_t reserved;
};
static_assert(sizeof(UringEntInOut) == 32);

struct UringReqHeader {  // fuse_uring_req_header
  char in_out[kUringInOutHeaderSize];
  char op_in[kUringOpInSize];
  UringEntInOut ring_ent_in_out;
};
static_assert(sizeof(UringReqHeader) == 288);
static_assert(offsetof(UringReqHeader, ring_ent_in_out) == 256);

// In the 80-byte command area of an IORING_SETUP_SQE128 submission.
struct UringCmdReq {  // fuse_uring_cmd_req
  uint64_t flags;
  uint64_t commit_id;
  uint16_t qid;
  uint8_t padding[6];
};
static_assert(sizeof(UringCmdReq) == 24);

// io_uring_sqe.cmd_op values (enum fuse_uring_cmd).
inline constexpr uint32_t kUringCmdRegister = 1;        // FUSE_IO_URING_CMD_REGISTER
inline constexpr uint32_t kUringCmdCommitAndFetch = 2;  // FUSE_IO_URING_CMD_COMMIT_AND_FETCH

// The kernel refuses stacking deeper than this (FILESYSTEM_MAX_STACK_DEPTH).
inline constexpr uint32_t kMaxStackDepth = 1;

}  // namespace scopedfs::daemon::abi

#endif  // SCOPEDFS_DAEMON_ABI_FUSE_KERNEL_ABI_H_
