// NodeTable without a mount: paths follow moves and unlinks, views of one inode are separate nodes,
// hard links keep their own names, and forgotten nodes leave.
#include "daemon/tables/node_table.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace scopedfs::daemon {
namespace {

base::UniqueFd AnyFd() { return base::UniqueFd(open("/", O_PATH | O_CLOEXEC)); }
// An fd of another object than AnyFd's: its handle differs.
base::UniqueFd OtherFd() { return base::UniqueFd(open("/proc", O_PATH | O_CLOEXEC)); }

// The identity the table gives a node made from AnyFd() under the made-up number (1, ino).
ObjectId Obj(ino_t ino) {
  base::UniqueFd fd = AnyFd();
  struct stat st;
  fstat(fd.get(), &st);
  ObjectId id = ObjectIdOf(fd.get(), st);
  return ObjectId{1, ino, id.generation};
}

class NodeTableTest : public ::testing::Test {
 protected:
  NodeTableTest() : table_(AnyFd(), 1, 1) {}
  NodeId Add(NodeId parent, const std::string& name, ino_t ino, mode_t type = S_IFDIR,
             View view = kRawView) {
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

TEST_F(NodeTableTest, FindCountsNoLookup) {
  NodeId dir = Add(kRootNodeId, "Download", 10);
  NodeId raw = Add(dir, "p.jpg", 12, S_IFREG, kRawView);
  ASSERT_NE(table_.Find(Obj(12), kRawView), nullptr);
  EXPECT_EQ(table_.Find(Obj(12), kRawView)->id, raw);
  EXPECT_EQ(table_.Find(Obj(12), kRedactedView), nullptr);
  EXPECT_EQ(table_.Find(ObjectId{2, 12, Obj(0).generation}, kRawView), nullptr);
  table_.Forget(raw, 1);  // the one lookup Add counted: Find added none
  EXPECT_EQ(table_.Find(Obj(12), kRawView), nullptr);
  EXPECT_EQ(table_.Get(raw), nullptr);
}

TEST_F(NodeTableTest, AReusedNumberIsANewObject) {
  NodeId dir = Add(kRootNodeId, "Download", 10);
  NodeId old_file = Add(dir, "e1.txt", 12, S_IFREG);
  ASSERT_NE(Obj(12).generation, 0u) << "the root filesystem exports no handles";
  // The number 12 comes back for another object (another handle) while the kernel still holds
  // the old node: a new node, indexed in its place; the old one lives until forgotten.
  std::shared_ptr<Node> fresh = table_.Upsert(dir, "e2.txt", OtherFd(), 1, 12, S_IFREG, kRawView);
  ASSERT_NE(fresh, nullptr);
  EXPECT_NE(fresh->id, old_file);
  EXPECT_NE(fresh->generation, Obj(12).generation);
  EXPECT_EQ(table_.reused_numbers(), 1u);
  ASSERT_NE(table_.Get(old_file), nullptr);
  EXPECT_EQ(Path(fresh->id), "Download/e2.txt");
  EXPECT_EQ(Path(old_file), "Download/e1.txt");
  EXPECT_EQ(table_.Find(Obj(12), kRawView), nullptr);  // the old object is not the number's now
  ASSERT_NE(table_.Find(fresh->object(), kRawView), nullptr);
  EXPECT_EQ(table_.Find(fresh->object(), kRawView)->id, fresh->id);
  // Changes to one object never reach the other's record.
  table_.Unlinked(Obj(12), dir, "e1.txt");
  EXPECT_EQ(Path(fresh->id), "Download/e2.txt");
  // Forgetting the old node leaves the new one indexed.
  table_.Forget(old_file, 1);
  EXPECT_EQ(table_.Get(old_file), nullptr);
  ASSERT_NE(table_.Find(fresh->object(), kRawView), nullptr);
  // A second lookup of the new object finds its node.
  EXPECT_EQ(table_.Upsert(dir, "e2.txt", OtherFd(), 1, 12, S_IFREG, kRawView)->id, fresh->id);
}

TEST_F(NodeTableTest, ANumberOfAnotherTypeIsANewObject) {
  NodeId dir = Add(kRootNodeId, "Download", 10);
  NodeId file = Add(dir, "x", 12, S_IFREG);
  NodeId sub = Add(dir, "x", 12, S_IFDIR);  // same handle, yet a directory now: not the file
  EXPECT_NE(file, sub);
}

TEST_F(NodeTableTest, MovedDirectoryCarriesItsChildren) {
  NodeId dcim = Add(kRootNodeId, "DCIM", 10);
  NodeId d = Add(dcim, "d", 11);
  NodeId android = Add(kRootNodeId, "Android", 20);
  NodeId x = Add(d, "x.jpg", 12, S_IFREG);
  table_.Moved(Obj(11), dcim, "d", android, "d2");
  EXPECT_EQ(Path(d), "Android/d2");
  EXPECT_EQ(Path(x), "Android/d2/x.jpg");
}

TEST_F(NodeTableTest, MoveOfAnotherNameLeavesTheNodeAlone) {
  NodeId dir = Add(kRootNodeId, "Download", 10);
  NodeId a = Add(dir, "a", 12, S_IFREG);  // a hard link of inode 12, known by this name
  table_.Moved(Obj(12), dir, "b", kRootNodeId, "c");
  EXPECT_EQ(Path(a), "Download/a");
}

TEST_F(NodeTableTest, EveryViewOfTheInodeMoves) {
  NodeId dir = Add(kRootNodeId, "DCIM", 10);
  NodeId raw = Add(dir, "p.jpg", 12, S_IFREG, kRawView);
  NodeId redacted = Add(dir, "p.jpg", 12, S_IFREG, kRedactedView);
  EXPECT_NE(raw, redacted);
  table_.Moved(Obj(12), dir, "p.jpg", dir, "q.jpg");
  EXPECT_EQ(Path(raw), "DCIM/q.jpg");
  EXPECT_EQ(Path(redacted), "DCIM/q.jpg");
}

TEST_F(NodeTableTest, UnlinkedNodeAndItsChildrenResolveNothing) {
  NodeId dir = Add(kRootNodeId, "Download", 10);
  NodeId sub = Add(dir, "sub", 11);
  NodeId file = Add(sub, "f", 12, S_IFREG);
  table_.Unlinked(Obj(11), dir, "sub");
  EXPECT_EQ(Path(sub), "<none>");
  EXPECT_EQ(Path(file), "<none>");
  // A fresh lookup of the name brings it back.
  Add(dir, "sub", 11);
  EXPECT_EQ(Path(file), "Download/sub/f");
}

TEST_F(NodeTableTest, UnlinkedNodeKeepsTheLastPathItHad) {
  NodeId dir = Add(kRootNodeId, "Download", 10);
  NodeId sub = Add(dir, "sub", 11);
  NodeId file = Add(sub, "f", 12, S_IFREG);
  table_.Unlinked(Obj(12), sub, "f");
  table_.Unlinked(Obj(11), dir, "sub");
  std::string path;
  ASSERT_TRUE(table_.LastPathOf(file, &path));
  EXPECT_EQ(path, "Download/sub/f");
  // A rename of an ancestor still known by its name carries the last path along.
  table_.Moved(Obj(10), kRootNodeId, "Download", kRootNodeId, "Documents");
  ASSERT_TRUE(table_.LastPathOf(sub, &path));
  EXPECT_EQ(path, "Documents/sub");
  EXPECT_FALSE(table_.LastPathOf(9999, &path));
  EXPECT_EQ(Path(file), "<none>");
}

TEST_F(NodeTableTest, UnlinkOfAnotherHardLinkKeepsTheNode) {
  NodeId dir = Add(kRootNodeId, "Download", 10);
  NodeId a = Add(dir, "a", 12, S_IFREG);
  table_.Unlinked(Obj(12), dir, "b");
  EXPECT_EQ(Path(a), "Download/a");
}

TEST_F(NodeTableTest, LookupMovesANodeToTheNameItWasFoundBy) {
  NodeId dir = Add(kRootNodeId, "Download", 10);
  NodeId a = Add(dir, "a", 12, S_IFREG);
  NodeId again = Add(dir, "b", 12, S_IFREG);
  EXPECT_EQ(a, again);
  EXPECT_EQ(Path(a), "Download/b");
}

// A name the node had before a lookup found it under another may still be a dentry in the kernel
// (a rename behind the daemon's back): Names() keeps it, so a reload drops it too; at most the
// latest kMaxFormerNames of them.
TEST_F(NodeTableTest, NamesKeepTheNamesANodeWasFoundByBefore) {
  NodeId dir = Add(kRootNodeId, "Download", 10);
  NodeId pictures = Add(kRootNodeId, "Pictures", 11);
  Add(dir, "a", 12, S_IFREG);
  Add(pictures, "b", 12, S_IFREG);
  std::vector<std::pair<NodeId, std::string>> names = table_.Names();
  auto has = [&names](NodeId parent, const std::string& name) {
    return std::find(names.begin(), names.end(), std::make_pair(parent, name)) != names.end();
  };
  EXPECT_TRUE(has(pictures, "b"));
  EXPECT_TRUE(has(dir, "a")) << "the name it had before was forgotten";
  for (int i = 0; i < 10; ++i) Add(dir, absl::StrCat("c", i), 12, S_IFREG);
  names = table_.Names();
  EXPECT_FALSE(has(dir, "a"));
  EXPECT_TRUE(has(dir, "c8"));
  EXPECT_EQ(
      std::count_if(names.begin(), names.end(), [dir](const auto& n) { return n.first == dir; }),
      static_cast<long>(NodeTable::kMaxFormerNames) + 1);
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

// A node pins its parent: a directory the kernel forgot stays while a node it holds still
// records it as parent (a file reached through a hard link elsewhere), and goes with that node.
TEST_F(NodeTableTest, AForgottenParentStaysWhileAChildNamesIt) {
  size_t empty = table_.size();
  NodeId a = Add(kRootNodeId, "a", 10);
  NodeId b = Add(kRootNodeId, "b", 11);
  NodeId f = Add(a, "f", 12, S_IFREG);
  EXPECT_EQ(Add(b, "f", 12, S_IFREG), f);  // the other hard link: the node is now b/f
  table_.Forget(f, 1);                     // the kernel's dentry b/f goes, a/f stays
  table_.Forget(b, 1);                     // and then b
  EXPECT_EQ(Path(f), "b/f");
  EXPECT_NE(table_.Get(b), nullptr);
  table_.Forget(f, 1);  // the last lookup of f: f and the b it pinned go; a stays (a lookup)
  EXPECT_EQ(table_.Get(f), nullptr);
  EXPECT_EQ(table_.Get(b), nullptr);
  EXPECT_EQ(Path(a), "a");
  table_.Forget(a, 1);
  EXPECT_EQ(table_.size(), empty);
}

// A move unpins the old parent, which goes if the kernel had forgotten it.
TEST_F(NodeTableTest, AMoveReleasesTheOldParent) {
  size_t empty = table_.size();
  NodeId a = Add(kRootNodeId, "a", 10);
  NodeId b = Add(kRootNodeId, "b", 11);
  NodeId f = Add(a, "f", 12, S_IFREG);
  table_.Forget(a, 1);
  EXPECT_NE(table_.Get(a), nullptr);
  table_.Moved(Obj(12), a, "f", b, "f");
  EXPECT_EQ(table_.Get(a), nullptr);
  EXPECT_EQ(Path(f), "b/f");
  table_.Forget(f, 1);
  table_.Forget(b, 1);
  EXPECT_EQ(table_.size(), empty);
}

// Records made stale behind the daemon's back cannot make a cycle of pins that nothing releases:
// x/y is looked up, then y is found as the parent of x (the lower tree was rearranged).
TEST_F(NodeTableTest, StaleRecordsMakeNoCycleOfPins) {
  size_t empty = table_.size();
  NodeId x = Add(kRootNodeId, "x", 10);
  NodeId y = Add(x, "y", 11);
  EXPECT_EQ(Add(y, "x", 10), x);
  EXPECT_EQ(Path(x), "<none>");  // a cycle names nothing
  table_.Forget(x, 2);
  table_.Forget(y, 1);
  EXPECT_EQ(table_.size(), empty);
}

}  // namespace
}  // namespace scopedfs::daemon

namespace scopedfs::daemon {
namespace {

// A node keeps its lower object's file handle, not an fd, and OpenNode reaches the same inode
// through it, also after the object was renamed. (On a filesystem without handles the node keeps
// its fd instead; OpenNode then duplicates it.)
TEST(NodeTableHandlesTest, OpenNodeReachesTheSameInodeWithoutAnFdPerNode) {
  std::string dir = ::testing::TempDir() + "/node_table_handles_" + std::to_string(getpid());
  ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
  std::string file = dir + "/a";
  int w = open(file.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
  ASSERT_GE(w, 0);
  close(w);
  base::UniqueFd root(open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  struct stat root_st, st;
  ASSERT_EQ(fstat(root.get(), &root_st), 0);
  ASSERT_EQ(stat(file.c_str(), &st), 0);
  NodeTable table(std::move(root), root_st.st_dev, root_st.st_ino);
  base::UniqueFd child(open(file.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
  std::shared_ptr<Node> node =
      table.Upsert(kRootNodeId, "a", std::move(child), st.st_dev, st.st_ino, S_IFREG, kRawView);
  EXPECT_NE(!node->handle.empty(), node->fd.valid()) << "a handle or an fd, never both";
  ASSERT_EQ(rename(file.c_str(), (dir + "/b").c_str()), 0);
  base::UniqueFd opened;
  ASSERT_EQ(table.OpenNode(*node, &opened), 0);
  struct stat got;
  ASSERT_EQ(fstat(opened.get(), &got), 0);
  EXPECT_EQ(got.st_ino, st.st_ino);
  EXPECT_EQ(got.st_dev, st.st_dev);
  EXPECT_GT(NodeTable::BytesPerNode(), sizeof(Node));
  unlink((dir + "/b").c_str());
  rmdir(dir.c_str());
}

}  // namespace
}  // namespace scopedfs::daemon
