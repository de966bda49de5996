// The interchange issue's speed targets (BENCHMARKS.md, "Interchange"):
//
// - Loading is O(header): BM_LoadHeader/<MiB> (load_safetensors, what
//   `tessel inspect` does without --stats) and BM_LoadGgufHeader/<MiB>
//   (load_gguf) on files of 10 MiB, 100 MiB, 1 GiB and 2 GiB holding 100
//   f32 tensors each. Only the header is written; the data section is a
//   hole made by ftruncate (a sparse file). Loading maps the file and
//   reads the header alone, so whether the data pages exist on disk or in
//   the page cache cannot change its cost, and the 2 GiB files cost no
//   disk space or write time.
// - convert f32 -> bf16 against the machine's copy bandwidth, on a
//   512 MiB safetensors file of random f32 data (64 tensors of 8 MiB),
//   read once before timing so that it is in the page cache:
//   BM_CastStream: the in-memory part of convert, a CastingSource over the
//     mapped file read tensor by tensor in 2 MiB chunks of output into one
//     reused buffer (as io::write_tensor_data asks for them);
//   BM_ConvertF32ToBF16/<where>: the full convert, load_safetensors then
//     save_safetensors(out, CastingSource) with its fsync and rename;
//   BM_FileCopy/<where>: the same input bytes, mapped afresh, written to a
//     new file with write() in 2 MiB chunks, fsync and rename: what copying
//     the file costs here, the ceiling for any convert that writes its
//     output through the page cache.
//   <where> is `tmpdir` (the input's directory, TMPDIR, default /tmp) or
//   `shm` (/dev/shm, a tmpfs where fsync has nothing to write back), which
//   separates the page-cache copy from the disk.
//   BM_StreamCopy (bench/ceilings.cpp, linked in) is the memory-copy
//   ceiling, on all threads, in the same run.
//
// Bytes: SetBytesProcessed counts bytes read + bytes written, as
// BM_StreamCopy does (a 64 MiB memcpy counts 128 MiB), so the
// bytes_per_second of every benchmark here is directly comparable with the
// ceiling's: f32 -> bf16 of 512 MiB counts 512 + 256 MiB, a copy of
// 512 MiB counts 1 GiB. The counter `input_bytes` is the input's size per
// iteration, for rates in input bytes (bench/compare_io.py prints both).
//
// Every file lives in one temporary directory (and one under /dev/shm),
// created when a benchmark first needs it and removed at exit.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "tessel/io/dlpack.hpp"
#include "tessel/tessel.hpp"

namespace {

namespace fs = std::filesystem;
using namespace tessel;

constexpr int kHeaderTensors = 100;
constexpr std::int64_t kRowLength = 256;  // f32 elements per row
constexpr std::int64_t kStreamTensors = 64;
constexpr std::int64_t kStreamTensorElements = std::int64_t{2} << 20;  // 8 MiB
constexpr std::int64_t kStreamInputBytes =
    kStreamTensors * kStreamTensorElements * 4;  // 512 MiB
constexpr std::int64_t kChunkBytes = std::int64_t{2} << 20;

[[noreturn]] void fail(const std::string& what) {
  throw std::runtime_error(fmt::format("{}: {}", what, std::strerror(errno)));
}

// A directory made with mkdtemp under `base`, removed with everything in
// it when the process exits (a function-local static's destructor).
class TempDir {
 public:
  explicit TempDir(const fs::path& base) {
    std::string tmpl = (base / "tessel-bench-io-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) fail("mkdtemp in " + base.string());
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

const fs::path& work_dir() {
  static const TempDir dir([] {
    const char* env = std::getenv("TMPDIR");
    return fs::path(env && *env ? env : "/tmp");
  }());
  return dir.path();
}

const fs::path& shm_dir() {
  static const TempDir dir("/dev/shm");
  return dir.path();
}

int create(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) fail("creating " + path.string());
  return fd;
}

void write_all(int fd, const void* data, std::size_t n) {
  const auto* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) fail("write");
    p += w;
    n -= static_cast<std::size_t>(w);
  }
}

// The rows of each of the 100 tensors of a file of about `mib` MiB.
std::int64_t rows_for(std::int64_t mib) {
  return (mib << 20) / kHeaderTensors / (kRowLength * 4);
}

// A safetensors file of 100 f32 tensors [rows, 256] whose data section is
// a hole: the header is written, then the file is extended by ftruncate.
fs::path sparse_safetensors(std::int64_t mib) {
  static std::map<std::int64_t, fs::path> made;
  if (auto it = made.find(mib); it != made.end()) return it->second;
  const std::int64_t rows = rows_for(mib);
  const std::int64_t bytes = rows * kRowLength * 4;
  std::string header = R"({"__metadata__":{"format":"pt"})";
  for (int i = 0; i < kHeaderTensors; ++i) {
    header += fmt::format(
        R"(,"model.layers.{}.weight":{{"dtype":"F32","shape":[{},{}],)"
        R"("data_offsets":[{},{}]}})",
        i, rows, kRowLength, i * bytes, (i + 1) * bytes);
  }
  header += "}";
  header.append((8 - header.size() % 8) % 8, ' ');
  const fs::path path = work_dir() / fmt::format("header_{}.safetensors", mib);
  const int fd = create(path);
  const std::uint64_t n = header.size();
  write_all(fd, &n, 8);  // little-endian (x86-64, ARM64)
  write_all(fd, header.data(), header.size());
  if (::ftruncate(fd, static_cast<off_t>(8 + n + kHeaderTensors * bytes)) != 0)
    fail("ftruncate");
  ::close(fd);
  return made[mib] = path;
}

void put_u32(std::string& s, std::uint32_t v) {
  s.append(reinterpret_cast<const char*>(&v), 4);
}
void put_u64(std::string& s, std::uint64_t v) {
  s.append(reinterpret_cast<const char*>(&v), 8);
}
void put_str(std::string& s, const std::string& v) {
  put_u64(s, v.size());
  s += v;
}

// The same tensors as a GGUF v3 file (ne = [256, rows], type F32), the
// data section again a hole.
fs::path sparse_gguf(std::int64_t mib) {
  static std::map<std::int64_t, fs::path> made;
  if (auto it = made.find(mib); it != made.end()) return it->second;
  const std::int64_t rows = rows_for(mib);
  const std::int64_t bytes = rows * kRowLength * 4;
  std::string h = "GGUF";
  put_u32(h, 3);
  put_u64(h, kHeaderTensors);
  put_u64(h, 2);  // metadata entries
  put_str(h, "general.architecture");
  put_u32(h, 8);  // string
  put_str(h, "llama");
  put_str(h, "general.name");
  put_u32(h, 8);
  put_str(h, "bench");
  for (int i = 0; i < kHeaderTensors; ++i) {
    put_str(h, fmt::format("blk.{}.weight", i));
    put_u32(h, 2);  // dimensions
    put_u64(h, kRowLength);
    put_u64(h, static_cast<std::uint64_t>(rows));
    put_u32(h, 0);                                      // F32
    put_u64(h, static_cast<std::uint64_t>(i * bytes));  // multiples of 1024
  }
  h.append((32 - h.size() % 32) % 32, '\0');  // data at general.alignment
  const fs::path path = work_dir() / fmt::format("header_{}.gguf", mib);
  const int fd = create(path);
  write_all(fd, h.data(), h.size());
  if (::ftruncate(fd, static_cast<off_t>(h.size() + kHeaderTensors * bytes)) !=
      0)
    fail("ftruncate");
  ::close(fd);
  return made[mib] = path;
}

template <class Load>
void load_header(benchmark::State& state, const fs::path& path, Load load) {
  std::size_t tensors = 0;
  for (auto _ : state) {
    auto file = load(path);
    tensors = file.tensors.size();
    benchmark::DoNotOptimize(file.tensors.data());
  }
  if (tensors != kHeaderTensors) state.SkipWithError("wrong tensor count");
  state.counters["file_bytes"] = static_cast<double>(fs::file_size(path));
  state.counters["tensors"] = static_cast<double>(tensors);
}

// Handing a tensor to another consumer without a copy: the format
// standard's JSON descriptor (describe, to_json, parse, lay over the same
// storage) against DLPack, the exchange PyTorch, TensorFlow and NumPy use
// natively. Both are O(1) in the tensor's size; the ratio is the
// descriptor's per-exchange cost (BENCHMARKS.md).
void BM_ExchangeDescriptor(benchmark::State& state) {
  const Tensor t = empty({state.range(0)}, DType::F32);
  for (auto _ : state) {
    const TensorDescriptor d = descriptor_from_json(to_json(describe(t), -1));
    const Tensor back = tensor_from_descriptor(d, t.storage());
    benchmark::DoNotOptimize(back.raw_data());
  }
}
BENCHMARK(BM_ExchangeDescriptor)->Arg(1 << 10)->Arg(1 << 26);

void BM_ExchangeDLPack(benchmark::State& state) {
  const Tensor t = empty({state.range(0)}, DType::F32);
  for (auto _ : state) {
    const Tensor back = from_dlpack(to_dlpack(t));
    benchmark::DoNotOptimize(back.raw_data());
  }
}
BENCHMARK(BM_ExchangeDLPack)->Arg(1 << 10)->Arg(1 << 26);

void BM_LoadHeader(benchmark::State& state) {
  load_header(state, sparse_safetensors(state.range(0)),
              [](const fs::path& p) { return load_safetensors(p); });
}
BENCHMARK(BM_LoadHeader)
    ->Arg(10)
    ->Arg(100)
    ->Arg(1024)
    ->Arg(2048)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

void BM_LoadGgufHeader(benchmark::State& state) {
  load_header(state, sparse_gguf(state.range(0)),
              [](const fs::path& p) { return load_gguf(p); });
}
BENCHMARK(BM_LoadGgufHeader)
    ->Arg(10)
    ->Arg(100)
    ->Arg(1024)
    ->Arg(2048)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

// Reads every byte of a mapped file once (so its pages are in the page
// cache and, for this mapping, in the page tables).
std::uint64_t touch(const Tensor& t) {
  const auto* p = static_cast<const std::uint8_t*>(t.raw_data());
  std::uint64_t sum = 0;
  for (std::int64_t i = 0; i < t.nbytes(); i += 4096) sum += p[i];
  return sum;
}

// 512 MiB of random f32 in 64 tensors, written once by save_safetensors.
const fs::path& stream_input() {
  static const fs::path path = [] {
    const fs::path p = work_dir() / "stream_f32.safetensors";
    std::vector<Tensor> tensors;
    for (std::int64_t i = 0; i < kStreamTensors; ++i) {
      Tensor t = randn({kStreamTensorElements / 4096, 4096});
      t.set_name(fmt::format("model.layers.{}.weight", i));
      tensors.push_back(std::move(t));
    }
    save_safetensors(p, tensors);
    return p;
  }();
  return path;
}

// The input mapped once and read through, kept for the process.
const SafetensorsFile& cached_input() {
  static const SafetensorsFile file = [] {
    SafetensorsFile f = load_safetensors(stream_input());
    std::uint64_t sum = 0;
    for (const Tensor& t : f.tensors) sum += touch(t);
    benchmark::DoNotOptimize(sum);
    return f;
  }();
  return file;
}

void report(benchmark::State& state, std::int64_t read, std::int64_t written) {
  state.SetBytesProcessed(state.iterations() * (read + written));
  state.counters["input_bytes"] = static_cast<double>(read);
  state.counters["output_bytes"] = static_cast<double>(written);
}

std::vector<DType> all(DType d) {
  return std::vector<DType>(kStreamTensors, d);
}

void BM_CastStream(benchmark::State& state) {
  const SafetensorsFile& in = cached_input();
  CastingSource source(in.tensors, all(DType::BF16));
  std::vector<std::uint8_t> buffer(kChunkBytes);
  std::int64_t written = 0;
  for (auto _ : state) {
    written = 0;
    for (std::size_t i = 0; i < source.size(); ++i) {
      const std::int64_t total = source.spec(i).nbytes();
      for (std::int64_t offset = 0; offset < total; offset += kChunkBytes) {
        const auto n =
            static_cast<std::size_t>(std::min(kChunkBytes, total - offset));
        source.read(i, offset, {buffer.data(), n});
        written += static_cast<std::int64_t>(n);
      }
      benchmark::ClobberMemory();
    }
  }
  report(state, kStreamInputBytes, written);
}
BENCHMARK(BM_CastStream)->Unit(benchmark::kMillisecond)->UseRealTime();

fs::path output_dir(bool shm) { return shm ? shm_dir() : work_dir(); }

// "/tmp (ext4)": where the output goes.
std::string fs_label(const fs::path& dir) {
  struct statfs st {};
  const char* type = "?";
  if (::statfs(dir.c_str(), &st) == 0) {
    type = st.f_type == 0xEF53       ? "ext4"
           : st.f_type == 0x01021994 ? "tmpfs"
           : st.f_type == 0x9123683E ? "btrfs"
           : st.f_type == 0x58465342 ? "xfs"
                                     : "other";
  }
  return fmt::format("{} ({})", dir.parent_path().string(), type);
}

void BM_ConvertF32ToBF16(benchmark::State& state, bool shm) {
  const fs::path in = stream_input();
  cached_input();  // read through once: cached
  const fs::path out = output_dir(shm) / "convert_bf16.safetensors";
  std::int64_t written = 0;
  for (auto _ : state) {
    // As `tessel convert IN OUT --dtype bf16` does: map, cast, write.
    const SafetensorsFile file = load_safetensors(in);
    CastingSource source(file.tensors, all(DType::BF16));
    save_safetensors(out, source, file.metadata);
    state.PauseTiming();
    written = static_cast<std::int64_t>(fs::file_size(out));
    fs::remove(out);  // each run writes a new file
    state.ResumeTiming();
  }
  report(state, kStreamInputBytes, written);
  state.SetLabel(fs_label(output_dir(shm)));
}
BENCHMARK_CAPTURE(BM_ConvertF32ToBF16, tmpdir, false)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_ConvertF32ToBF16, shm, true)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_FileCopy(benchmark::State& state, bool shm) {
  const fs::path in = stream_input();
  cached_input();
  const fs::path dir = output_dir(shm);
  const fs::path out = dir / "copy.safetensors";
  const fs::path temp = dir / ".copy.safetensors.tmp";
  std::int64_t n = 0;
  for (auto _ : state) {
    const Storage map = Storage::map_file(in);
    n = map.nbytes();
    const auto* p = static_cast<const std::uint8_t*>(map.data());
    const int fd = create(temp);
    for (std::int64_t offset = 0; offset < n; offset += kChunkBytes) {
      write_all(fd, p + offset,
                static_cast<std::size_t>(std::min(kChunkBytes, n - offset)));
    }
    if (::fsync(fd) != 0) fail("fsync");
    ::close(fd);
    if (std::rename(temp.c_str(), out.c_str()) != 0) fail("rename");
    state.PauseTiming();
    fs::remove(out);
    state.ResumeTiming();
  }
  report(state, n, n);
  state.SetLabel(fs_label(dir));
}
BENCHMARK_CAPTURE(BM_FileCopy, tmpdir, false)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_FileCopy, shm, true)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
