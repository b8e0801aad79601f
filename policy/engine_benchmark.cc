// Decisions per second of Engine::Decide for the default Android policy with 200 installed apps,
// plus a check that the decision hot path allocates nothing (global operator new is counted). The
// apps, facts and request mix are engine_benchmark_fixture.h's.
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "benchmark/benchmark.h"
#include "policy/config.h"
#include "policy/counted_allocations.h"
#include "policy/engine.h"
#include "policy/engine_benchmark_fixture.h"

namespace scopedfs::policy::bench {
namespace {

Fixture* g_fixture = nullptr;

// --- Benchmarks
// -----------------------------------------------------------------------------------

void SetAllocCounter(benchmark::State& state, uint64_t allocations) {
  state.counters["allocs_per_decision"] = benchmark::Counter(
      state.iterations() == 0
          ? 0.0
          : static_cast<double>(allocations) / static_cast<double>(state.iterations()),
      benchmark::Counter::kAvgThreads);
}

void BM_DecideMix(benchmark::State& state) {
  const Engine& engine = *g_fixture->engine;
  const std::vector<Request>& mix = g_fixture->mix;
  // Threads start at different points of the mix.
  size_t i = (static_cast<size_t>(state.thread_index()) * (kMixSize / 2 + 17)) & (kMixSize - 1);
  uint64_t allocations_before = ThreadAllocations();
  for (auto _ : state) {
    Decision decision = engine.Decide(mix[i]);
    benchmark::DoNotOptimize(decision);
    i = (i + 1) & (kMixSize - 1);
  }
  uint64_t allocations = ThreadAllocations() - allocations_before;
  state.SetItemsProcessed(state.iterations());  // allocates (counter map); keep after the read
  SetAllocCounter(state, allocations);
}
BENCHMARK(BM_DecideMix);
// Same mix from two threads at once: Decide is const and takes no lock, so throughput should
// scale with cores (items_per_second is aggregate over both threads, wall clock).
BENCHMARK(BM_DecideMix)->Threads(2)->UseRealTime();

// One request decided over and over: the branch predictor and caches are warm, so this is the
// engine's best case for that path through the rules.
void DecideRepeatedly(benchmark::State& state, const Request& request) {
  const Engine& engine = *g_fixture->engine;
  uint64_t allocations_before = ThreadAllocations();
  for (auto _ : state) {
    Decision decision = engine.Decide(request);
    benchmark::DoNotOptimize(decision);
  }
  uint64_t allocations = ThreadAllocations() - allocations_before;
  state.SetItemsProcessed(state.iterations());  // allocates (counter map); keep after the read
  SetAllocCounter(state, allocations);
}

// Falls through every rule to the default action.
void BM_DecideWorstCase(benchmark::State& state) { DecideRepeatedly(state, g_fixture->worst_case); }
BENCHMARK(BM_DecideWorstCase);

// Decided by the first rule (root uid).
void BM_DecideFirstRule(benchmark::State& state) { DecideRepeatedly(state, g_fixture->first_rule); }
BENCHMARK(BM_DecideFirstRule);

int Main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  std::string policy_flag;
  std::vector<char*> rest = {argv[0]};
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (absl::StartsWith(arg, kPolicyFlag)) {
      policy_flag = std::string(arg.substr(kPolicyFlag.size()));
    } else {
      rest.push_back(argv[i]);
    }
  }
  int rest_argc = static_cast<int>(rest.size());
  if (benchmark::ReportUnrecognizedArguments(rest_argc, rest.data())) return 1;

  absl::StatusOr<std::pair<std::string, std::string>> policy = LoadPolicyText(policy_flag, argv[0]);
  if (!policy.ok()) {
    std::fprintf(stderr, "%s\n", std::string(policy.status().message()).c_str());
    return 1;
  }
  static Fixture fixture;
  std::string apps_text = MakeAppsText(&fixture.packages, &fixture.uids);
  absl::StatusOr<LoadedConfig> config =
      ParseConfig(policy->second, "android.textproto", apps_text, "apps(200)");
  if (!config.ok()) {
    std::fprintf(stderr, "config: %s\n", config.status().ToString().c_str());
    return 1;
  }
  absl::StatusOr<std::unique_ptr<const Engine>> engine = Engine::Create(*config);
  if (!engine.ok()) {
    std::fprintf(stderr, "engine: %s\n", engine.status().ToString().c_str());
    return 1;
  }
  fixture.engine = std::move(*engine);
  MakeFacts(&fixture.facts);
  MakeMix(&fixture);

  // Worst case: app 0 holds no permission and reads another app's PDF in Download; every rule
  // is tried and none matches.
  fixture.worst_path = "Download/invoice-2024-03.pdf";
  fixture.worst_case.uid = fixture.uids[0];
  fixture.worst_case.op = OP_READ;
  fixture.worst_case.path = fixture.worst_path;
  fixture.worst_case.node_type = NODE_TYPE_FILE;
  fixture.worst_case.content = &fixture.facts[kPdf];
  fixture.worst_case.owner_uid = fixture.uids[1];
  // First rule: root reads a photo.
  fixture.first_rule.uid = 0;
  fixture.first_rule.op = OP_READ;
  fixture.first_path = "DCIM/Camera/IMG_20240101_000001.jpg";
  fixture.first_rule.path = fixture.first_path;
  fixture.first_rule.content = &fixture.facts[kJpeg];

  Decision worst = fixture.engine->Decide(fixture.worst_case);
  Decision first = fixture.engine->Decide(fixture.first_rule);
  if (worst.rule_index != -1 || first.rule_index != 0) {
    std::fprintf(stderr, "fixture broken: worst case decided by %s, first-rule case by %s\n",
                 std::string(worst.rule_name).c_str(), std::string(first.rule_name).c_str());
    return 1;
  }
  size_t distinct = CountDistinct(fixture.mix);
  if (distinct < kMinDistinct) {
    std::fprintf(stderr, "mix has only %zu distinct requests\n", distinct);
    return 1;
  }
  g_fixture = &fixture;
  PrintMixSummary(fixture, policy->first);

  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

}  // namespace
}  // namespace scopedfs::policy::bench

int main(int argc, char** argv) { return scopedfs::policy::bench::Main(argc, argv); }
