#include "config/cluster_config.h"
#include "config/infer_cluster.h"

#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <tuple>

namespace orrery {
namespace {

const std::string kSource = ORRERY_SOURCE_DIR;
const std::string kShared = ORRERY_SHARED_DIR;

std::string ConfigPath(const std::string& name) { return kSource + "/configs/" + name; }

// Error message of parsing `text` as "t.toml" (empty when it parsed).
std::string Err(const std::string& text) {
  auto r = ParseClusterConfigString(text, "t.toml");
  return r.ok() ? std::string() : r.error().message;
}

void ExpectTotals(const Cluster& c, size_t nodes, uint64_t gpus, size_t vcs) {
  EXPECT_EQ(c.nodes.size(), nodes);
  EXPECT_EQ(c.total_gpus(), gpus);
  EXPECT_EQ(c.vcs.size(), vcs);
  // Node ids dense and in VC order; VC node lists ascending; VC GPU sums consistent.
  uint64_t vc_gpu_sum = 0;
  for (size_t i = 0; i < c.nodes.size(); ++i) {
    EXPECT_EQ(c.nodes[i].id.value(), i);
    if (i > 0) {
      EXPECT_LE(c.nodes[i - 1].vc.value(), c.nodes[i].vc.value());
    }
  }
  for (size_t v = 0; v < c.vcs.size(); ++v) {
    const auto& vc = c.vcs[v];
    EXPECT_EQ(vc.id.value(), v);
    EXPECT_FALSE(vc.nodes.empty()) << vc.name;
    EXPECT_TRUE(std::is_sorted(vc.nodes.begin(), vc.nodes.end()));
    uint64_t g = 0;
    for (NodeId n : vc.nodes) {
      EXPECT_EQ(c.nodes[n.value()].vc, vc.id);
      g += c.nodes[n.value()].gpus;
    }
    EXPECT_EQ(g, vc.gpus);
    vc_gpu_sum += vc.gpus;
  }
  EXPECT_EQ(vc_gpu_sum, gpus);
}

TEST(ClusterConfigTest, PhillyMatchesHeliosVcList) {
  auto r = LoadClusterConfig(ConfigPath("philly.toml"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  ExpectTotals(*r, 352, 2816, 11);
  EXPECT_EQ(r->name, "philly");
  EXPECT_FALSE(r->single_pool);
  const std::vector<std::pair<std::string, size_t>> want = {
      {"6214e9", 64}, {"7f04ca", 32}, {"11cb48", 16}, {"b436b2", 64}, {"ee9e8c", 64}, {"e13805", 16},
      {"6c71a0", 32}, {"2869ce", 16}, {"ed69ec", 8},  {"103959", 8},  {"0e4a51", 32}};
  ASSERT_EQ(r->vcs.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(r->vcs[i].name, want[i].first);
    EXPECT_EQ(r->vcs[i].nodes.size(), want[i].second);
  }
  EXPECT_EQ(r->nodes[0].name, "6214e9-0");
  EXPECT_EQ(r->nodes[64].name, "7f04ca-0");
  EXPECT_FALSE(r->nodes[0].gpu_type.valid());
}

TEST(ClusterConfigTest, PhillyVcCountsEqualTheSharedCsv) {
  std::ifstream in(kShared + "/traces/philly-pollux/philly_vc.csv");
  if (!in) GTEST_SKIP() << "shared traces not found at " << kShared << " (set -DORRERY_SHARED_DIR)";
  auto r = LoadClusterConfig(ConfigPath("philly.toml"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  std::string line;
  std::getline(in, line);  // header "vc,node num"
  size_t i = 0;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    auto comma = line.find(',');
    ASSERT_LT(i, r->vcs.size());
    EXPECT_EQ(r->vcs[i].name, line.substr(0, comma));
    EXPECT_EQ(r->vcs[i].nodes.size(), std::stoul(line.substr(comma + 1)));
    ++i;
  }
  EXPECT_EQ(i, r->vcs.size());
}

TEST(ClusterConfigTest, PhillyHalfIsCeilOfHalf) {
  auto full = LoadClusterConfig(ConfigPath("philly.toml"));
  auto half = LoadClusterConfig(ConfigPath("philly-half.toml"));
  ASSERT_TRUE(full.ok()) << full.error().message;
  ASSERT_TRUE(half.ok()) << half.error().message;
  ExpectTotals(*half, 176, 1408, 11);
  for (size_t i = 0; i < full->vcs.size(); ++i) {
    EXPECT_EQ(half->vcs[i].name, full->vcs[i].name);
    EXPECT_EQ(half->vcs[i].nodes.size(), (full->vcs[i].nodes.size() + 1) / 2);
  }
}

TEST(ClusterConfigTest, HeliosVenus) {
  auto r = LoadClusterConfig(ConfigPath("helios-venus.toml"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  ExpectTotals(*r, 135, 1080, 15);
  EXPECT_EQ(r->vcs.front().name, "vcEwI");
  EXPECT_EQ(r->vcs.front().nodes.size(), 9u);
  EXPECT_EQ(r->vcs.back().name, "vcgkz");
  EXPECT_EQ(r->vcs.back().nodes.size(), 1u);
  ASSERT_EQ(r->gpu_types.size(), 1u);
  EXPECT_EQ(r->gpu_types.Get(0), "V100");
  EXPECT_EQ(r->nodes[7].gpu_type, GpuTypeId(0));
  const VirtualCluster* vc = r->FindVc("vcJsw");
  ASSERT_NE(vc, nullptr);
  EXPECT_EQ(vc->gpus, 256u);
}

TEST(ClusterConfigTest, HeliosVenusPowerDefaults) {
  auto r = LoadClusterSpec(ConfigPath("helios-venus.toml"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  const PowerModel& p = r->node_power(NodeId(0));
  EXPECT_EQ(p.source, "default:V100");
  EXPECT_DOUBLE_EQ(p.idle_watts, 800);
  EXPECT_DOUBLE_EQ(p.busy_watts_per_gpu, 260);
  EXPECT_EQ(r->groups.size(), 15u);
  EXPECT_EQ(r->groups[1].first_node, 9u);
}

TEST(ClusterConfigTest, HeliosVenusVcCountsEqualTheSharedCsv) {
  std::ifstream in(kShared + "/traces/helios-aggregates/vc_config.csv");
  if (!in) GTEST_SKIP() << "shared traces not found at " << kShared << " (set -DORRERY_SHARED_DIR)";
  auto r = LoadClusterConfig(ConfigPath("helios-venus.toml"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  std::string line;
  std::getline(in, line);
  size_t i = 0;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    auto comma = line.find(',');
    ASSERT_LT(i, r->vcs.size());
    EXPECT_EQ(r->vcs[i].name, line.substr(0, comma));
    EXPECT_EQ(r->vcs[i].nodes.size(), std::stoul(line.substr(comma + 1)));
    ++i;
  }
  EXPECT_EQ(i, 15u);
}

TEST(ClusterConfigTest, EmbeddedDefaultIsHeliosVenus) {
  std::ifstream in(ConfigPath("helios-venus.toml"));
  ASSERT_TRUE(in);
  std::string file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(std::string(EmbeddedDefaultClusterToml()), file);
  auto r = DefaultCluster();
  ASSERT_TRUE(r.ok()) << r.error().message;
  ExpectTotals(*r, 135, 1080, 15);
  EXPECT_EQ(r->name, "helios-venus");
}

// (model, gpus, cpu_milli, mem_mib) -> node count.
std::map<std::tuple<std::string, int, uint32_t, uint32_t>, int> Shapes(const Cluster& c) {
  std::map<std::tuple<std::string, int, uint32_t, uint32_t>, int> m;
  for (const auto& n : c.nodes)
    ++m[{n.gpu_type.valid() ? c.gpu_types.Get(n.gpu_type.value()) : "", n.gpus, n.cpu_milli, n.mem_mib}];
  return m;
}

TEST(ClusterConfigTest, AlibabaOpenb) {
  auto r = LoadClusterConfig(ConfigPath("alibaba-openb.toml"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  ExpectTotals(*r, 1213, 6212, 1);
  EXPECT_TRUE(r->single_pool);
  EXPECT_EQ(r->vcs[0].name, "default");
  std::map<std::pair<std::string, int>, int> mix;
  for (const auto& n : r->nodes) ++mix[{r->gpu_types.Get(n.gpu_type.value()), n.gpus}];
  const std::map<std::pair<std::string, int>, int> want = {
      {{"G2", 8}, 549},      {{"T4", 2}, 387},      {{"P100", 2}, 131},    {{"G3", 8}, 39},
      {{"V100M16", 4}, 28},  {{"V100M32", 8}, 21},  {{"V100M16", 1}, 19},  {{"T4", 4}, 17},
      {{"V100M32", 4}, 9},   {{"V100M16", 8}, 8},   {{"P100", 1}, 3},      {{"A10", 1}, 2}};
  EXPECT_EQ(mix, want);
  EXPECT_EQ(r->gpu_types.size(), 7u);
  EXPECT_EQ(r->nodes[0].name, "g2x8-0");
}

TEST(ClusterConfigTest, AlibabaOpenbEqualsTheNodeListCsv) {
  std::string csv = kShared + "/traces/alibaba-gpu-v2023/openb_node_list_gpu_node.csv";
  if (!std::filesystem::exists(csv)) GTEST_SKIP() << "shared trace not found: " << csv << " (set -DORRERY_SHARED_DIR)";
  auto from_csv = LoadOpenbNodeList(csv);
  ASSERT_TRUE(from_csv.ok()) << from_csv.error().message;
  ExpectTotals(*from_csv, 1213, 6212, 1);
  EXPECT_TRUE(from_csv->single_pool);
  EXPECT_EQ(from_csv->name, "openb_node_list_gpu_node");
  EXPECT_EQ(from_csv->nodes[0].name, "openb-node-0000");
  auto from_toml = LoadClusterConfig(ConfigPath("alibaba-openb.toml"));
  ASSERT_TRUE(from_toml.ok()) << from_toml.error().message;
  EXPECT_EQ(Shapes(*from_csv), Shapes(*from_toml));
}

TEST(ClusterConfigTest, OpenbAllNodesIncludesCpuOnlyNodes) {
  std::string csv = kShared + "/traces/alibaba-gpu-v2023/openb_node_list_all_node.csv";
  if (!std::filesystem::exists(csv)) GTEST_SKIP() << "shared trace not found: " << csv << " (set -DORRERY_SHARED_DIR)";
  auto r = LoadOpenbNodeList(csv);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ExpectTotals(*r, 1523, 6212, 1);
  size_t untyped = 0;
  for (const auto& n : r->nodes) untyped += !n.gpu_type.valid();
  EXPECT_EQ(untyped, 310u);
}

TEST(ClusterConfigTest, ScaleAndHpc2n) {
  auto s = LoadClusterConfig(ConfigPath("scale-1024x8.toml"));
  ASSERT_TRUE(s.ok()) << s.error().message;
  ExpectTotals(*s, 1024, 8192, 1);
  EXPECT_TRUE(s->single_pool);
  auto h = LoadClusterConfig(ConfigPath("hpc2n.toml"));
  ASSERT_TRUE(h.ok()) << h.error().message;
  ExpectTotals(*h, 120, 240, 1);
  EXPECT_TRUE(h->single_pool);
  EXPECT_EQ(h->nodes[0].mem_mib, 1024u);
  EXPECT_EQ(h->nodes[119].name, "seth-119");
}

TEST(ClusterConfigTest, EveryShippedConfigLoads) {
  size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator(kSource + "/configs")) {
    if (e.path().extension() != ".toml") continue;
    auto r = LoadClusterConfig(e.path().string());
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
    ++n;
  }
  EXPECT_GE(n, 6u);
}

TEST(ClusterConfigTest, HeterogeneousVcsAndNodeGroups) {
  auto r = ParseClusterSpecString(R"(name = "mixed"
[defaults]
gpus_per_node = 8
gpu_type = "A100"

[[vc]]
name = "train"
nodes = 2

[[vc]]
name = "small"
nodes = 3
gpus_per_node = 4
gpu_type = "T4"
cpu_milli = 32000
mem_mib = 131072
idle_watts = 300
busy_watts_per_gpu = 60.5

[[node_group]]
count = 2
gpus = 8
gpu_type = "H100"
vc = "infer"

[[node_group]]
count = 1
vc = "train"
name_prefix = "extra-"
)",
                                  "mixed.toml");
  ASSERT_TRUE(r.ok()) << r.error().message;
  const Cluster& c = r->cluster;
  ExpectTotals(c, 8, 3 * 8 + 3 * 4 + 2 * 8, 3);
  EXPECT_EQ(c.vcs[0].name, "train");
  EXPECT_EQ(c.vcs[1].name, "small");
  EXPECT_EQ(c.vcs[2].name, "infer");
  // train: 2 from [[vc]] + 1 from the node group, contiguous ids 0..2.
  EXPECT_EQ(c.vcs[0].nodes, (std::vector<NodeId>{NodeId(0), NodeId(1), NodeId(2)}));
  EXPECT_EQ(c.nodes[2].name, "extra-0");
  EXPECT_EQ(c.nodes[3].name, "small-0");
  EXPECT_EQ(c.nodes[3].cpu_milli, 32000u);
  EXPECT_EQ(c.gpu_types.Get(c.nodes[0].gpu_type.value()), "A100");
  EXPECT_EQ(c.gpu_types.Get(c.nodes[3].gpu_type.value()), "T4");
  EXPECT_EQ(c.gpu_types.Get(c.nodes[7].gpu_type.value()), "H100");
  EXPECT_EQ(c.gpu_types.size(), 3u);
  EXPECT_EQ(r->node_power(NodeId(0)).source, "default:A100");
  EXPECT_EQ(r->node_power(NodeId(3)).source, "config");
  EXPECT_DOUBLE_EQ(r->node_power(NodeId(3)).busy_watts_per_gpu, 60.5);
  EXPECT_EQ(r->node_power(NodeId(6)).source, "default:H100");
  EXPECT_DOUBLE_EQ(r->node_power(NodeId(6)).idle_watts, 2000);
}

TEST(ClusterConfigTest, PowerDefaultsOnlyForEightGpuV100A100H100) {
  EXPECT_EQ(DefaultPowerModel("V100", 8).source, "default:V100");
  EXPECT_EQ(DefaultPowerModel("A100", 8).source, "default:A100");
  EXPECT_EQ(DefaultPowerModel("H100", 8).source, "default:H100");
  EXPECT_FALSE(DefaultPowerModel("V100", 4).known());
  EXPECT_FALSE(DefaultPowerModel("T4", 8).known());
}

TEST(ClusterConfigTest, DeepNestingIsRejectedBeforeParsing) {
  std::string deep = "name = \"c\"\n# [[[[ in a comment\ns = \"[[[[\"\na = " + std::string(100000, '[');
  EXPECT_EQ(Err(deep), "t.toml:4:69: expected arrays and inline tables nested at most 64 deep, got deeper nesting");
  EXPECT_EQ(Err("name = \"c\"\na = " + std::string(50000, '{') ),
            "t.toml:2:69: expected arrays and inline tables nested at most 64 deep, got deeper nesting");
}

TEST(ClusterConfigTest, InvalidUtf8AndNulAreRejectedBeforeParsing) {
  // Regression (cluster_config_fuzz): invalid UTF-8 in a literal-string key made toml11
  // read past its buffer while reporting the error.
  EXPECT_EQ(Err("name = \"c\"\n' shared/t\xff\xff\xff" "bs' = 1\n"),
            "t.toml:2:11: expected UTF-8 text without NUL bytes, got byte 0xFF");
  EXPECT_EQ(Err(std::string("name = \"c\"\n# a\0b\n", 17)),
            "t.toml:2:4: expected UTF-8 text without NUL bytes, got byte 0x00");
  EXPECT_EQ(Err("name = \"\xc0\xaf\"\n"), "t.toml:1:9: expected UTF-8 text without NUL bytes, got byte 0xC0");
  // Valid multi-byte UTF-8 passes the check (and then the usual validation applies).
  EXPECT_EQ(Err("name = \"caf\xc3\xa9\"\nsingle_pool = true\n[[node_group]]\ncount = 1\ngpus = 8\n"), "");
}

TEST(ClusterConfigTest, MissingFileIsAnError) {
  auto r = LoadClusterConfig("/nonexistent/x.toml");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("/nonexistent/x.toml"), std::string::npos) << r.error().message;
  EXPECT_EQ(r.error().exit_code, kExitBadInput);
}

// A top-level name of 3,000 bytes (BadCases).
const std::string kLongName = "name = \"" + std::string(3000, 'p') + "\"\n";

struct BadCase {
  const char* text;
  const char* message;
};

class BadConfigTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadConfigTest, GivesTheExactLocatedMessage) {
  EXPECT_EQ(Err(GetParam().text), GetParam().message) << GetParam().text;
}

const char kVcPrefix[] = "name = \"c\"\n[defaults]\ngpus_per_node = 8\n";

INSTANTIATE_TEST_SUITE_P(
    Cases, BadConfigTest,
    ::testing::Values(
        BadCase{"name = \"c\"\nnodes = 3\n",
                "t.toml:2:1: unknown key 'nodes' in the top-level table: expected one of name, single_pool, defaults, vc, "
                "node_group, topology, start_latency"},
        BadCase{"name = \"c\"\n[defaults]\ngpu_per_node = 8\n",
                "t.toml:3:1: unknown key 'gpu_per_node' in [defaults]: expected one of gpus_per_node, gpu_type, "
                "cpu_milli, mem_mib, idle_watts, busy_watts_per_gpu"},
        BadCase{"name = \"c\"\n[defaults]\ngpus_per_node = 8\n[[vc]]\nname = \"a\"\nnodes = 2\n  colour = \"red\"\n",
                "t.toml:7:3: unknown key 'colour' in [[vc]] #1: expected one of name, nodes, gpus_per_node, gpu_type, "
                "cpu_milli, mem_mib, idle_watts, busy_watts_per_gpu, rack, nodes_per_rack"},
        BadCase{"name = \"c\"\n[defaults]\ngpus_per_node = 8\n[[vc]]\nname = \"a\"\nnodes = -3\n",
                "t.toml:6:9: key 'nodes' in [[vc]] #1 'a': expected a positive integer, got -3"},
        BadCase{"name = \"c\"\n[defaults]\ngpus_per_node = 8\n[[vc]]\nname = \"a\"\nnodes = 0\n",
                "t.toml:6:9: key 'nodes' in [[vc]] #1 'a': expected a positive integer, got 0"},
        BadCase{"name = \"c\"\n[defaults]\ngpus_per_node = 8\n[[vc]]\nname = \"a\"\nnodes = \"64\"\n",
                "t.toml:6:9: key 'nodes' in [[vc]] #1 'a': expected a positive integer, got a string \"64\""},
        BadCase{"name = \"c\"\n[defaults]\ngpus_per_node = 8\n[[vc]]\nname = \"a\"\nnodes = 2.0\n",
                "t.toml:6:9: key 'nodes' in [[vc]] #1 'a': expected a positive integer, got 2.0"},
        BadCase{"name = \"c\"\n[defaults]\ngpus_per_node = 8\n[[vc]]\nname = \"a\"\nnodes = 99999999999999999999\n",
                "t.toml:6:9: key 'nodes' in [[vc]] #1 'a': expected a positive integer no greater than 1000000, got "
                "99999999999999999999"},
        BadCase{"name = \"c\"\n[defaults]\ngpus_per_node = -8\n",
                "t.toml:3:17: key 'gpus_per_node' in [defaults]: expected a non-negative integer, got -8"},
        BadCase{"name = \"c\"\n[defaults]\ngpus_per_node = 70000\n",
                "t.toml:3:17: key 'gpus_per_node' in [defaults]: expected a non-negative integer no greater than "
                "65535, got 70000"},
        BadCase{"name = \"c\"\n[defaults]\ngpus_per_node = 8\ncpu_milli = true\n",
                "t.toml:4:13: key 'cpu_milli' in [defaults]: expected a non-negative integer, got a boolean true"},
        BadCase{"name = \"c\"\n[defaults]\ngpus_per_node = 8\nmem_mib = [1, 2]\n",
                "t.toml:4:11: key 'mem_mib' in [defaults]: expected a non-negative integer, got an array"},
        BadCase{"name = \"c\"\n[defaults]\ngpus_per_node = 8\ngpu_type = 100\n",
                "t.toml:4:12: key 'gpu_type' in [defaults]: expected a non-empty string, got 100"},
        BadCase{"name = \"c\"\n[defaults]\ngpus_per_node = 8\ngpu_type = \"\"\n",
                "t.toml:4:12: key 'gpu_type' in [defaults]: expected a non-empty string, got an empty string"},
        BadCase{"name = \"c\"\n[defaults]\ngpus_per_node = 8\nidle_watts = -1.5\nbusy_watts_per_gpu = 10\n",
                "t.toml:4:14: key 'idle_watts' in [defaults]: expected a non-negative number of watts below 1e9, got "
                "-1.5"},
        BadCase{"name = \"c\"\n[defaults]\ngpus_per_node = 8\nidle_watts = nan\nbusy_watts_per_gpu = 10\n",
                "t.toml:4:14: key 'idle_watts' in [defaults]: expected a non-negative number of watts below 1e9, got "
                "nan"},
        BadCase{"name = \"c\"\n[defaults]\ngpus_per_node = 8\nidle_watts = 500\n[[vc]]\nname = \"a\"\nnodes = 1\n",
                "t.toml:5:1: [[vc]] #1 'a': expected both idle_watts and busy_watts_per_gpu (here or in [defaults]), "
                "got only idle_watts (missing busy_watts_per_gpu)"},
        BadCase{"name = \"c\"\n[[vc]]\nname = \"a\"\nnodes = 1\n",
                "t.toml:2:1: [[vc]] #1 'a' has no GPU count: expected key 'gpus_per_node' here or in [defaults], "
                "found neither"},
        BadCase{"name = \"c\"\n[defaults]\ngpus_per_node = 8\n[[vc]]\nnodes = 1\n",
                "t.toml:4:1: [[vc]] #1 is missing required key 'name' (a non-empty string)"},
        BadCase{"name = \"c\"\n[defaults]\ngpus_per_node = 8\n[[vc]]\nname = \"a\"\n",
                "t.toml:4:1: [[vc]] #1 'a' is missing required key 'nodes' (a positive integer)"},
        BadCase{"name = \"c\"\n[defaults]\ngpus_per_node = 8\n[[vc]]\nname = \"a\"\nnodes = 1\n[[vc]]\nname = "
                "\"a\"\nnodes = 2\n",
                "t.toml:8:8: key 'name' in [[vc]] #2 'a': expected a unique VC name, got \"a\" again (first declared "
                "at line 4)"},
        BadCase{"name = \"c\"\n[vc]\nname = \"a\"\nnodes = 1\n",
                "t.toml:2:1: key 'vc': expected an array of tables ([[vc]]), got a table"},
        BadCase{"name = \"c\"\ndefaults = 8\n",
                "t.toml:2:1: key 'defaults': expected a table ([defaults]), got 8"},
        BadCase{"single_pool = true\n",
                "t.toml:1:1: missing required key 'name' in the top-level table (a non-empty string)"},
        BadCase{"name = \"c\"\nsingle_pool = \"yes\"\n",
                "t.toml:2:15: key 'single_pool' in the top-level table: expected true or false, got a string \"yes\""},
        BadCase{"name = \"c\"\n", "t.toml:1:1: cluster 'c' has no nodes: expected [[vc]] or [[node_group]] tables"},
        BadCase{"name = \"c\"\n[[node_group]]\ncount = 2\ngpus = 8\n",
                "t.toml:2:1: [[node_group]] #1 is missing required key 'vc' (the owning VC's name; or set single_pool "
                "= true)"},
        BadCase{"name = \"c\"\nsingle_pool = true\n[[node_group]]\ncount = 2\ngpus = 8\nvc = \"a\"\n",
                "t.toml:6:1: key 'vc' in [[node_group]] #1: expected no 'vc' when single_pool = true (all nodes form "
                "one pool), got \"a\""},
        BadCase{"name = \"c\"\nsingle_pool = true\n[[vc]]\nname = \"a\"\nnodes = 1\n",
                "t.toml:3:1: [[vc]] tables are not allowed when single_pool = true (all nodes form one pool "
                "'default'): expected [[node_group]] tables without 'vc', got [[vc]]"},
        BadCase{"name = \"c\"\nsingle_pool = true\n[[node_group]]\ngpus = 8\n",
                "t.toml:3:1: [[node_group]] #1 is missing required key 'count' (a positive integer)"},
        BadCase{"name = \"c\"\nsingle_pool = true\n[[node_group]]\ncount = -1\ngpus = 8\n",
                "t.toml:4:9: key 'count' in [[node_group]] #1: expected a positive integer, got -1"},
        BadCase{"name = \"c\"\nsingle_pool = true\n[[node_group]]\ncount = 1\n",
                "t.toml:3:1: [[node_group]] #1 has no GPU count: expected key 'gpus' here or 'gpus_per_node' in "
                "[defaults], found neither"},
        BadCase{"name = \"c\"\nsingle_pool = true\n[[node_group]]\ncount = 600000\ngpus = 1\n[[node_group]]\ncount "
                "= 600000\ngpus = 1\n",
                "t.toml:7:9: key 'count' in [[node_group]] #2: expected at most 1000000 nodes in the cluster, got "
                "1200000 so far"},
        BadCase{"name = \"c\"\nsingle_pool = true\n[[node_group]]\ncount = 1\ngpus = 1\ncolor = 1\n",
                "t.toml:6:1: unknown key 'color' in [[node_group]] #1: expected one of count, gpus, gpu_type, "
                "cpu_milli, mem_mib, vc, name_prefix, idle_watts, busy_watts_per_gpu, rack, nodes_per_rack"},
        BadCase{"name = \"c\"\nname = \"d\"\n",
                "t.toml:2:8: TOML syntax error: value (\"name\") already exists (value defined twice)"},
        BadCase{"name = \"c\"\n[defaults]\ngpus_per_node = 8\n[defaults]\n",
                "t.toml:4:1: TOML syntax error: table (\"defaults\") already exists (table defined twice)"},
        BadCase{"name = \"c\nx = 1\n",
                "t.toml:1:8: TOML syntax error: the next token is not a valid string (here)"},
        BadCase{"name = \"c\"\n[[vc]\n",
                "t.toml:2:1: TOML syntax error: an invalid key appeared (is not a valid key)"},
        BadCase{"name = \"c\" 2\n",
                "t.toml:1:12: TOML syntax error: invalid line format (expected newline, but got '2')"},
        BadCase{"name = \"a,b\"\n",
                "t.toml:1:8: key 'name' in the top-level table: expected a name without commas or control characters, got "
                "a string \"a,b\""},
        // A million nodes named from a 3,000-byte prefix would be 3 GB of names: names are at
        // most 255 bytes.
        BadCase{kLongName.c_str(),
                "t.toml:1:8: key 'name' in the top-level table: expected a name of at most 255 bytes, got one of 3000"}));

}  // namespace
}  // namespace orrery

namespace orrery {
namespace {

std::string WriteTemp(const std::string& name, const std::string& text) {
  std::string p = std::filesystem::temp_directory_path() / (name + "_" + std::to_string(::getpid()));
  std::ofstream(p) << text;
  return p;
}

// MaxNodes 3, MaxProcs 10: nodes of 10 / 3 = 3 processors, the remainder (1) on a 4th node.
TEST(InferCluster, SwfHeaderMachine) {
  std::string p = WriteTemp("swf_hdr", "; Version: 2.2\n; MaxNodes: 3\n;MaxProcs:   10\n    1 0 -1 5 1\n; MaxProcs: 99\n");
  auto m = ReadSwfMachine(p);
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->max_procs, 10u);  // the comment after the first job line is not header
  EXPECT_EQ(m->max_nodes, 3u);
  auto c = SwfCluster(*m, p);
  ASSERT_TRUE(c.ok());
  ASSERT_EQ(c->nodes.size(), 4u);
  EXPECT_EQ(c->nodes[0].gpus, 3);
  EXPECT_EQ(c->nodes[3].gpus, 1);
  EXPECT_EQ(c->total_gpus(), 10u);
  EXPECT_TRUE(c->single_pool);
  ASSERT_EQ(c->vcs.size(), 1u);
  EXPECT_EQ(c->vcs[0].name, "default");
  EXPECT_EQ(c->vcs[0].gpus, 10u);
  // Without MaxNodes: nodes of 8 (20 = 8 + 8 + 4).
  auto c2 = SwfCluster(SwfMachine{20, 0}, p);
  ASSERT_TRUE(c2.ok());
  ASSERT_EQ(c2->nodes.size(), 3u);
  EXPECT_EQ(c2->nodes[2].gpus, 4);
  std::filesystem::remove(p);
}

TEST(InferCluster, SwfHeaderErrors) {
  std::string p = WriteTemp("swf_bad", "; Version: 2.2\n; MaxProcs: lots\n");
  auto m = ReadSwfMachine(p);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().message, p + ":2: header 'MaxProcs': expected a positive integer, got \"lots\"");
  EXPECT_EQ(m.error().exit_code, 2);
  auto c = SwfCluster(SwfMachine{0, 4}, p);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().message.find("no MaxProcs"), std::string::npos);
  EXPECT_NE(c.error().message.find("--cluster"), std::string::npos);
  // 2,000,000,000 processors in nodes of 8: 250 M nodes, beyond kMaxConfigNodes.
  auto huge = SwfCluster(SwfMachine{2000000000, 0}, p);
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.error().message, p + ": the SWF header's MaxProcs 2000000000 / 8 per node: expected at most 1000000 "
                                      "nodes; pass --cluster FILE.toml");
  // A caller's smaller bound: 40 processors in nodes of 8 make 5 nodes, one over a bound of 4.
  auto bounded = SwfCluster(SwfMachine{40, 0}, p, 4);
  ASSERT_FALSE(bounded.ok());
  EXPECT_NE(bounded.error().message.find("MaxProcs 40 / 8 per node: expected at most 4 nodes"), std::string::npos)
      << bounded.error().message;
  EXPECT_TRUE(SwfCluster(SwfMachine{32, 0}, p, 4).ok());  // exactly 4 nodes
  auto bad_nodes = ParseSwfMachine("; MaxNodes: -3\n", "mem.swf");
  ASSERT_FALSE(bad_nodes.ok());
  EXPECT_EQ(bad_nodes.error().message, "mem.swf:1: header 'MaxNodes': expected a positive integer, got \"-3\"");
  std::filesystem::remove(p);
}

// A caller's node bound counts the nodes of every table: 3 + 2 > 4 at the second table's key.
TEST(ClusterConfig, ACallerBoundsTheNodesOfAllTables) {
  const std::string text = "name = \"t\"\n"
                           "[[vc]]\nname = \"a\"\nnodes = 3\ngpus_per_node = 8\n"
                           "[[vc]]\nname = \"b\"\nnodes = 2\ngpus_per_node = 8\n";
  auto r = ParseClusterConfigString(text, "b.toml", 4);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message.rfind("b.toml:8:", 0), 0u) << r.error().message;  // line 8: b's nodes
  EXPECT_NE(r.error().message.find("expected at most 4 nodes in the cluster, got 5 so far"), std::string::npos)
      << r.error().message;
  auto ok = ParseClusterConfigString(text, "b.toml", 5);
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_EQ(ok->nodes.size(), 5u);
}

// Topology (docs/formats/cluster.md): racks per [[vc]] / [[node_group]], link classes.
TEST(ClusterConfigTopology, RacksAndLinks) {
  auto r = ParseClusterConfigString(R"(name = "t"
[topology]
nvlink_gbps = 450
intra_rack_gbps = 50
inter_rack_gbps = 25
inter_rack_latency_us = 5
[[vc]]
name = "a"
nodes = 5
gpus_per_node = 8
nodes_per_rack = 2
[[vc]]
name = "b"
nodes = 1
gpus_per_node = 8
rack = "a-rack2"
)", "t.toml");
  ASSERT_TRUE(r.ok()) << r.error().message;
  const Cluster& c = *r;
  // a-0,a-1 → a-rack0; a-2,a-3 → a-rack1; a-4 → a-rack2, shared with b's node.
  ASSERT_EQ(c.topology.racks, (std::vector<std::string>{"default", "a-rack0", "a-rack1", "a-rack2"}));
  const uint16_t want[] = {1, 1, 2, 2, 3, 3};
  for (size_t i = 0; i < 6; ++i) EXPECT_EQ(c.nodes[i].rack, want[i]) << i;
  EXPECT_EQ(c.LinkBetween(NodeId(0), NodeId(0)), LinkClass::kIntraNode);
  EXPECT_EQ(c.LinkBetween(NodeId(0), NodeId(1)), LinkClass::kIntraRack);
  EXPECT_EQ(c.LinkBetween(NodeId(1), NodeId(2)), LinkClass::kInterRack);
  EXPECT_EQ(c.LinkBetween(NodeId(4), NodeId(5)), LinkClass::kIntraRack);
  EXPECT_EQ(c.topology.link(LinkClass::kIntraNode).gbps, 450);
  EXPECT_EQ(c.topology.link(LinkClass::kInterRack).latency_us, 5);
  EXPECT_TRUE(c.topology.declared);
}

TEST(ClusterConfigTopology, ShippedConfigsHaveOneDefaultRack) {
  auto r = LoadClusterConfig(kSource + "/configs/philly-half.toml");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_FALSE(r->topology.declared);
  EXPECT_EQ(r->topology.racks.size(), 1u);
  for (const Node& n : r->nodes) EXPECT_EQ(n.rack, 0);
}

TEST(ClusterConfigTopology, BadKeysAreLocated) {
  EXPECT_EQ(Err("name = \"t\"\n[topology]\nnvlink_gbps = -1\n[[vc]]\nname = \"a\"\nnodes = 1\ngpus_per_node = 8\n"),
            "t.toml:3:15: key 'nvlink_gbps' in [topology]: expected a non-negative number of GB/s below 1e9, got -1");
  EXPECT_EQ(Err("name = \"t\"\n[[vc]]\nname = \"a\"\nnodes = 2\ngpus_per_node = 8\nrack = \"r\"\nnodes_per_rack = 1\n"),
            "t.toml:7:18: [[vc]] #1 'a': expected either 'rack' or 'nodes_per_rack', got both");
}

// [start_latency] (docs/formats/cluster.md): the scheduling system's delay before a job's first
// chance to start; off by default.
const char kOneVc[] = "[[vc]]\nname = \"a\"\nnodes = 1\ngpus_per_node = 8\n";

TEST(ClusterConfigStartLatency, ReadsTheTableAndIsOffWithout) {
  auto r = ParseClusterConfigString(std::string("name = \"t\"\n[start_latency]\nmin_s = 4.5\nmedian_s = 16.75\nsigma = 0.709\n") +
                                        kOneVc,
                                    "t.toml");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->start_latency.active());
  EXPECT_EQ(r->start_latency.min_s, 4.5);
  EXPECT_EQ(r->start_latency.median_s, 16.75);
  EXPECT_EQ(r->start_latency.sigma, 0.709);
  auto fixed = ParseClusterConfigString(std::string("name = \"t\"\n[start_latency]\nmedian_s = 30\n") + kOneVc, "t.toml");
  ASSERT_TRUE(fixed.ok()) << fixed.error().message;
  EXPECT_EQ(fixed->start_latency.min_s, 0);  // defaults: no minimum, every job waits median_s exactly
  EXPECT_EQ(fixed->start_latency.sigma, 0);
  auto off = ParseClusterConfigString(std::string("name = \"t\"\n") + kOneVc, "t.toml");
  ASSERT_TRUE(off.ok());
  EXPECT_FALSE(off->start_latency.active());
  auto shipped = LoadClusterConfig(kSource + "/configs/philly-half.toml");
  ASSERT_TRUE(shipped.ok());
  EXPECT_FALSE(shipped->start_latency.active());
}

TEST(ClusterConfigStartLatency, BadValuesAreLocated) {
  const std::string head = "name = \"t\"\n[start_latency]\n";
  EXPECT_EQ(Err(head + "min_s = 3\n" + kOneVc),
            "t.toml:2:1: [start_latency]: missing required key 'median_s' (a number of seconds in [0, 86400])");
  EXPECT_EQ(Err(head + "median_s = -1\n" + kOneVc),
            "t.toml:3:12: key 'median_s' in [start_latency]: expected a number of seconds in [0, 86400], got -1");
  EXPECT_EQ(Err(head + "median_s = 90000\n" + kOneVc),
            "t.toml:3:12: key 'median_s' in [start_latency]: expected a number of seconds in [0, 86400], got 90000");
  EXPECT_EQ(Err(head + "median_s = 10\nmin_s = 12\n" + kOneVc),
            "t.toml:4:9: key 'min_s' in [start_latency]: expected at most median_s (10), got 12");
  EXPECT_EQ(Err(head + "median_s = 10\nsigma = 4\n" + kOneVc),
            "t.toml:4:9: key 'sigma' in [start_latency]: expected a log-sd in [0, 3], got 4");
  EXPECT_EQ(Err(head + "median = 10\n" + kOneVc),
            "t.toml:3:1: unknown key 'median' in [start_latency]: expected one of min_s, median_s, sigma");
  EXPECT_EQ(Err("name = \"t\"\nstart_latency = 5\n" + std::string(kOneVc)),
            "t.toml:2:1: key 'start_latency': expected a table ([start_latency]), got 5");
}

}  // namespace
}  // namespace orrery
