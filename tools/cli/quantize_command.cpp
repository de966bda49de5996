// `tessel quantize IN.gguf OUT.gguf --type Q4_K_M`: a GGUF model quantised
// to one of llama.cpp's named mixes, writing the file llama.cpp's
// llama_model_quantize writes for the same input (no importance matrix):
// the same metadata, tensor order, types, offsets and bytes. IN may be an
// HF checkpoint directory: it is read as the GGUF file `tessel convert`
// (and llama.cpp's convert_hf_to_gguf.py) would write from it, without
// that file being written.
//
// The planner (src/quant/quant_mix.hpp) picks every tensor's dtype up
// front; the output header is laid out from that alone, and each tensor is
// then converted when the writer asks for it, a 16 MiB window of output at
// a time: f16/bf16 -> f32 -> blocks in small pieces per thread, so memory
// holds a window of the model, never a whole tensor as f32. The input is
// mapped and what has been consumed leaves the resident set. The output is
// atomic.
//
// Like llama.cpp (its loader runs with check_tensors on), every input
// tensor is checked for NaN/Inf (block scales for block-quantised ones)
// and every converted tensor's output too (ggml_validate_row_data): a
// value no f16 scale can hold is an error naming the tensor, not a file
// of Inf scales.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/commands.hpp"
#include "cli/convert_model.hpp"
#include "cli/progress.hpp"
#include "quant/block_codecs.hpp"
#include "quant/quant_mix.hpp"
#include "quant/scalars.hpp"
#include "tessel/tessel.hpp"

namespace tessel::cli {

namespace {

namespace q = tessel::quant;

constexpr std::int64_t kNone = std::numeric_limits<std::int64_t>::max();

struct QuantizeOptions {
  std::string input;
  std::string output;
  std::string type;
  std::string tokenizer_pre;  // a checkpoint's, as tessel convert takes it
  bool json = false;
};

// ---- metadata ----

// An integer value (the first element of a per-layer array); nullopt when
// absent or not an integer.
std::optional<std::int64_t> integer_value(const GgufValue* v) {
  if (v == nullptr) return std::nullopt;
  if (const auto* u = std::get_if<std::uint64_t>(&v->value))
    return static_cast<std::int64_t>(*u);
  if (const auto* i = std::get_if<std::int64_t>(&v->value)) return *i;
  if (const auto* items = std::get_if<std::vector<GgufValue>>(&v->value)) {
    if (!items->empty()) return integer_value(&items->front());
  }
  return std::nullopt;
}

GgufValue u32_value(std::uint32_t x) {
  return GgufValue{GgufValue::Type::U32, GgufValue::Type::U8, std::uint64_t{x}};
}

q::ModelFacts model_facts(const GgufFile& in, const std::string& path) {
  const GgufValue* arch = in.find("general.architecture");
  const auto* name =
      arch != nullptr ? std::get_if<std::string>(&arch->value) : nullptr;
  if (name == nullptr) {
    throw_error(ErrorCode::BadConfig,
                fmt::format("[quantize] '{}' has no general.architecture "
                            "string; the mixes' rules depend on it",
                            path));
  }
  const auto hp = [&](const std::string& key) {
    return integer_value(in.find(*name + "." + key));
  };
  q::ModelFacts m;
  m.arch = *name;
  m.n_layer = static_cast<int>(hp("block_count").value_or(0));
  m.n_head = static_cast<int>(hp("attention.head_count").value_or(0));
  m.n_head_kv = static_cast<int>(hp("attention.head_count_kv").value_or(-1));
  m.n_expert = static_cast<int>(hp("expert_count").value_or(0));
  return m;
}

// llama.cpp's writer: every input pair in order, then
// general.quantization_version and general.file_type (each set by removing
// the key and appending it), without the split keys.
std::vector<std::pair<std::string, GgufValue>> output_metadata(
    const GgufFile& in, const q::QuantMixInfo& mix) {
  std::vector<std::pair<std::string, GgufValue>> kv;
  for (const auto& [key, value] : in.metadata) {
    if (key == "general.quantization_version" || key == "general.file_type" ||
        key == "split.no" || key == "split.count" ||
        key == "split.tensors.count") {
      continue;
    }
    kv.emplace_back(key, value);
  }
  kv.emplace_back("general.quantization_version",
                  u32_value(q::kQuantizationVersion));
  kv.emplace_back("general.file_type",
                  u32_value(static_cast<std::uint32_t>(mix.file_type)));
  return kv;
}

// GGUF writers record ggml_n_dims dimensions: trailing ggml extents of 1
// (leading ones of tessel's row-major shape) are dropped, one kept.
Shape written_shape(const Shape& shape) {
  std::size_t first = 0;
  while (first + 1 < shape.size() && shape[first] == 1) ++first;
  Shape out;
  for (std::size_t d = first; d < shape.size(); ++d) out.push_back(shape[d]);
  return out;
}

// ---- ggml_validate_row_data ----

bool bad_f16(std::uint16_t h) { return (h & 0x7C00u) == 0x7C00u; }
bool bad_f32(std::uint32_t w) { return (w & 0x7F800000u) == 0x7F800000u; }

using q::load_u16;
using q::load_u32;

// Whether block `b` (its bytes) fails ggml's check of its scales: the f16
// scale fields must be finite (the K-quants' and legacy types' d and
// m/dmin, the ternary types' trailing d), Q8_K's f32 d too, IQ1_M's scale
// spread over its scales[] words, MXFP4's exponent must not be 0xFF.
bool bad_block(DType t, const std::uint8_t* b) {
  switch (t) {
    case DType::Q4_0:
    case DType::Q5_0:
    case DType::Q8_0:
    case DType::IQ4_NL:
    case DType::IQ4_XS:
    case DType::IQ2_XXS:
    case DType::IQ2_XS:
    case DType::IQ2_S:
    case DType::IQ3_XXS:
    case DType::IQ3_S:
    case DType::IQ1_S: return bad_f16(load_u16(b));
    case DType::Q4_1:
    case DType::Q5_1:
    case DType::Q4_K:
    case DType::Q5_K: return bad_f16(load_u16(b)) || bad_f16(load_u16(b + 2));
    case DType::Q2_K:
      return bad_f16(load_u16(b + 80)) || bad_f16(load_u16(b + 82));
    case DType::Q3_K: return bad_f16(load_u16(b + 108));
    case DType::Q6_K: return bad_f16(load_u16(b + 208));
    case DType::Q8_K: return bad_f32(load_u32(b));
    case DType::TQ1_0: return bad_f16(load_u16(b + 52));
    case DType::TQ2_0: return bad_f16(load_u16(b + 64));
    case DType::MXFP4: return b[0] == 0xFF;
    case DType::IQ1_M: {
      const std::uint8_t* sc = b + 48;
      const auto w = [&](int i) { return load_u16(sc + 2 * i); };
      const auto scale =
          static_cast<std::uint16_t>((w(0) >> 12) | ((w(1) >> 8) & 0x00F0) |
                                     ((w(2) >> 4) & 0x0F00) | (w(3) & 0xF000));
      return bad_f16(scale);
    }
    default: return true;  // Q8_1: ggml validates no such row data
  }
}

// The first of n elements whose exponent bits (`mask`) are all ones (an
// Inf or NaN), or kNone: a branch-free (vectorised) test per piece, a scan
// only in a piece that has one.
template <class Bits, Bits mask>
std::int64_t first_non_finite(const std::uint8_t* data, std::int64_t n) {
  constexpr std::int64_t kPiece = 4096;
  const auto bad = [&](std::int64_t i) {
    Bits bits;
    std::memcpy(&bits, data + sizeof(Bits) * i, sizeof(Bits));
    return (bits & mask) == mask;
  };
  for (std::int64_t start = 0; start < n; start += kPiece) {
    const std::int64_t end = std::min(n, start + kPiece);
    Bits any = 0;
    for (std::int64_t i = start; i < end; ++i) any |= static_cast<Bits>(bad(i));
    if (any == 0) continue;
    for (std::int64_t i = start; i < end; ++i)
      if (bad(i)) return i;
  }
  return kNone;
}

// Index of the first invalid unit (element, or block of a block type) of
// `units` units at `data`, or kNone.
std::int64_t first_invalid(DType t, const std::uint8_t* data,
                           std::int64_t units) {
  switch (t) {
    case DType::F32:
      return first_non_finite<std::uint32_t, 0x7F800000u>(data, units);
    case DType::F16:
      return first_non_finite<std::uint16_t, 0x7C00u>(data, units);
    case DType::BF16:
      return first_non_finite<std::uint16_t, 0x7F80u>(data, units);
    case DType::F64:
      return first_non_finite<std::uint64_t, 0x7FF0000000000000u>(data, units);
    case DType::I8:
    case DType::I16:
    case DType::I32:
    case DType::I64: return kNone;
    default: break;
  }
  if (!is_block_quantized(t)) return 0;  // not a GGUF tensor type
  const int bytes = dtype_traits(t).block_bytes;
  for (std::int64_t i = 0; i < units; ++i)
    if (bad_block(t, data + i * bytes)) return i;
  return kNone;
}

void atomic_min(std::atomic<std::int64_t>& a, std::int64_t v) {
  std::int64_t cur = a.load();
  while (v < cur && !a.compare_exchange_weak(cur, v)) {
  }
}

// ---- conversion ----

// Elements converted per step inside a thread: 128 KiB of f32, which
// stays in L2 between the widening and the quantiser.
constexpr std::int64_t kPieceElements = 32768;
// Output bytes converted per call to the pool (see QuantizingSource::read).
constexpr std::int64_t kWindowBytes = std::int64_t{16} << 20;

// in[0, n) as f32 into out (f16 and bf16 widen exactly, through tessel's
// SIMD casts; f32 input is used in place, `out` untouched), and whether
// every value is finite (ggml's check of the input).
const float* widen(DType from, const std::uint8_t* in, float* out,
                   std::int64_t n, bool& finite) {
  finite = first_invalid(from, in, n) == kNone;
  if (from == DType::F32) return reinterpret_cast<const float*>(in);
  from_blob(out, {n}, DType::F32)
      .copy_(from_blob(const_cast<std::uint8_t*>(in), {n}, from));
  return out;
}

// What ggml_quantize_chunk does for float targets: round to nearest even
// (the input is finite, checked before), through tessel's SIMD casts.
void narrow(DType to, const float* in, std::uint8_t* out, std::int64_t n) {
  if (to == DType::F32) {
    std::memcpy(out, in, static_cast<std::size_t>(n) * 4);
    return;
  }
  from_blob(out, {n}, to)
      .copy_(from_blob(const_cast<float*>(in), {n}, DType::F32));
}

struct Entry {
  // A view of the mapped file; for a tensor `make` makes, a meta tensor
  // of its dtype and shape until the writer reaches it.
  Tensor input;
  std::function<Tensor()> make;
  TensorSpec spec;  // as written
  bool convert = false;
  std::string fallback;
};

// The output tensors in llama.cpp's order, each produced from its input
// when the writer asks for it.
class QuantizingSource final : public TensorSource {
 public:
  // `offsets_in_file`: the inputs are views of one GGUF file, and an
  // error names the byte of the file (not so for an HF checkpoint's).
  QuantizingSource(std::vector<Entry> entries, bool offsets_in_file,
                   Progress* progress)
      : entries_(std::move(entries)),
        offsets_in_file_(offsets_in_file),
        progress_(progress) {}

  std::size_t size() const override { return entries_.size(); }
  const TensorSpec& spec(std::size_t i) const override {
    return entries_[i].spec;
  }

  // Copied tensors go out straight from the mapping, once checked.
  const std::uint8_t* bytes(std::size_t i) override {
    const Entry& e = ready(i);
    if (e.convert) return nullptr;
    const auto* data = static_cast<const std::uint8_t*>(e.input.raw_data());
    check_input(e, data,
                e.input.nbytes() / storage_unit_bytes(e.input.dtype()));
    return data;
  }

  // The writer asks for 2 MiB at a time; converting a window of
  // kWindowBytes per call to the pool keeps the threads' fork/join (and
  // their wait for one that another process keeps off its core) rare.
  void read(std::size_t i, std::int64_t offset,
            std::span<std::uint8_t> out) override {
    const Entry& e = ready(i);
    const auto n = static_cast<std::int64_t>(out.size());
    if (!e.convert) {
      const auto* data = static_cast<const std::uint8_t*>(e.input.raw_data());
      std::memcpy(out.data(), data + offset, out.size());
      return;
    }
    if (window_index_ != i || offset < window_begin_ ||
        offset + n > window_begin_ + window_size_) {
      const std::int64_t ub = storage_unit_bytes(e.spec.dtype);
      const std::int64_t size = std::min(
          e.spec.nbytes() - offset,
          std::max(n, std::max<std::int64_t>(kWindowBytes / ub, 1) * ub));
      if (size > window_capacity_) {
        window_.reset();  // free the old one first
        window_.reset(new std::uint8_t[static_cast<std::size_t>(size)]);
        window_capacity_ = size;
      }
      window_index_ = static_cast<std::size_t>(-1);
      convert(e, offset, {window_.get(), static_cast<std::size_t>(size)});
      window_index_ = i;
      window_begin_ = offset;
      window_size_ = size;
    }
    std::memcpy(out.data(), window_.get() + (offset - window_begin_),
                out.size());
  }

  void written(std::size_t i, std::int64_t end) override {
    release(i, end);
    if (progress_ == nullptr) return;
    if (i != current_) {
      finished_ += current_bytes_;
      current_ = i;
    }
    current_bytes_ = end;
    const std::int64_t done = finished_ + end;
    progress_->update(done, static_cast<double>(done), spec(i).name);
  }

 private:
  // Entry i with its input in memory. A made input is made when the
  // writer reaches it and the one made before is dropped: memory holds
  // one such tensor at a time.
  const Entry& ready(std::size_t i) {
    Entry& e = entries_[i];
    if (e.make && e.input.device().is_meta()) {
      if (made_ < entries_.size()) {
        Entry& old = entries_[made_];
        old.input = empty(old.input.shape(), old.input.dtype(), Device::meta());
      }
      e.input = e.make();
      made_ = i;
    }
    return e;
  }

  // E3001 at the first NaN/Inf (or bad block scale) among the `units`
  // units of e's input at `data`, as llama.cpp's loader refuses the file
  // ("tensor '...' has invalid data").
  void check_input(const Entry& e, const std::uint8_t* data,
                   std::int64_t units) const {
    const DType t = e.input.dtype();
    const std::int64_t ub = storage_unit_bytes(t);
    std::atomic<std::int64_t> bad{kNone};
    parallel_for(0, units, 1 << 16, [&](std::int64_t lo, std::int64_t hi) {
      const std::int64_t at = first_invalid(t, data + lo * ub, hi - lo);
      if (at != kNone) atomic_min(bad, lo + at);
    });
    if (bad.load() != kNone) fail_input(e, bad.load());
  }

  [[noreturn]] void fail_input(const Entry& e, std::int64_t unit) const {
    const DType t = e.input.dtype();
    const std::int64_t ub = storage_unit_bytes(t);
    const auto* data = static_cast<const std::uint8_t*>(e.input.raw_data());
    const auto* base =
        static_cast<const std::uint8_t*>(e.input.storage().data());
    const std::int64_t offset =
        base == nullptr ? -1 : (data - base) + unit * ub;
    std::string what;
    if (is_block_quantized(t)) {
      what = t == DType::Q8_1
                 ? fmt::format(
                       "is {}, which llama.cpp does not accept in a "
                       "model file",
                       dtype_name(t))
                 : fmt::format("has a NaN/Inf scale in block {}", unit);
    } else {
      what = fmt::format("holds NaN or Inf at element {}", unit);
    }
    // A checkpoint's tensors are not where the GGUF file would hold them
    // (several files, rows reordered, 1-D ones widened).
    const std::string where =
        offsets_in_file_ ? fmt::format(" (byte {} of the file)", offset) : "";
    throw FormatError(
        ErrorCode::MalformedFile,
        fmt::format("[quantize] tensor '{}' ({}, shape {}) {}{}; llama.cpp "
                    "refuses it too (\"has invalid data\")",
                    e.spec.name, dtype_name(t), shape_text(e.input.shape()),
                    what, where),
        offsets_in_file_ ? offset : -1);
  }

  static std::string shape_text(const Shape& s) {
    std::string out = "(";
    for (std::size_t d = 0; d < s.size(); ++d)
      out += fmt::format("{}{}", d ? ", " : "", s[d]);
    return out + (s.size() == 1 ? ",)" : ")");
  }

  // Output bytes [offset, offset + out.size()) of entry e: whole units of
  // the output dtype, converted from the matching input elements.
  void convert(const Entry& e, std::int64_t offset,
               std::span<std::uint8_t> out) const {
    const DType from = e.input.dtype();
    const DType to = e.spec.dtype;
    const auto& tr = dtype_traits(to);
    const std::int64_t ub = storage_unit_bytes(to);
    const std::int64_t per_unit = tr.block_size;  // elements per output unit
    const std::int64_t first_unit = offset / ub;
    const auto units = static_cast<std::int64_t>(out.size()) / ub;
    const q::BlockCodec* codec =
        is_block_quantized(to) ? q::block_codec(to) : nullptr;
    if (codec != nullptr && codec->quantize == nullptr) {
      throw_error(ErrorCode::BadDType,
                  fmt::format("[quantize] tensor '{}': tessel cannot encode {} "
                              "(it needs an importance matrix)",
                              e.spec.name, dtype_name(to)));
    }
    const auto* in = static_cast<const std::uint8_t*>(e.input.raw_data());
    const int in_size = element_size(from);
    std::atomic<std::int64_t> bad_in{kNone};
    std::atomic<std::int64_t> bad_out{kNone};
    const std::int64_t units_per_piece =
        std::max<std::int64_t>(1, kPieceElements / per_unit);
    const std::int64_t pieces = (units + units_per_piece - 1) / units_per_piece;
    // Pieces are handed out one at a time, lowest first, so a thread that
    // gets less CPU (another process on its core) takes fewer of them, and
    // every piece before a failing one is done: the minimum is the first.
    std::atomic<std::int64_t> next{0};
    std::atomic<bool> stop{false};
    const std::int64_t threads =
        std::min<std::int64_t>(get_num_threads(), pieces);
    parallel_for(0, threads, 1, [&](std::int64_t, std::int64_t) {
      std::vector<float> buffer(
          static_cast<std::size_t>(units_per_piece * per_unit));
      for (std::int64_t p = next++; p < pieces && !stop; p = next++) {
        const std::int64_t u = p * units_per_piece;
        const std::int64_t n_units = std::min(units_per_piece, units - u);
        const std::int64_t n = n_units * per_unit;
        const std::int64_t element = (first_unit + u) * per_unit;
        const std::uint8_t* src = in + element * in_size;
        bool finite = false;
        const float* f32 = widen(from, src, buffer.data(), n, finite);
        if (!finite) {
          atomic_min(bad_in, element + first_invalid(from, src, n));
          stop = true;
          return;
        }
        std::uint8_t* dst = out.data() + u * ub;
        if (codec != nullptr) {
          codec->quantize(f32, dst, n_units);
        } else {
          narrow(to, f32, dst, n);
        }
        if (const std::int64_t at = first_invalid(to, dst, n_units);
            at != kNone) {
          atomic_min(bad_out, first_unit + u + at);
          stop = true;
          return;
        }
      }
    });
    if (bad_in.load() != kNone) fail_input(e, bad_in.load());
    if (bad_out.load() != kNone) {
      throw_error(
          ErrorCode::NonFinite,
          fmt::format("[quantize] tensor '{}' ({} -> {}): {} {} comes out "
                      "{} (a value beyond what the format's f16 holds); "
                      "llama.cpp refuses it too (\"quantized data validation "
                      "failed\")",
                      e.spec.name, dtype_name(from), dtype_name(to),
                      codec != nullptr ? "block" : "element", bad_out.load(),
                      codec != nullptr ? "with a NaN/Inf scale" : "NaN/Inf"));
    }
  }

  // Input the writer is done with leaves the resident set (a mapping).
  void release(std::size_t i, std::int64_t end) {
    const Entry& e = entries_[i];
    if (released_index_ != i) {
      released_index_ = i;
      released_bytes_ = 0;
    }
    const std::int64_t consumed =
        e.convert ? end / storage_unit_bytes(e.spec.dtype) *
                        dtype_traits(e.spec.dtype).block_size *
                        element_size(e.input.dtype())
                  : end;
    if (consumed <= released_bytes_) return;
    e.input.release_pages(released_bytes_, consumed - released_bytes_);
    released_bytes_ = consumed;
  }

  std::vector<Entry> entries_;
  std::size_t made_ = static_cast<std::size_t>(-1);  // the input made last
  bool offsets_in_file_;
  Progress* progress_;
  // Converted output bytes [window_begin_, + window_size_) of tensor
  // window_index_.
  std::unique_ptr<std::uint8_t[]> window_;
  std::int64_t window_capacity_ = 0;
  std::size_t window_index_ = static_cast<std::size_t>(-1);
  std::int64_t window_begin_ = 0;
  std::int64_t window_size_ = 0;
  std::size_t current_ = 0;
  std::int64_t finished_ = 0;
  std::int64_t current_bytes_ = 0;
  std::size_t released_index_ = static_cast<std::size_t>(-1);
  std::int64_t released_bytes_ = 0;
};

// This process's peak resident set (VmHWM), or -1 where /proc lacks it.
std::int64_t peak_resident_bytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoll(line.substr(6)) * 1024;
  }
  return -1;
}

// The model to quantise as its GGUF file holds it.
struct InputModel {
  bool is_gguf = true;
  // Its metadata, and its tensors: views of the mapped input, or meta
  // tensors of their dtype and shape for those `make` makes.
  GgufFile file;
  std::vector<std::string> names;
  std::vector<std::function<Tensor()>> make;  // empty for a view
};

InputModel gguf_input(const std::string& path) {
  InputModel in;
  in.file = load_gguf(path);
  if (const auto n = integer_value(in.file.find("split.count")); n && *n > 1) {
    throw_error(ErrorCode::BadConfig,
                fmt::format("[quantize] '{}' is part of a {}-file split "
                            "model; merge it first (llama-gguf-split "
                            "--merge)",
                            path, *n));
  }
  for (const Tensor& t : in.file.tensors) in.names.push_back(t.name());
  in.make.resize(in.names.size());
  return in;
}

// An HF checkpoint directory as the GGUF file `tessel convert` writes
// from it (hf_as_gguf: llama.cpp's converter with f32 matrices kept f32).
// Tensors the file holds as they are stay views of the checkpoint. The
// others are made whole in memory, one at a time, as the writer reaches
// them: llama's q/k rows interleaved, and tensors of another dtype than
// the file's (1-D ones narrower than f32; any in a checkpoint of mixed
// dtypes), each mapped input's pages released once copied.
InputModel checkpoint_input(const std::string& path,
                            const std::string& tokenizer_pre) {
  HfAsGguf model =
      hf_as_gguf(path, std::nullopt, tokenizer_pre, {"quantize", ""});
  for (const std::string& note : model.notes) {
    fmt::print(stderr, "tessel: note: {}\n", note);
  }
  InputModel in;
  in.is_gguf = false;
  in.file.metadata = std::move(model.metadata);
  for (ModelTensor& m : model.tensors) {
    in.names.push_back(m.name);
    if (written_as_stored(m) && m.input.is_contiguous()) {
      in.file.tensors.push_back(m.input);
      in.make.emplace_back();
      continue;
    }
    in.file.tensors.push_back(empty(m.input.shape(), m.dtype, Device::meta()));
    in.make.emplace_back([m = std::move(m)] {
      const Tensor rows = m.order == RowOrder::Interleave
                              ? interleave_rope_rows(m.input, m.heads)
                              : m.input;
      Tensor made = rows.to(m.dtype).contiguous();
      m.input.release_pages(0, m.input.nbytes());
      return made;
    });
  }
  return in;
}

int run_quantize(const QuantizeOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  const q::QuantMix mix = q::parse_quant_mix(o.type);
  const q::QuantMixInfo& info = q::quant_mix_info(mix);
  const InputModel model = is_hf_model_directory(o.input)
                               ? checkpoint_input(o.input, o.tokenizer_pre)
                               : gguf_input(o.input);
  const GgufFile& in = model.file;
  std::vector<q::TensorInfo> infos;
  infos.reserve(in.tensors.size());
  for (std::size_t i = 0; i < in.tensors.size(); ++i) {
    const Tensor& t = in.tensors[i];
    const Shape& s = t.shape();
    infos.push_back({model.names[i],
                     std::vector<std::int64_t>(s.begin(), s.end()), t.dtype()});
  }
  const std::vector<q::TensorPlan> plans =
      q::plan_quantization(model_facts(in, o.input), infos, mix);

  std::vector<Entry> entries;
  std::int64_t input_bytes = 0;
  std::int64_t output_bytes = 0;
  for (std::size_t i : q::llama_tensor_order(infos)) {
    const Tensor& t = in.tensors[i];
    Entry e;
    e.input = t.is_contiguous() ? t : t.contiguous();
    e.make = model.make[i];
    e.spec = {model.names[i], plans[i].dtype, written_shape(t.shape())};
    e.convert = plans[i].dtype != t.dtype();
    e.fallback = plans[i].fallback;
    input_bytes += t.nbytes();
    output_bytes += e.spec.nbytes();
    entries.push_back(std::move(e));
  }
  // llama.cpp prints these while it plans, before any data is written.
  for (const Entry& e : entries)
    if (!e.fallback.empty()) fmt::print(stderr, "{}\n", e.fallback);
  std::string summary = q::fallback_summary(plans);
  if (const auto colon = summary.find(": "); colon != std::string::npos)
    summary = "quantize" + summary.substr(colon);
  if (!summary.empty()) fmt::print(stderr, "{}\n", summary);

  nlohmann::json tensors = nlohmann::json::array();
  nlohmann::json fallbacks = nlohmann::json::array();
  for (const Entry& e : entries) {
    tensors.push_back({{"name", e.spec.name},
                       {"shape", std::vector<std::int64_t>(e.spec.shape.begin(),
                                                           e.spec.shape.end())},
                       {"from", dtype_name(e.input.dtype())},
                       {"to", dtype_name(e.spec.dtype)},
                       {"input_bytes", e.input.nbytes()},
                       {"bytes", e.spec.nbytes()}});
    if (!e.fallback.empty()) {
      fallbacks.push_back({{"name", e.spec.name},
                           {"to", dtype_name(e.spec.dtype)},
                           {"warning", e.fallback}});
    }
  }

  const auto metadata = output_metadata(in, info);
  const std::size_t count = entries.size();
  if (Progress::stderr_is_terminal()) {
    Progress progress(output_bytes, "B", std::int64_t{1} << 30);
    QuantizingSource source(std::move(entries), model.is_gguf, &progress);
    save_gguf(o.output, metadata, source, in.alignment);
    progress.finish();
  } else {
    QuantizingSource source(std::move(entries), model.is_gguf, nullptr);
    save_gguf(o.output, metadata, source, in.alignment);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  std::error_code ec;
  const auto file_bytes = std::filesystem::file_size(o.output, ec);
  if (o.json) {
    nlohmann::json out = {
        {"input", o.input},
        {"output", o.output},
        {"type", info.name},
        {"file_type", info.file_type},
        {"tensors", tensors},
        {"tensor_count", count},
        {"input_bytes", input_bytes},
        {"output_bytes", output_bytes},
        {"file_bytes", ec ? -1 : static_cast<std::int64_t>(file_bytes)},
        {"fallbacks", fallbacks},
        {"threads", get_num_threads()},
        {"seconds", seconds},
        {"peak_resident_bytes", peak_resident_bytes()}};
    fmt::print("{}\n", out.dump(2));
  } else {
    fmt::print("{} -> {} ({}): {} tensors, {} -> {} bytes in {:.2f} s\n",
               o.input, o.output, info.name, count, input_bytes, output_bytes,
               seconds);
  }
  return 0;
}

}  // namespace

Runner add_quantize_command(CLI::App& app) {
  auto o = std::make_shared<QuantizeOptions>();
  CLI::App* cmd = app.add_subcommand(
      "quantize",
      "Quantise a GGUF model or HF checkpoint to one of llama.cpp's mixes "
      "(Q4_K_M, Q8_0, ...), "
      "byte for byte as llama.cpp's llama-quantize writes it");
  cmd->add_option("input", o->input,
                  "GGUF file (f32/f16/bf16) or HF checkpoint directory to read")
      ->required();
  cmd->add_option("output", o->output, "GGUF file to write")->required();
  std::string names;
  for (const q::QuantMixInfo& m : q::quant_mixes())
    names += fmt::format("{}{}", names.empty() ? "" : ", ", m.name);
  cmd->add_option("--type", o->type, "The mix: " + names + " (any case)")
      ->required();
  cmd->add_option("--tokenizer-pre", o->tokenizer_pre,
                  "For a checkpoint directory: tokenizer.ggml.pre when tessel "
                  "does not name its pre-tokenizer itself (as tessel convert)");
  cmd->add_flag("--json", o->json, "Print a JSON summary");
  return [o] { return run_quantize(*o); };
}

}  // namespace tessel::cli
