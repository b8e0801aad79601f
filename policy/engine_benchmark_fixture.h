// The fixture engine_benchmark decides over: the default Android policy with 200 installed apps
// (varied permission mixes, two shared uids), content facts sniffed from real magic bytes, and a
// deterministic mix of 4,096 requests (who asks, what, where, of which content and owner).
#ifndef SCOPEDFS_POLICY_ENGINE_BENCHMARK_FIXTURE_H_
#define SCOPEDFS_POLICY_ENGINE_BENCHMARK_FIXTURE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "media/content_facts.h"
#include "policy/engine.h"

namespace scopedfs::policy::bench {

inline constexpr absl::string_view kPolicyFlag = "--policy=";
// Power of two so the benchmark loop cycles with a mask.
inline constexpr size_t kMixSize = 4096;
inline constexpr size_t kMinDistinct = 1000;

// Everything the benchmarks share; built once in main, read-only afterwards.
// Everything the benchmarks share; built once in main, read-only afterwards.
struct Fixture {
  std::unique_ptr<const Engine> engine;
  std::vector<std::string> packages;  // index i -> package of app i
  std::vector<uint32_t> uids;         // index i -> uid of app i
  std::vector<std::string> paths;     // storage for Request::path views; never resized after fill
  std::vector<media::ContentFacts> facts;  // storage for Request::content; never resized after fill
  std::vector<Request> mix;
  std::string worst_path;
  std::string first_path;
  Request worst_case;
  Request first_rule;
};

// Indexes into Fixture::facts.
enum FactsKind : size_t {
  kJpeg = 0,
  kPng,
  kMp4,
  kMp3,
  kPdf,
  kTxt,
  kNameImage,
  kNameVideo,
  kNameAudio,
  kNameOther,
  kFactsKinds
};

// The policy's path and text: `flag_path` (--policy=), else $SCOPEDFS_BENCH_POLICY, else
// policy/configs/android.textproto in the runfiles or the working directory.
absl::StatusOr<std::pair<std::string, std::string>> LoadPolicyText(const std::string& flag_path,
                                                                   const char* argv0);
// The 200 apps' apps.textproto; fills each app's package and uid.
std::string MakeAppsText(std::vector<std::string>* packages, std::vector<uint32_t>* uids);
// Fixture::facts, indexed by FactsKind.
void MakeFacts(std::vector<media::ContentFacts>* facts);
// Fixture::mix (and the paths its requests point into), from f->uids, f->packages and f->facts.
void MakeMix(Fixture* f);
size_t CountDistinct(const std::vector<Request>& mix);
// To stderr: the mix's rules and outcomes, and which of its decisions allocated.
void PrintMixSummary(const Fixture& f, const std::string& policy_path);

}  // namespace scopedfs::policy::bench

#endif  // SCOPEDFS_POLICY_ENGINE_BENCHMARK_FIXTURE_H_
