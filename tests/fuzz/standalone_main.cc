// Driver for fuzz targets built without libFuzzer (g++ builds, ctest): runs
// every file of the given corpus directories, then random mutations of them
// (byte flips, truncations, splices, inserts) until --seconds runs out.
// Deterministic for a given --seed. A failed property traps, failing ctest.
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);
// Optional: a target that keeps state across inputs (threads, a database)
// defines it to tear that state down. Called before main returns, so it runs
// before any static object is destroyed (see server_handlers_fuzz.cc).
extern "C" void ZstoreFuzzShutdown() __attribute__((weak));

namespace {

using Input = std::vector<std::uint8_t>;

std::vector<Input> load_corpus(const std::vector<std::string>& dirs) {
  std::vector<Input> corpus;
  for (const auto& dir : dirs) {
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      std::ifstream in(entry.path(), std::ios::binary);
      corpus.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
  }
  if (corpus.empty()) corpus.emplace_back();
  return corpus;
}

Input mutate(const std::vector<Input>& corpus, std::mt19937_64& rng) {
  Input in = corpus[rng() % corpus.size()];
  int rounds = 1 + static_cast<int>(rng() % 4);
  for (int r = 0; r < rounds; ++r) {
    switch (rng() % 5) {
      case 0:
        if (!in.empty()) in[rng() % in.size()] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
        break;
      case 1:
        if (!in.empty()) in.resize(rng() % in.size());
        break;
      case 2:
        in.insert(in.begin() + static_cast<long>(in.empty() ? 0 : rng() % in.size()), static_cast<std::uint8_t>(rng()));
        break;
      case 3: {
        const Input& other = corpus[rng() % corpus.size()];
        in.insert(in.end(), other.begin(), other.end());
        break;
      }
      default:
        if (!in.empty()) in[rng() % in.size()] = static_cast<std::uint8_t>(rng());
    }
  }
  return in;
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 3;
  std::uint64_t seed = 1;
  std::vector<std::string> dirs;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--seconds" && i + 1 < argc)
      seconds = std::atof(argv[++i]);
    else if (a == "--seed" && i + 1 < argc)
      seed = std::strtoull(argv[++i], nullptr, 10);
    else
      dirs.push_back(a);
  }
  auto corpus = load_corpus(dirs);
  for (const auto& in : corpus) LLVMFuzzerTestOneInput(in.data(), in.size());
  std::mt19937_64 rng(seed);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  std::uint64_t runs = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    for (int i = 0; i < 256; ++i, ++runs) {
      Input in = mutate(corpus, rng);
      LLVMFuzzerTestOneInput(in.data(), in.size());
    }
  }
  if (ZstoreFuzzShutdown != nullptr) ZstoreFuzzShutdown();
  std::cout << "fuzz: " << corpus.size() << " corpus inputs, " << runs << " mutated runs, no failure\n";
  return 0;
}
