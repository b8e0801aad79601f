// The reload triggers without a daemon: SIGHUP (raised in this process) and inotify on the
// watched files' directory: a rename over the file, an in-place write, a burst debounced into one
// trigger; other names in the same directory (an editor's swap file) trigger nothing.
#include "daemon/service/config_watch.h"

#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace scopedfs::daemon {
namespace {

void Put(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
}

class ConfigWatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/watch" + std::to_string(getpid()) + "_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    ASSERT_EQ(system(("rm -rf '" + dir_ + "' && mkdir -p '" + dir_ + "'").c_str()), 0);
    apps_ = dir_ + "/apps.textproto";
    marker_ = dir_ + "/policy.textproto";
    Put(apps_, "one");
    Put(marker_, "policy");
  }
  // With `coalesce`, events are never debounced apart (the debounce is an hour), and a trigger
  // comes max_delay (a second) after the first event of a burst: events made back to back are one
  // trigger without the test depending on how fast they are made.
  std::unique_ptr<ConfigWatch> Start(bool files, bool sighup, bool coalesce = false) {
    ConfigWatch::Options o;
    o.files = {apps_, "", marker_};
    o.watch_files = files;
    o.sighup = sighup;
    o.debounce = coalesce ? absl::Hours(1) : absl::Milliseconds(100);
    if (coalesce) o.max_delay = absl::Seconds(1);
    absl::StatusOr<std::unique_ptr<ConfigWatch>> w =
        ConfigWatch::Start(o, [this](const std::string& why) {
          absl::MutexLock lock(&mu_);
          triggers_.push_back(why);
        });
    EXPECT_TRUE(w.ok()) << w.status();
    return w.ok() ? std::move(*w) : nullptr;
  }
  // A change of another watched file, made after everything before it: the triggers come in the
  // order of their events, so once the marker's has come, no earlier event's is still to come.
  // Returns every trigger before the marker's (empty if the marker's never came).
  std::vector<std::string> BeforeMarker() {
    Put(marker_, "marker");
    std::vector<std::string> t;
    for (size_t n = 1; n < 10; ++n) {
      t = WaitFor(n);
      if (t.size() < n) {
        ADD_FAILURE() << "the marker's change never triggered";
        return {};
      }
      if (t.back() == "change of " + marker_) break;
    }
    t.pop_back();
    return t;
  }
  // Waits up to `timeout` for at least `n` triggers; returns them.
  std::vector<std::string> WaitFor(size_t n, absl::Duration timeout = absl::Seconds(5)) {
    absl::Time deadline = absl::Now() + timeout;
    while (absl::Now() < deadline) {
      {
        absl::MutexLock lock(&mu_);
        if (triggers_.size() >= n) return triggers_;
      }
      absl::SleepFor(absl::Milliseconds(10));
    }
    absl::MutexLock lock(&mu_);
    return triggers_;
  }
  std::string dir_;
  std::string apps_;
  std::string marker_;
  absl::Mutex mu_;
  std::vector<std::string> triggers_;
};

TEST_F(ConfigWatchTest, SighupTriggersAndNoLongerKills) {
  std::unique_ptr<ConfigWatch> w = Start(false, true);
  ASSERT_NE(w, nullptr);
  ASSERT_EQ(raise(SIGHUP), 0);  // the default disposition would end this test process
  std::vector<std::string> t = WaitFor(1);
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0], "SIGHUP");
}

TEST_F(ConfigWatchTest, ARenameOverTheFileTriggersOnce) {
  std::unique_ptr<ConfigWatch> w = Start(true, false);
  ASSERT_NE(w, nullptr);
  Put(dir_ + "/apps.textproto.tmp", "two");
  ASSERT_EQ(rename((dir_ + "/apps.textproto.tmp").c_str(), apps_.c_str()), 0);
  std::vector<std::string> t = WaitFor(1);
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0], "change of " + apps_);
  // Once a later change has triggered, the rename has triggered exactly once.
  EXPECT_EQ(BeforeMarker().size(), 1u);
}

TEST_F(ConfigWatchTest, ABurstOfWritesIsOneTrigger) {
  std::unique_ptr<ConfigWatch> w = Start(true, false, /*coalesce=*/true);
  ASSERT_NE(w, nullptr);
  for (int i = 0; i < 5; ++i) Put(apps_, "write " + std::to_string(i));
  EXPECT_EQ(WaitFor(1).size(), 1u);
  EXPECT_EQ(BeforeMarker().size(), 1u) << "the burst triggered more than once";
}

TEST_F(ConfigWatchTest, OtherNamesInTheDirectoryDoNotTrigger) {
  std::unique_ptr<ConfigWatch> w = Start(true, false);
  ASSERT_NE(w, nullptr);
  Put(dir_ + "/.apps.textproto.swp", "x");
  Put(dir_ + "/4913", "x");
  ASSERT_EQ(unlink((dir_ + "/4913").c_str()), 0);
  EXPECT_TRUE(BeforeMarker().empty());
}

TEST_F(ConfigWatchTest, AnUnwatchableDirectoryIsAnError) {
  ConfigWatch::Options o;
  o.files = {dir_ + "/no/such/dir/apps.textproto"};
  o.sighup = false;
  absl::StatusOr<std::unique_ptr<ConfigWatch>> w = ConfigWatch::Start(o, [](const std::string&) {});
  ASSERT_FALSE(w.ok());
  EXPECT_TRUE(absl::StrContains(w.status().message(), "cannot watch")) << w.status();
}

}  // namespace
}  // namespace scopedfs::daemon
