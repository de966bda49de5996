#include "backends/cpu/onednn.hpp"

#include <fmt/format.h>
#include <omp.h>

#include <list>
#include <mutex>
#include <oneapi/dnnl/dnnl.hpp>
#include <stdexcept>
#include <unordered_map>

#include "tessel/core/parallel.hpp"

namespace tessel::cpu::onednn {

namespace {

// oneDNN wraps every buffer in a memory object whose handle is a void*,
// sources included; it only reads through a source's handle.
void* handle(const KernelInput& t) { return const_cast<char*>(t.raw_data()); }

bool is_reference(const char* impl) {
  return std::string(impl).rfind("ref", 0) == 0;
}

using dt = dnnl::memory::data_type;

dnnl::engine& engine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

dnnl::stream& stream() {
  thread_local dnnl::stream s(engine());
  return s;
}

// What the CPU oneDNN runs on offers, asked once.
struct IsaFeatures {
  bool avx512 = false;
  // Without VNNI, oneDNN's int8 kernels add pairs of u8 x s8 products with
  // vpmaddubsw, which saturates at int16 (s8 operands are shifted to u8
  // first): on an AVX2-only CPU, 255*127 + 255*127 came back as 32767 and
  // 4 x 127*-128 as 0. So 8-bit operands go to oneDNN only where VNNI adds
  // the products in 32 bits; elsewhere the exact integer path runs.
  bool int8_exact = false;
  // bf16 products by vdpbf16ps or AMX; below that oneDNN emulates them.
  bool bf16_native = false;
};

const IsaFeatures& isa_features() {
  static const IsaFeatures features = [] {
    IsaFeatures f;
    switch (dnnl::get_effective_cpu_isa()) {
      case dnnl::cpu_isa::avx512_core_amx:
      case dnnl::cpu_isa::avx512_core_bf16:
        f.bf16_native = true;
        [[fallthrough]];
      case dnnl::cpu_isa::avx512_core_vnni:
        f.int8_exact = true;
        [[fallthrough]];
      case dnnl::cpu_isa::avx512_core: f.avx512 = true; break;
      case dnnl::cpu_isa::avx2_vnni: f.int8_exact = true; break;
      default: break;
    }
    return f;
  }();
  return features;
}

bool to_dnnl(DType t, dt* out) {
  switch (t) {
    case DType::F32: *out = dt::f32; return true;
    case DType::BF16: *out = dt::bf16; return true;
    case DType::F16: *out = dt::f16; return true;
    case DType::I8: *out = dt::s8; return isa_features().int8_exact;
    case DType::U8: *out = dt::u8; return isa_features().int8_exact;
    case DType::I32: *out = dt::s32; return true;
    default: return false;
  }
}

dnnl::memory::desc describe_tensor(const KernelInput& t, dt type) {
  dnnl::memory::dims dims(t.shape().begin(), t.shape().end());
  dnnl::memory::dims strides(t.strides().begin(), t.strides().end());
  return dnnl::memory::desc(dims, type, strides);
}

std::string key_of(const dnnl::memory::desc& d) {
  std::string k = fmt::format("{}:", static_cast<int>(d.data_type()));
  for (int i = 0; i < d.data.ndims; ++i) {
    k += fmt::format("{}/{},", d.data.dims[i],
                     d.data.format_desc.blocking.strides[i]);
  }
  return k;
}

// A small LRU cache: creating a primitive costs far more than running a
// small one.
class MatmulCache {
 public:
  std::shared_ptr<dnnl::matmul> get(const std::string& key,
                                    const dnnl::memory::desc& a,
                                    const dnnl::memory::desc& b,
                                    const dnnl::memory::desc* bias,
                                    const dnnl::memory::desc& c) {
    std::lock_guard lock(mutex_);
    if (auto it = index_.find(key); it != index_.end()) {
      order_.splice(order_.begin(), order_, it->second);
      return it->second->second;
    }
    std::shared_ptr<dnnl::matmul> prim;
    try {
      const auto desc = bias ? dnnl::matmul::desc(a, b, *bias, c)
                             : dnnl::matmul::desc(a, b, c);
      dnnl::matmul::primitive_desc pd(desc, engine());
      // A reference implementation means these strides or dtypes have no
      // optimised kernel: let the caller lay the data out densely instead.
      if (!is_reference(pd.impl_info_str())) {
        prim = std::make_shared<dnnl::matmul>(pd);
      }
    } catch (const dnnl::error&) {
    }
    order_.emplace_front(key, prim);
    index_[key] = order_.begin();
    if (order_.size() > kCapacity) {
      index_.erase(order_.back().first);
      order_.pop_back();
    }
    return prim;
  }

 private:
  static constexpr std::size_t kCapacity = 512;
  using Entry = std::pair<std::string, std::shared_ptr<dnnl::matmul>>;
  std::mutex mutex_;
  std::list<Entry> order_;
  std::unordered_map<std::string, std::list<Entry>::iterator> index_;
};

MatmulCache& cache() {
  static MatmulCache c;
  return c;
}

const char* isa_name() {
  switch (dnnl::get_effective_cpu_isa()) {
    case dnnl::cpu_isa::avx512_core_amx: return "avx512_core_amx";
    case dnnl::cpu_isa::avx512_core_bf16: return "avx512_core_bf16";
    case dnnl::cpu_isa::avx512_core_vnni: return "avx512_core_vnni";
    case dnnl::cpu_isa::avx512_core: return "avx512_core";
    case dnnl::cpu_isa::avx2_vnni: return "avx2_vnni";
    case dnnl::cpu_isa::avx2: return "avx2";
    case dnnl::cpu_isa::avx: return "avx";
    case dnnl::cpu_isa::sse41: return "sse41";
    default: return "other";
  }
}

}  // namespace

bool has_native_bf16() { return isa_features().bf16_native; }

std::string describe() {
  const auto* v = dnnl_version();
  const char* runtime = v->cpu_runtime == DNNL_RUNTIME_OMP   ? "OpenMP"
                        : v->cpu_runtime == DNNL_RUNTIME_TBB ? "TBB"
                                                             : "sequential";
  return fmt::format("oneDNN {}.{}.{} ({}, {})", v->major, v->minor, v->patch,
                     isa_name(), runtime);
}

void set_threads_for_this_call() {
  // Inside a chunk, or on a thread holding the team (its region would nest
  // in the held one), oneDNN gets one thread either way.
  const int wanted =
      in_parallel_region() || holding_team() ? 1 : get_num_threads();
  // The runtime's own setting, not a cached copy: a region's setting ends
  // with the region.
  if (omp_get_max_threads() != wanted) omp_set_num_threads(wanted);
}

void sgemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n,
           std::int64_t k, float alpha, const float* a, std::int64_t lda,
           const float* b, std::int64_t ldb, float beta, float* c,
           std::int64_t ldc) {
  set_threads_for_this_call();
  const dnnl::status st =
      dnnl::sgemm(trans_a ? 'T' : 'N', trans_b ? 'T' : 'N', m, n, k, alpha, a,
                  lda, b, ldb, beta, c, ldc);
  // Only invalid arguments fail, and callers pass valid ones.
  if (st != dnnl::status::success)
    throw std::logic_error("dnnl::sgemm rejected its arguments");
}

bool matmul(const KernelInput& a, const KernelInput& b, const KernelInput* bias,
            const KernelOutput& out) {
  dt ta, tb, tc, tbias = dt::f32;
  if (!to_dnnl(a.dtype(), &ta) || !to_dnnl(b.dtype(), &tb) ||
      !to_dnnl(out.dtype(), &tc) || (bias && !to_dnnl(bias->dtype(), &tbias))) {
    return false;
  }
  const auto da = describe_tensor(a, ta);
  const auto db = describe_tensor(b, tb);
  const auto dc = describe_tensor(out, tc);
  dnnl::memory::desc dbias;
  std::string key = key_of(da) + "|" + key_of(db) + "|" + key_of(dc);
  if (bias) {
    // Bias broadcasts over every axis but the last.
    dnnl::memory::dims dims(out.shape().size(), 1);
    dims.back() = out.shape().back();
    dnnl::memory::dims strides(out.shape().size(), 0);
    strides.back() = bias->strides().back();
    for (std::size_t i = 0; i + 1 < strides.size(); ++i)
      strides[i] = out.shape().back();
    dbias = dnnl::memory::desc(dims, tbias, strides);
    key += "|" + key_of(dbias);
  }
  const auto prim = cache().get(key, da, db, bias ? &dbias : nullptr, dc);
  if (!prim) return false;
  auto& e = engine();
  dnnl::memory ma(da, e, handle(a));
  dnnl::memory mb(db, e, handle(b));
  dnnl::memory mc(dc, e, out.raw_data());
  std::unordered_map<int, dnnl::memory> args = {
      {DNNL_ARG_SRC, ma}, {DNNL_ARG_WEIGHTS, mb}, {DNNL_ARG_DST, mc}};
  if (bias) {
    args.emplace(DNNL_ARG_BIAS, dnnl::memory(dbias, e, handle(*bias)));
  }
  set_threads_for_this_call();
  prim->execute(stream(), args);
  stream().wait();
  return true;
}

namespace {

// Caches any primitive kind behind a key, with the same LRU policy.
template <class Primitive, class Pd>
class PrimitiveCache {
 public:
  struct Entry {
    std::shared_ptr<Primitive> primitive;
    std::shared_ptr<Pd> pd;
  };
  template <class Make>
  Entry get(const std::string& key, Make make) {
    std::lock_guard lock(mutex_);
    if (auto it = index_.find(key); it != index_.end()) {
      order_.splice(order_.begin(), order_, it->second);
      return it->second->second;
    }
    Entry e;
    try {
      e = make();
    } catch (const dnnl::error&) {
      e = {};
    }
    order_.emplace_front(key, e);
    index_[key] = order_.begin();
    if (order_.size() > 256) {
      index_.erase(order_.back().first);
      order_.pop_back();
    }
    return e;
  }

 private:
  std::mutex mutex_;
  std::list<std::pair<std::string, Entry>> order_;
  std::unordered_map<
      std::string, typename std::list<std::pair<std::string, Entry>>::iterator>
      index_;
};

dnnl::memory::dims dims_of(const std::vector<std::int64_t>& v) {
  return dnnl::memory::dims(v.begin(), v.end());
}

// Weights as oneDNN wants them: grouped convolutions split O (or, for
// transposed ones, the output-channel axis 1) into (G, O/G) by a view.
dnnl::memory::desc weights_desc(const KernelInput& w, std::int64_t groups,
                                bool transpose, dt type) {
  dnnl::memory::dims dims(w.shape().begin(), w.shape().end());
  dnnl::memory::dims strides(w.strides().begin(), w.strides().end());
  if (transpose) {
    // (C, O/G, K...) -> oneDNN's (O, C, K...) per group: swap the two.
    std::swap(dims[0], dims[1]);
    std::swap(strides[0], strides[1]);
    if (groups > 1) {
      // dims now (O/G, C, K...): C splits into (G, C/G).
      const auto c = dims[1], sc = strides[1];
      dims[1] = c / groups;
      dims.insert(dims.begin(), groups);
      strides.insert(strides.begin(), sc * (c / groups));
    }
  } else if (groups > 1) {
    const auto o = dims[0], so = strides[0];
    dims[0] = o / groups;
    dims.insert(dims.begin(), groups);
    strides.insert(strides.begin(), so * (o / groups));
  }
  return dnnl::memory::desc(dims, type, strides);
}

}  // namespace

namespace {

// The (de)convolution primitive for these descriptors, from the cache.
template <class Fwd>
typename PrimitiveCache<Fwd, typename Fwd::primitive_desc>::Entry
conv_primitive(const std::string& key, dnnl::algorithm algorithm,
               const dnnl::memory::desc& src, const dnnl::memory::desc& weights,
               const dnnl::memory::desc* bias, const dnnl::memory::desc& dst,
               const ConvGeometry& g, const dnnl::memory::dims& dilation) {
  using Pd = typename Fwd::primitive_desc;
  static PrimitiveCache<Fwd, Pd> cache;
  return cache.get(key, [&] {
    const auto prop = dnnl::prop_kind::forward_inference;
    const auto desc =
        bias ? typename Fwd::desc(prop, algorithm, src, weights, *bias, dst,
                                  dims_of(g.stride), dilation,
                                  dims_of(g.pad_begin), dims_of(g.pad_end))
             : typename Fwd::desc(prop, algorithm, src, weights, dst,
                                  dims_of(g.stride), dilation,
                                  dims_of(g.pad_begin), dims_of(g.pad_end));
    auto pd = std::make_shared<Pd>(desc, engine());
    return
        typename PrimitiveCache<Fwd, Pd>::Entry{std::make_shared<Fwd>(*pd), pd};
  });
}

// Memory in oneDNN's layout `want` holding `user`'s data: the user memory
// itself when the layouts agree, else a reordered copy in `scratch`
// (tessel's allocator, whose cache makes repeated calls cheap).
dnnl::memory in_layout(dnnl::memory user, const dnnl::memory::desc& want,
                       Storage& scratch, bool copy) {
  if (user.get_desc() == want) return user;
  scratch = Storage::allocate(static_cast<std::int64_t>(want.get_size()));
  dnnl::memory m(want, engine(), scratch.data());
  if (copy) dnnl::reorder(user, m).execute(stream(), user, m);
  return m;
}

}  // namespace

bool convolution(const KernelInput& x, const KernelInput& w,
                 const KernelInput* bias, const KernelOutput& y,
                 const ConvGeometry& g, bool transpose) {
  dt tx, tw, ty, tb = dt::f32;
  if (!to_dnnl(x.dtype(), &tx) || !to_dnnl(w.dtype(), &tw) ||
      !to_dnnl(y.dtype(), &ty) || (bias && !to_dnnl(bias->dtype(), &tb)) ||
      (tx != dt::f32 && tx != dt::bf16)) {
    return false;
  }
  const auto dx = describe_tensor(x, tx);
  const auto dy = describe_tensor(y, ty);
  // oneDNN's reference kernels are slow; when strides push it there, the
  // caller retries with contiguous operands (and then takes what it gets).
  const bool dense = x.is_contiguous() && w.is_contiguous();
  // Plain channels-first data runs best in oneDNN's blocked layouts: reorder
  // in and out, as PyTorch does. Channels-last data has fast kernels of its
  // own and stays as it is.
  // Measured on [8,64,56,56] f32: nChw16c with the direct jit kernel beats
  // what `any` picks (NHWC with brgconv, whose reorders cost more). The
  // block is the vector width: 16 floats with AVX-512, 8 with AVX2, where
  // oneDNN has no jit kernel for 16-channel blocks and ran its reference
  // convolution (77 s for that shape instead of a few ms).
  const bool blocked = x.is_contiguous() && y.is_contiguous();
  using tag = dnnl::memory::format_tag;
  const std::int64_t rank = x.rank();
  const bool avx512 = isa_features().avx512;
  const std::int64_t block = avx512 ? 16 : 8;
  tag io = tag::any;
  if (tx == dt::f32 && x.shape()[1] % block == 0 && y.shape()[1] % block == 0) {
    io = avx512 ? (rank == 3   ? tag::nCw16c
                   : rank == 4 ? tag::nChw16c
                               : tag::nCdhw16c)
                : (rank == 3   ? tag::nCw8c
                   : rank == 4 ? tag::nChw8c
                               : tag::nCdhw8c);
  }
  const auto any = tag::any;
  const dnnl::memory::desc src =
      blocked ? dnnl::memory::desc(dx.dims(), tx, io) : dx;
  const dnnl::memory::desc dst =
      blocked ? dnnl::memory::desc(dy.dims(), ty, io) : dy;
  const auto dw_user = weights_desc(w, g.groups, transpose, tw);
  const dnnl::memory::desc dw_any(dw_user.dims(), tw, any);
  dnnl::memory::desc db;
  if (bias)
    db = dnnl::memory::desc({y.shape()[1]}, tb,
                            dnnl::memory::dims{bias->strides()[0]});
  dnnl::memory::dims dil;
  for (auto d : g.dilation) dil.push_back(d - 1);  // oneDNN counts the gaps
  const std::string key = fmt::format(
      "{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}", transpose, blocked, key_of(dx),
      key_of(dw_user), key_of(dy), bias ? key_of(db) : "",
      fmt::join(g.stride, ","), fmt::join(dil, ","),
      fmt::join(g.pad_begin, ","), fmt::join(g.pad_end, ","), g.groups);
  std::shared_ptr<dnnl::primitive> prim;
  dnnl::memory::desc src_chosen, dst_chosen, w_chosen;
  std::string impl;
  auto take = [&](const auto& entry) {
    if (!entry.primitive) return false;
    prim = entry.primitive;
    src_chosen = entry.pd->src_desc();
    dst_chosen = entry.pd->dst_desc();
    w_chosen = entry.pd->weights_desc();
    impl = entry.pd->impl_info_str();
    return true;
  };
  const bool made = transpose
                        ? take(conv_primitive<dnnl::deconvolution_forward>(
                              key, dnnl::algorithm::deconvolution_direct, src,
                              dw_any, bias ? &db : nullptr, dst, g, dil))
                        : take(conv_primitive<dnnl::convolution_forward>(
                              key, dnnl::algorithm::convolution_direct, src,
                              dw_any, bias ? &db : nullptr, dst, g, dil));
  if (!made || (is_reference(impl.c_str()) && !dense)) return false;

  set_threads_for_this_call();
  auto& e = engine();
  auto& s = stream();
  Storage x_scratch, w_scratch, y_scratch;
  dnnl::memory yu(dy, e, y.raw_data());
  dnnl::memory xk =
      in_layout(dnnl::memory(dx, e, handle(x)), src_chosen, x_scratch, true);
  dnnl::memory wk =
      in_layout(dnnl::memory(dw_user, e, handle(w)), w_chosen, w_scratch, true);
  dnnl::memory yk = in_layout(yu, dst_chosen, y_scratch, false);
  std::unordered_map<int, dnnl::memory> args = {
      {DNNL_ARG_SRC, xk}, {DNNL_ARG_WEIGHTS, wk}, {DNNL_ARG_DST, yk}};
  if (bias) {
    args.emplace(DNNL_ARG_BIAS, dnnl::memory(db, e, handle(*bias)));
  }
  prim->execute(s, args);
  if (yk.get_desc() != dy) dnnl::reorder(yk, yu).execute(s, yk, yu);
  s.wait();
  return true;
}

}  // namespace tessel::cpu::onednn
