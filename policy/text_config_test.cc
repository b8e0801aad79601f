#include "policy/text_config.h"
#include <iostream>
#include "gtest/gtest.h"
#include "proto/policy.pb.h"
#include "google/protobuf/descriptor.pb.h"
namespace scopedfs::policy {
TEST(Probe, P) {
  const char* inputs[] = {
    "name: \"a\"\ndescription: \"x\"\npermission { name \"p\" }\n",
    "name: \"a\"\n  bogus: 1\n",
    "name: \"a\"\n  bogus { x: 1 }\n",
    "default_action {\n  outcome: OUTCOME_MAYBE\n}\n",
    "default_action {\n  outcome: 77\n}\n",
    "\tbogus: 1\n",
    "name: \"a\" name: \"b\"\n",
    "rule {\n",
    "bogus   : 1\n",
    "rule { app { bogus: 1 } }\n",
    "default_action { outcome: OUTCOME_MAYBE }\n",
    "default_action { outcome: OUTCOME_MAYBE\n\n  }\n",
    "name: 5\n",
    "layout: { top_level_dir: [\"a\", \"b\"] }\n",
  };
  for (const char* in : inputs) {
    Policy p;
    auto s = TextConfigSource::Parse(in, "f.textproto", &p);
    std::cout << "---\n" << in << "=> " << s.status() << "\n";
  }
  google::protobuf::FileOptions fo;
  auto s = TextConfigSource::Parse("java_generate_equals_and_hash: true\n", "w", &fo);
  std::cout << "deprecated => " << s.status() << "\n";
  Policy p;
  auto src = TextConfigSource::Parse("layout: { top_level_dir: [\"a\", \"b\"] }\nrule: [{name: \"x\"}, {name: \"y\"}]\n", "f", &p);
  std::cout << src->Where({{"layout"}, {"top_level_dir", 1}}) << " " << src->Where({{"rule", 1}}) << " " << src->Where({{"rule", 1}, {"name"}}) << "\n";
}
}
