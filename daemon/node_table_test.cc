// NodeTable without a mount: paths follow moves and unlinks, views of one inode are separate nodes,
// hard links keep their own names, and forgotten nodes leave.
#include "daemon/node_table.h"

#include <fcntl.h>
#include <unistd.h>

#include <string>

#include "gtest/gtest.h"

namespace scopedfs::daemon {
namespace {

base::UniqueFd AnyFd() { return base::UniqueFd(open("/", O_PATH | O_CLOEXEC)); }

class NodeTableTest : public ::testing::Test {
 protected:
  NodeTableTest() : table_(AnyFd(), 1, 1) {}
  NodeId Add(NodeId parent, const std::string& name, ino_t ino, mode_t type = S_IFDIR,
             ViewMask view = kRawView) {
    return table_.Upsert(parent, name, AnyFd(), 1, ino, type, view)->id;
  }
  std::string Path(NodeId id) {
    std::string path;
    return table_.PathOf(id, &path) ? path : "<none>";
  }
  NodeTable table_;
};

TEST_F(NodeTableTest, PathsComeFromTheParentChain) {
  NodeId dcim = Add(kRootNodeId, "DCIM", 10);
  NodeId camera = Add(dcim, "Camera", 11);
  NodeId photo = Add(camera, "a.jpg", 12, S_IFREG);
  EXPECT_EQ(Path(kRootNodeId), "");
  EXPECT_EQ(Path(photo), "DCIM/Camera/a.jpg");
}

TEST_F(NodeTableTest, MovedDirectoryCarriesItsChildren) {
  NodeId dcim = Add(kRootNodeId, "DCIM", 10);
  NodeId d = Add(dcim, "d", 11);
  NodeId android = Add(kRootNodeId, "Android", 20);
  NodeId x = Add(d, "x.jpg", 12, S_IFREG);
  table_.Moved(1, 11, dcim, "d", android, "d2");
  EXPECT_EQ(Path(d), "Android/d2");
  EXPECT_EQ(Path(x), "Android/d2/x.jpg");
}

TEST_F(NodeTableTest, MoveOfAnotherNameLeavesTheNodeAlone) {
  NodeId dir = Add(kRootNodeId, "Download", 10);
  NodeId a = Add(dir, "a", 12, S_IFREG);  // a hard link of inode 12, known by this name
  table_.Moved(1, 12, dir, "b", kRootNodeId, "c");
  EXPECT_EQ(Path(a), "Download/a");
}

TEST_F(NodeTableTest, EveryViewOfTheInodeMoves) {
  NodeId dir = Add(kRootNodeId, "DCIM", 10);
  NodeId raw = Add(dir, "p.jpg", 12, S_IFREG, kRawView);
  NodeId redacted = Add(dir, "p.jpg", 12, S_IFREG, kRedactedView);
  EXPECT_NE(raw, redacted);
  table_.Moved(1, 12, dir, "p.jpg", dir, "q.jpg");
  EXPECT_EQ(Path(raw), "DCIM/q.jpg");
  EXPECT_EQ(Path(redacted), "DCIM/q.jpg");
}

TEST_F(NodeTableTest, UnlinkedNodeAndItsChildrenResolveNothing) {
  NodeId dir = Add(kRootNodeId, "Download", 10);
  NodeId sub = Add(dir, "sub", 11);
  NodeId file = Add(sub, "f", 12, S_IFREG);
  table_.Unlinked(1, 11, dir, "sub");
  EXPECT_EQ(Path(sub), "<none>");
  EXPECT_EQ(Path(file), "<none>");
  // A fresh lookup of the name brings it back.
  Add(dir, "sub", 11);
  EXPECT_EQ(Path(file), "Download/sub/f");
}

TEST_F(NodeTableTest, UnlinkOfAnotherHardLinkKeepsTheNode) {
  NodeId dir = Add(kRootNodeId, "Download", 10);
  NodeId a = Add(dir, "a", 12, S_IFREG);
  table_.Unlinked(1, 12, dir, "b");
  EXPECT_EQ(Path(a), "Download/a");
}

TEST_F(NodeTableTest, LookupMovesANodeToTheNameItWasFoundBy) {
  NodeId dir = Add(kRootNodeId, "Download", 10);
  NodeId a = Add(dir, "a", 12, S_IFREG);
  NodeId again = Add(dir, "b", 12, S_IFREG);
  EXPECT_EQ(a, again);
  EXPECT_EQ(Path(a), "Download/b");
}

TEST_F(NodeTableTest, ForgottenNodesLeave) {
  NodeId dir = Add(kRootNodeId, "Download", 10);
  Add(dir, "Download", 10);  // a second lookup
  size_t before = table_.size();
  table_.Forget(dir, 1);
  EXPECT_EQ(table_.size(), before);
  table_.Forget(dir, 1);
  EXPECT_EQ(table_.size(), before - 1);
  EXPECT_EQ(table_.Get(dir), nullptr);
  table_.Forget(kRootNodeId, 100);  // the root is never forgotten
  EXPECT_NE(table_.Get(kRootNodeId), nullptr);
}

}  // namespace
}  // namespace scopedfs::daemon
